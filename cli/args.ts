// How a command line reaches a command: citty's runCommand and argument parsing, written again without what they
// load. citty parses with node:util's parseArgs, and importing node:util (with citty's case helpers) was the largest
// part of every command's start after node:tty (bench/README.md, "The CLI against the server's time"). Commands are
// still citty's CommandDef objects, and citty still renders --help (loaded then only). What a command sees is what
// citty gave it:
// - `args` has each declared option under its name and its camelCase and kebab-case forms (and its aliases); a
//   positional under its name, in declaration order; `_` the positional words; defaults applied;
// - `--name=value` and `--name value` for a string (the next word whatever it is); `--flag`, `--flag=false`, `-y`;
//   `--no-flag` sets `flag` false, wherever it stands; an undeclared option is kept as given (true, or its inline
//   value); `--` ends options;
// - a missing required positional, an unknown subcommand, a group named without its subcommand: errors named
//   CLIError with citty's messages (main.ts prints them as bad usage).
// One difference, deliberate: an option declared with a name starting with `no-` (`--no-history`) is that option,
// set true, where citty read it as the negation of an undeclared `history` and the command never saw it.
import type { ArgDef, ArgsDef, CommandContext, CommandDef } from 'citty'

/** A command line the commands cannot run: the name citty gives it, which main.ts reports as bad usage. */
export class CommandLineError extends Error {
  override name = 'CLIError'
}

type Resolvable<T> = T | Promise<T> | (() => T | Promise<T>)
async function resolve<T>(v: Resolvable<T>): Promise<T> {
  return typeof v === 'function' ? await (v as () => T | Promise<T>)() : await v
}

/** `batch-name` -> `batchName`. */
export const camelCase = (s: string): string => s.replace(/[-_]+([a-zA-Z0-9])/g, (_, c: string) => c.toUpperCase())
/** `batchName` -> `batch-name`. */
export const kebabCase = (s: string): string => s.replace(/([a-z0-9])([A-Z])/g, '$1-$2').replace(/_/g, '-').toLowerCase()

const aliasesOf = (def: ArgDef): string[] => ('alias' in def && def.alias ? [def.alias].flat() : [])
const takesValue = (def: ArgDef): boolean => def.type === 'string' || def.type === 'enum'

