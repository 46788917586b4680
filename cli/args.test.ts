// cli/args.ts against citty itself: on generated command lines over the kinds of options the commands declare, the
// command sees the same `args` (every spelling), runs the same subcommand, and fails with the same message.
import { expect, test } from 'bun:test'
import { type ArgsDef, type CommandDef, runCommand as cittyRun } from 'citty'
import fc from 'fast-check'
import { parseArgs, runCommand } from './args'

const ARGS = {
  query: { type: 'positional', required: true },
  extra: { type: 'positional', required: false, default: 'none' },
  'batch-name': { type: 'string' },
  rows: { type: 'string' },
  yes: { type: 'boolean', alias: 'y' },
  json: { type: 'boolean' },
  timestamps: { type: 'boolean', default: true },
} as const satisfies ArgsDef

/** What a command saw: its args (sorted, as JSON) or the error it met. */
async function seen(run: typeof cittyRun | typeof runCommand, rawArgs: string[]): Promise<string> {
  let got = ''
  const leaf: CommandDef<any> = { args: ARGS, run: (ctx) => void (got = `run ${JSON.stringify(Object.fromEntries(Object.entries(ctx.args).sort()))}`) }
  const root: CommandDef<any> = { args: { server: { type: 'string' } }, subCommands: { leaf: () => Promise.resolve(leaf), other: { run: () => void (got = 'other') } } }
  try {
    await run(root, { rawArgs })
  } catch (e) {
    got = `${(e as Error).name}: ${(e as Error).message.replace(/\u001b\[[0-9;]*m/g, '')}`
  }
  return got
}

const word = fc.constantFrom(
  'q', 'two words', '-', '--', '-y', '-yj', '--yes', '--yes=false', '--json', '--no-json', '--no-yes', '--timestamps=false',
  '--no-timestamps', '--batch-name', '--batch-name=b', '--rows', '--rows=7', '12', '--unknown', '--other=x',
  'leaf', 'other', '--server', '--server=s',
)

test('generated command lines: the same args, subcommand and errors as citty', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(word, { maxLength: 9 }), async (rest) => {
      const rawArgs = ['leaf', ...rest]
      expect(await seen(runCommand, rawArgs)).toBe(await seen(cittyRun, rawArgs))
    }),
    { numRuns: 2000 },
  )
  // and from the root: options before the subcommand's name, an unknown command, none at all
  // (one spelling per option: given both `--batch-name` and `--batchName`, citty keeps one under each spelling)
  for (const rawArgs of [['--server', 'x', 'leaf', 'q'], ['--server=x', 'other'], ['frob'], [], ['--json'], ['leaf', 'q', '--batchName', 'b'], ['leaf', '--batchName=c', 'q']]) {
    expect(await seen(runCommand, rawArgs)).toBe(await seen(cittyRun, rawArgs))
  }
})

test('an option declared as `no-...` is that option (citty read --no-history as the negation of an undeclared one)', () => {
  const args = parseArgs(['q', '--no-history'], { query: { type: 'positional' }, 'no-history': { type: 'boolean' } })
  expect(args).toMatchObject({ query: 'q', 'no-history': true, noHistory: true })
  expect(parseArgs(['q'], { query: { type: 'positional' }, 'no-history': { type: 'boolean' } })['no-history']).toBeUndefined()
})
