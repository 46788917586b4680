#!/usr/bin/env bun
// `quarry`: the server (`serve`) and the operator tool, which talks to a Quarry server over its HTTP API only.
// Global options may stand anywhere on the command line and also come from the environment. Exit codes: 0 done,
// 1 the server refused (its `Error` is printed) or the command failed, 2 bad usage. Never a stack trace.
import type { CommandDef } from 'citty'
import pkg from '../package.json'
import { runCommand } from './args'
import { EXAMPLES, command } from './command'
import { type Globals, setGlobals } from './context'
import { ApiError, CliError, EXIT_FAILURE, EXIT_USAGE, UsageError } from './errors'
import { takeLauncherPid, watchLauncher } from './launcher'
import { isTerminal, writeErr, writeOut } from './stdio'

const GLOBAL_OPTIONS = {
  server: { type: 'string', valueHint: 'URL', description: 'Quarry server (env QUARRY_URL; default: the last login, else http://127.0.0.1:8080)' },
  token: { type: 'string', valueHint: 'SECRET', description: 'API token, sent as Service-Token instead of the saved login (env QUARRY_TOKEN)' },
  ca: { type: 'string', valueHint: 'FILE', description: 'PEM file of the CA (or certificate) an https server is checked against, instead of the system store (env QUARRY_CA)' },
  json: { type: 'boolean', description: 'Machine output: the server\'s JSON answer, no progress bars' },
} as const

/**
 * The global options each command takes, for completion: the commands that act on this host (the server itself, its
 * store, the completion script) use no server, token or CA; the rest use them all.
 */
const LOCAL_COMMANDS: Record<string, string[]> = { ' serve': [], ' migrate': ['--json'], ' admin': [], ' completion': [] }
function globalsOf(path: string): string[] {
  const local = Object.entries(LOCAL_COMMANDS).find(([p]) => path === p || path.startsWith(`${p} `))
  return local ? local[1] : Object.keys(GLOBAL_OPTIONS).map((o) => `--${o}`)
}

let serving = false
/** The npm launcher that started this process (cli/quarry.cjs), taken out of the environment before anything reads it. */
const launcherPid = takeLauncherPid()

const serve = command({
  name: 'serve',
  description: 'Start the server (configured by QUARRY_* environment variables, see README)',
  examples: ['QUARRY_DATA_DIR=/var/lib/quarry QUARRY_LISTEN=0.0.0.0:8080 quarry serve'],
  async run() {
    serving = true
    if (launcherPid !== undefined) watchLauncher(launcherPid)
    const { main } = await import('../server/main')
    await main()
  },
})

const completion = command({
  name: 'completion',
  description: 'Print a shell completion script for bash or zsh',
  examples: ['source <(quarry completion bash)     # in ~/.bashrc', 'source <(quarry completion zsh)      # in ~/.zshrc, after compinit'],
  args: { shell: { type: 'positional', required: true, valueHint: 'bash|zsh', description: 'bash or zsh' } },
  async run({ args }) {
    if (args.shell !== 'bash' && args.shell !== 'zsh') throw new UsageError('name the shell: quarry completion bash|zsh')
    const { bashScript, commandTree, zshScript } = await import('./completion')
    const tree = await commandTree(cli, globalsOf)
    writeOut(args.shell === 'bash' ? bashScript(tree) : zshScript(tree))
  },
})

export const cli: CommandDef<any> = {
  meta: { name: 'quarry', version: pkg.version, description: 'Quarry web server and operator tool' },
  args: GLOBAL_OPTIONS,
  subCommands: {
    serve,
    login: () => import('./commands/auth').then((m) => m.login),
    logout: () => import('./commands/auth').then((m) => m.logout),
    whoami: () => import('./commands/auth').then((m) => m.whoami),
    token: () => import('./commands/tokens').then((m) => m.default),
    user: () => import('./commands/users').then((m) => m.default),
    group: () => import('./commands/groups').then((m) => m.default),
    search: () => import('./commands/search').then((m) => m.default),
    ingest: () => import('./commands/ingest').then((m) => m.ingest),
    entries: () => import('./commands/entries').then((m) => m.default),
    admin: () => import('./commands/admin').then((m) => m.default),
    migrate: () => import('./commands/migrate').then((m) => m.default),
    completion,
  },
}
EXAMPLES.set(cli, ['quarry login admin', 'quarry user list', 'quarry --json token list', 'QUARRY_TOKEN=... quarry whoami'])

/** Quarry's licence, by its SPDX id: package.json's `license`, which the LICENSE file beside it holds in full. */
export const LICENSE = (pkg as { license?: string }).license ?? 'Apache-2.0'

/** `quarry --version`: the name and version on the first line, the licence on the second. */
export function versionText(): string {
  return `quarry ${pkg.version}\nLicense: ${LICENSE}\n`
}

