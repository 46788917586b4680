// What a module is to the engine. Adding a module is one file (its definition: how it reads its arguments, its
// normal form and its stage) and one line in registry.ts.
//
// A stage sees the entries in time order, one at a time (push), and passes on what it wants to the next stage
// (out): 0, 1 or many entries, changed or not. A condensing stage keeps state and passes on at the end (flush) or per
// time window. The renderer is the last module: it turns each final entry into a stored record (render/).
import type { Entry } from './entry'
import { QueryError } from './errors'
import type { Token } from './lex'
import type { ModuleCall } from './parse'
import type { LazyRegex } from './regex'

export type Sink = (e: Entry) => void

/** Entries a condensing stage passes on between two yields of its flush (see Stage.flush). */
export const FLUSH_SLICE = 256

export interface Stage {
  /** Handles one entry: calls out for every entry it passes on (none drops it). */
  push(e: Entry, out: Sink): void
  /**
   * The input has ended: passes on what the stage still holds. A stage that may hold many entries answers an
   * iterator that passes them on a slice at a time (see FLUSH_SLICE) and yields between slices, so that the search
   * gives the event loop a turn between slices rather than holding it for the whole emission.
   */
  flush?(out: Sink): void | Iterable<unknown>
  /** True once nothing more will pass (a limit reached): the scan may end early. */
  done?(): boolean
}

/** The platform's kinds of module (what /api/info/searchmodules and the parse answer report). */
export type ModuleKind = 'extraction' | 'filter' | 'processing' | 'condensing' | 'render'

/** What a running search gives its stages: loaded before the scan starts (see CompiledModule.needs). */
export interface RunEnv {
  /** The contents of the resources the query names (lookup tables), by the name the query gives. */
  resources: ReadonlyMap<string, Uint8Array>
  /** The auto-extractor definitions that apply, by tag name (the `ax` module). */
  extractors: ReadonlyMap<string, AutoExtractorDefinition>
  /** Distinct keys a condensing module may track (stats -maxtracked overrides it per module). */
  maxTracked: number
  /** Milliseconds since the epoch: the search's range, for modules that need it (chart windows, stats `over`). */
  start: number
  end: number
  /** The query's renderer (`text`, `table`, `chart`...): condensing modules choose their mode by it (stats: temporal for charts). */
  renderer: string
  /**
   * Values this stage sets that nothing after it reads (a stats after it replaces every value: Pipeline's
   * unreadAfter): an extraction may leave them unset. Its filters on them still apply.
   */
  unread?: ReadonlySet<string>
}

/** An auto-extractor as `ax` applies it: the module, its flags and its arguments, for one tag. */
export interface AutoExtractorDefinition {
  tag: string
  module: string
  params: string
  args: string
}

/** A module's call after its arguments were read and checked. */
export interface CompiledModule {
  name: string
  kind: ModuleKind
  /** The module as the normal form (EffectiveQuery) writes it: its name and its arguments, normalised. */
  text: string
  /** Enumerated values the module reads and those it sets (the parse answer's ModuleHints). */
  consumes: string[]
  produces: string[]
  /** What must be loaded before it runs: resources by name, or the auto-extractors of the query's tags. */
  needs?: { resources?: string[]; extractors?: boolean }
  /**
   * True when a stage keeps no state across entries (extraction, filtering, per-entry processing). The leading
   * stateless modules of a query run on worker threads (server/search/match.ts), compiled there from the normal form
   * (`text`): a stateless module's text must compile to the same module, and its stage must depend on nothing but
   * the entry and the RunEnv.
   */
  stateless: boolean
  /** A condensing module's time window in ms (stats `over`): the finest zoom its results allow (MinZoomWindow). */
  windowMs?: number
  /**
   * True when the entries the stage emits carry only values it sets itself (stats and its shorthands): of the values
   * set before it, nothing but `consumes` is ever read. A head run elsewhere then sends back only those.
   */
  replacesValues?: boolean
  /**
   * True when this call's stage is one linear pass over the entry with a small constant, though its module's may not
   * be in general (a regex whose pattern runs on the fast linear path): it may run on the thread that feeds the
   * pipeline (Pipeline.headWorthSending).
   */
  inline?: boolean
  /** The stage of one running search. */
  stage(env: RunEnv): Stage
  /**
   * Set when the module is a pure filter that needs nothing but DATA: a plain literal (grep) or a regular expression
   * without captures. A leading plain grep lets the store skip entries without its text.
   */
  workerFilter?: { op: 'grep'; text: string } | { op: 'regex'; regex: LazyRegex }
}

/** What reading a module's arguments may use: its regular expressions are compiled later, off the request thread. */
export interface CompileContext {
  /** A regular expression argument (RE2 syntax) at `pos`: checked and compiled when the query is prepared. */
  regex(pattern: string, pos: number): LazyRegex
  /** The modules before this one (what they produce), for modules that check their inputs. */
  readonly previous: readonly CompiledModule[]
}

export interface ModuleDef {
  name: string
  kind: ModuleKind
  /** The help the clients list (GET /api/info/searchmodules): one paragraph, and examples. */
  info: string
  examples: string[]
  /** Reads a call's arguments; throws a QueryError (use argError) naming the argument that is wrong. */
  compile(call: ModuleCall, ctx: CompileContext): CompiledModule
}

/** A QueryError for a module's argument, at its position. */
export function argError(call: ModuleCall, reason: string, at?: Token | number): QueryError {
  const pos = typeof at === 'number' ? at : (at?.pos ?? call.argPos)
  return new QueryError(reason, pos, call.index, call.name)
}

/**
 * Splits a module's leading flags from the rest: `-x` flags, and `-x value` for the flags named in `withValue`.
 * Unknown flags are refused. Flags end at the first token that does not start with `-` or at a quoted string.
 */
export function readFlags(
  call: ModuleCall,
  known: { bool?: readonly string[]; withValue?: readonly string[] },
): { flags: Map<string, Token | true>; rest: Token[] } {
  const flags = new Map<string, Token | true>()
  const args = call.args
  let i = 0
  while (i < args.length) {
    const t = args[i]!
    if (t.kind !== 'word' || !/^-[A-Za-z]/.test(t.text)) break
    const name = t.text.slice(1)
    if (known.withValue?.includes(name)) {
      const v = args[i + 1]
      if (!v) throw argError(call, `-${name} needs a value`, call.end)
      flags.set(name, v)
      i += 2
    } else if (known.bool?.includes(name)) {
      flags.set(name, true)
      i++
    } else throw argError(call, `unknown flag ${t.text}`, t)
  }
  return { flags, rest: args.slice(i) }
}

/** The normal form of flags read by readFlags, in the order given. */
export function flagsText(flags: Map<string, Token | true>, quote: (s: string) => string): string[] {
  return [...flags].map(([k, v]) => (v === true ? `-${k}` : `-${k} ${quote(v.text)}`))
}

/** Runs a stage's flush to its end, all at once (tests, and callers that need no turns between slices). */
export function flushAll(stage: Stage, out: Sink): void {
  const steps = stage.flush?.(out)
  if (steps) for (const _ of steps);
}
