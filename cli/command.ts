// How every `quarry` command is declared: a citty CommandDef (run by cli/args.ts, its usage rendered by citty) plus
// what citty leaves to us: examples in --help, refusal of unknown options and surplus arguments (bad usage, exit 2,
// rather than silently ignored), integers, repeatable options and a rest of positional arguments.
import type { ArgDef, ArgsDef, CommandContext, CommandDef } from 'citty'
import { UsageError } from './errors'

export interface CommandSpec<T extends ArgsDef> {
  name: string
  description: string
  examples?: string[]
  args?: T
  /** Positional arguments after the declared ones are allowed (read them with `rest`). */
  variadic?: boolean
  run: (ctx: CommandContext<T>) => Promise<void> | void
}

/** Examples shown under --help, by command. */
export const EXAMPLES = new WeakMap<object, string[]>()

export function command<const T extends ArgsDef>(spec: CommandSpec<T>): CommandDef<T> {
  const def: CommandDef<T> = {
    meta: { name: spec.name, description: spec.description },
    args: spec.args,
    async run(ctx) {
      checkArgs(ctx.rawArgs, (spec.args ?? {}) as ArgsDef, spec.variadic ?? false)
      await spec.run(ctx)
    },
  }
  if (spec.examples) EXAMPLES.set(def, spec.examples)
  return def
}

/** A command that only groups others (`quarry token ...`). */
export function group(name: string, description: string, subCommands: Record<string, CommandDef<any>>, examples?: string[]): CommandDef {
  const def: CommandDef = { meta: { name, description }, subCommands }
  if (examples) EXAMPLES.set(def, examples)
  return def
}

/** The aliases of an option (positionals have none). */
const aliases = (def: ArgDef): string[] => ('alias' in def && def.alias ? [def.alias].flat() : [])

const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)

function checkArgs(rawArgs: string[], args: ArgsDef, variadic: boolean) {
  const known = new Set<string>()
  let positionals = 0
  for (const [name, def] of Object.entries(args)) {
    if (def.type === 'positional') {
      positionals++
      continue
    }
    for (const n of [name, kebab(name), ...aliases(def)]) {
      known.add(n)
      if (def.type === 'boolean') known.add(`no-${n}`)
    }
  }
  let seen = 0
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i]!
    if (arg === '--') {
      seen += rawArgs.length - i - 1
      break
    }
    if (arg.startsWith('-') && arg !== '-') {
      const name = arg.replace(/^--?/, '').split('=')[0]!
      if (!known.has(name)) throw new UsageError(`unknown option ${arg.split('=')[0]}`)
      const def = Object.entries(args).find(([n, d]) => n === name || kebab(n) === name || aliases(d).includes(name))?.[1]
      if (def && def.type !== 'boolean' && !arg.includes('=')) {
        if (i + 1 >= rawArgs.length) throw new UsageError(`option ${arg} needs a value`)
        i++
      }
      continue
    }
    seen++
  }
  if (!variadic && seen > positionals) throw new UsageError(`too many arguments (expected at most ${positionals})`)
}

/** The option of every destructive command: go ahead without asking (without a terminal it is required). */
export const yesArg = {
  yes: { type: 'boolean', alias: 'y', description: 'Do not ask for confirmation (required when there is no terminal to ask on)' },
} as const

/** Positional arguments after the first `skip` ones (for variadic commands). */
export function rest(ctx: CommandContext<any>, skip: number): string[] {
  return (ctx.args._ as string[]).slice(skip)
}

/** An integer argument from 1 up (UIDs, GIDs). */
export function positiveInt(what: string, raw: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 2147483647) throw new UsageError(`${what}: "${raw}" is not a positive integer`)
  return Number(raw)
}

/**
 * Every value of a repeatable option: `--perm A --perm B` and `--perm A,B` both give [A, B]
 * (citty itself keeps only the last occurrence).
 */
export function allValues(rawArgs: string[], name: string): string[] {
  const out: string[] = []
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i]!
    if (arg === '--') break
    if (arg === `--${name}`) out.push(rawArgs[++i] ?? '')
    else if (arg.startsWith(`--${name}=`)) out.push(arg.slice(name.length + 3))
  }
  return out.flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '')
}