/** The parsed arguments of one command (the `args` of its context). */
export function parseArgs(rawArgs: string[], argsDef: ArgsDef): Record<string, unknown> & { _: string[] } {
  const declared = Object.entries(argsDef)
  // every spelling of every option, to the option's name
  const byName = new Map<string, string>()
  for (const [name, def] of declared) {
    if (def.type === 'positional') continue
    for (const n of [name, camelCase(name), kebabCase(name), ...aliasesOf(def)]) if (!byName.has(n)) byName.set(n, name)
  }
  const values: Record<string, unknown> = {}
  const positionals: string[] = []
  // `--no-flag` is taken out before anything else is read, as citty does: it is never an option's value, and it wins
  // wherever it stands
  const negated: string[] = []
  const words: string[] = []
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i]!
    if (arg === '--') {
      words.push(...rawArgs.slice(i))
      break
    }
    if (arg.startsWith('--no-') && !byName.has(arg.slice(2).split('=')[0]!)) negated.push(arg.slice(5))
    else words.push(arg)
  }
  const set = (spelled: string, value: unknown) => {
    const name = byName.get(spelled)
    if (name === undefined) {
      values[spelled] = value
      return
    }
    const def = argsDef[name]!
    // citty's coercions: a boolean given a value is true unless "false"; a string given none is ""
    values[name] = def.type === 'boolean' ? (typeof value === 'string' ? value !== 'false' : value) : takesValue(def) && typeof value === 'boolean' ? '' : value
  }
  for (let i = 0; i < words.length; i++) {
    const arg = words[i]!
    if (arg === '--') {
      positionals.push(...words.slice(i + 1))
      break
    }
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=')
      const spelled = eq === -1 ? arg.slice(2) : arg.slice(2, eq)
      const name = byName.get(spelled)
      if (eq !== -1) set(spelled, arg.slice(eq + 1))
      else if (name !== undefined && takesValue(argsDef[name]!)) set(spelled, i + 1 < words.length ? words[++i]! : true)
      else set(spelled, true)
      continue
    }
    if (arg.startsWith('-') && arg.length > 1) {
      // -y, -yv (flags together), -xVALUE or -x VALUE (an option that takes a value)
      for (let j = 1; j < arg.length; j++) {
        const letter = arg[j]!
        const name = byName.get(letter)
        if (name !== undefined && takesValue(argsDef[name]!)) {
          set(letter, j + 1 < arg.length ? arg.slice(j + 1) : i + 1 < words.length ? words[++i]! : true)
          break
        }
        set(letter, true)
      }
      continue
    }
    positionals.push(arg)
  }
  for (const spelled of negated) set(spelled, false)
  const out: Record<string, unknown> & { _: string[] } = { _: positionals }
  for (const [name, def] of declared) {
    if (def.type === 'positional') continue
    if (values[name] === undefined && def.default !== undefined) values[name] = def.default
  }
  for (const [key, value] of Object.entries(values)) {
    const name = byName.get(key)
    if (name === undefined) {
      out[key] = value
      continue
    }
    for (const n of [name, camelCase(name), kebabCase(name), ...aliasesOf(argsDef[name]!)]) out[n] = value
  }
  const unclaimed = [...positionals]
  for (const [name, def] of declared) {
    if (def.type === 'positional') {
      const word = unclaimed.shift()
      if (word !== undefined) out[name] = word
      else if (def.default === undefined && def.required !== false) throw new CommandLineError(`Missing required positional argument: ${name.toUpperCase()}`)
      else out[name] = def.default
    } else if (def.type === 'enum') {
      const given = out[name]
      if (given !== undefined && def.options?.length && !def.options.includes(given as string))
        throw new CommandLineError(`Invalid value for argument: --${name} (${given}). Expected one of: ${def.options.join(', ')}.`)
    } else if (def.required && out[name] === undefined) throw new CommandLineError(`Missing required argument: --${name}`)
  }
  return out
}

/** Where the subcommand's name stands in `rawArgs` (-1: none): the first word that is neither an option nor its value. */
function subCommandIndex(rawArgs: string[], argsDef: ArgsDef): number {
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i]!
    if (arg === '--') return -1
    if (arg.startsWith('-')) {
      const spelled = arg.replace(/^-{1,2}/, '')
      const valued = Object.entries(argsDef).some(([name, def]) => takesValue(def) && (camelCase(spelled) === camelCase(name) || aliasesOf(def).includes(spelled)))
      if (!arg.includes('=') && valued) i++
      continue
    }
    return i
  }
  return -1
}

/** Runs the command `rawArgs` lead to from `cmd`, as citty's runCommand does (its setup and cleanup hooks included). */
export async function runCommand(cmd: CommandDef<any>, opts: { rawArgs: string[] }): Promise<void> {
  const argsDef = ((await resolve(cmd.args ?? {})) ?? {}) as ArgsDef
  const context = { rawArgs: opts.rawArgs, args: parseArgs(opts.rawArgs, argsDef), cmd } as CommandContext<any>
  let failure: unknown
  try {
    if (typeof cmd.setup === 'function') await cmd.setup(context)
    const subCommands = (await resolve(cmd.subCommands ?? {})) as Record<string, Resolvable<CommandDef<any>>>
    if (Object.keys(subCommands).length > 0) {
      const at = subCommandIndex(opts.rawArgs, argsDef)
      const name = at === -1 ? undefined : opts.rawArgs[at]
      if (name !== undefined) {
        if (!Object.hasOwn(subCommands, name)) throw new CommandLineError(`Unknown command ${name}`)
        await runCommand(await resolve(subCommands[name]!), { rawArgs: opts.rawArgs.slice(at + 1) })
      } else if (!cmd.run) throw new CommandLineError('No command specified.')
    }
    if (typeof cmd.run === 'function') await cmd.run(context)
  } catch (e) {
    failure = e
  }
  if (typeof cmd.cleanup === 'function') await cmd.cleanup(context)
  if (failure !== undefined) throw failure
}