/** Takes the global options out of argv (anywhere before `--`); the environment fills what is not given. */
export function extractGlobals(argv: string[], env: Record<string, string | undefined>): { globals: Globals; rest: string[] } {
  const globals: Globals = { server: env.QUARRY_URL || undefined, token: env.QUARRY_TOKEN || undefined, ca: env.QUARRY_CA || undefined, json: false }
  const rest: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--') {
      rest.push(...argv.slice(i))
      break
    }
    const m = /^--(server|token|ca|json)(?:=(.*))?$/.exec(arg)
    if (!m) {
      rest.push(arg)
      continue
    }
    const [, name, inline] = m
    if (name === 'json') {
      globals.json = inline === undefined || inline !== 'false'
      continue
    }
    const value = inline ?? argv[++i]
    if (value === undefined || value === '') throw new UsageError(`option --${name} needs a value`)
    globals[name as 'server' | 'token' | 'ca'] = value
  }
  return { globals, rest }
}

async function resolveValue<T>(v: T | Promise<T> | (() => T | Promise<T>)): Promise<T> {
  return typeof v === 'function' ? await (v as () => T | Promise<T>)() : await v
}

/** The command the words of argv lead to, with its full name ("quarry user groups"). */
async function commandAt(argv: string[]): Promise<{ cmd: CommandDef<any>; name: string }> {
  let cmd: CommandDef<any> = cli
  let name = 'quarry'
  for (const word of argv) {
    if (word === '--') break
    if (word.startsWith('-')) continue
    const subs = (await resolveValue(cmd.subCommands)) as Record<string, CommandDef<any>> | undefined
    if (!subs || !(word in subs)) break
    cmd = await resolveValue(subs[word]!)
    name = `${name} ${word}`
  }
  return { cmd, name }
}

const stripAnsi = (s: string) => s.replace(/\u001b\[[0-9;]*m/g, '')

async function usage(argv: string[], tty: boolean): Promise<string> {
  const { cmd, name } = await commandAt(argv)
  const parentName = name.split(' ').slice(0, -1).join(' ')
  const parent: CommandDef = { meta: { name: parentName, version: pkg.version } }
  // citty renders the usage; it is loaded for that only (cli/args.ts runs the commands)
  const { renderUsage } = await import('citty')
  let text = await renderUsage(cmd, parentName ? parent : undefined)
  if (cmd !== cli) {
    text += `\n\nGLOBAL OPTIONS\n\n${Object.entries(GLOBAL_OPTIONS)
      .map(([n, d]) => `  --${n}${'valueHint' in d ? `=<${d.valueHint}>` : ''}`.padEnd(22) + `  ${d.description}`)
      .join('\n')}`
  }
  const examples = EXAMPLES.get(cmd)
  if (examples?.length) text += `\n\nEXAMPLES\n\n${examples.map((e) => `  $ ${e}`).join('\n')}`
  text = text.split('\n').map((l) => l.trimEnd()).join('\n').replace(/\n{3,}/g, '\n\n')
  return `${tty ? text : stripAnsi(text)}\n`
}

/** Runs the command line; answers the exit code (undefined while `serve` keeps running). */
export async function run(argv: string[], env: Record<string, string | undefined> = process.env): Promise<number | undefined> {
  let words = argv
  try {
    const { globals, rest } = extractGlobals(argv, env)
    words = rest
    const beforeDashes = rest.slice(0, rest.includes('--') ? rest.indexOf('--') : undefined)
    if (beforeDashes.includes('--help') || beforeDashes.includes('-h')) {
      writeOut(await usage(rest, isTerminal(1)))
      return 0
    }
    if (rest.length === 1 && (rest[0] === '--version' || rest[0] === '-v')) {
      writeOut(versionText())
      return 0
    }
    setGlobals(globals)
    if (rest.length === 0) {
      writeErr(await usage([], isTerminal(2)))
      return EXIT_USAGE
    }
    await runCommand(cli, { rawArgs: rest })
    return serving ? undefined : 0
  } catch (e) {
    const err = e as Error
    if (err instanceof UsageError || err?.name === 'CLIError') {
      const { name } = await commandAt(words).catch(() => ({ name: 'quarry' }))
      writeErr(`quarry: ${stripAnsi(err.message).replace(/\.$/, '')}\nRun \`${name} --help\` for usage.\n`)
      return EXIT_USAGE
    }
    if (err instanceof ApiError || err instanceof CliError) {
      writeErr(`quarry: ${err.message}\n`)
      return EXIT_FAILURE
    }
    // Anything unforeseen: its message only (QUARRY_DEBUG=1 shows the stack for a bug report).
    writeErr(`quarry: ${err?.message ?? String(e)}\n`)
    if (env.QUARRY_DEBUG) writeErr(`${err?.stack}\n`)
    return EXIT_FAILURE
  }
}

if (import.meta.main) {
  const code = await run(process.argv.slice(2))
  if (code !== undefined) process.exitCode = code
}
