// The pipeline of one running search, built once from its compiled query: each module's stage, chained so that an
// entry goes from one to the next by direct calls, and the renderer's records out of the end.
//
// Guarantees:
// - Entries are pushed in time order; a stage sees them in that order.
// - The stateless head of the query (its leading modules with CompiledModule.stateless: extraction, filters,
//   per-entry processing) may run elsewhere, on another thread (HeadStages there, from the same normal form): what
//   comes out of it is pushed with push(e, true), which goes on from the first module after the head.
// - flush() is called once, after the last entry: condensing stages emit what they hold, in module order.
// - `stats` counts every entry at every boundary between stages (pipeline-stats.ts: bounded, by entry time); an
//   entry matched elsewhere counts at each head filter it reached. The rows reported are the query's modules, or the
//   renderer alone when the query has none (the clients read the last row's output as the entries out).
import type { Entry } from './entry'
import type { RunEnv, Sink, Stage } from './module'
import { PipelineStats } from './pipeline-stats'
import type { CompiledQuery } from './query'

export class Pipeline {
  private readonly stages: Stage[]
  private readonly sinks: Sink[]
  private readonly renderStage: Stage
  private readonly toRecord: Sink
  /** How many leading modules are worker filters (see workerFilters). */
  readonly filterHead: number
  /** How many leading modules are stateless (statelessHead): what may run elsewhere. */
  readonly head: number
  /** Entries that left the last module. */
  emitted = 0
  /** What went through each module, by time. */
  readonly stats: PipelineStats

  constructor(
    readonly query: CompiledQuery,
    env: RunEnv,
    /** Receives each stored record the renderer makes. */
    private readonly onRecord: (record: string) => void,
    /** Sees each entry that reaches the renderer (tests). */
    private readonly onFinal?: (e: Entry) => void,
  ) {
    this.stages = query.modules.map((m, i) => m.stage(envFor(query, i, env)))
    const render = query.renderer
    const n = this.stages.length
    const reported = n > 0 ? query.modules : [render]
    const stats = new PipelineStats(
      reported.map((m) => ({ name: m.name, args: m.text.slice(m.name.length).trim() })),
      reported.map((_, i) => (n > 0 ? i : n)),
      n + 2,
      env.start,
      env.end,
    )
    this.stats = stats
    const renderStage = render.stage(env)
    const last: Sink = (e) => {
      stats.count(n + 1, e)
      this.emitted++
      this.onFinal?.(e)
      this.onRecord(render.record(e))
    }
    this.renderStage = renderStage
    this.toRecord = last
    const toRenderer: Sink = (e) => {
      stats.count(n, e)
      renderStage.push(e, last)
    }
    this.sinks = new Array<Sink>(n + 1)
    this.sinks[n] = toRenderer
    for (let i = n - 1; i >= 0; i--) {
      const stage = this.stages[i]!
      const next = this.sinks[i + 1]!
      this.sinks[i] = (e) => {
        stats.count(i, e)
        stage.push(e, next)
      }
    }
    let head = 0
    while (head < query.modules.length && query.modules[head]!.workerFilter) head++
    this.filterHead = head
    this.head = statelessHead(query)
  }

  /**
   * Whether the stateless head is worth running on another thread: it holds a module whose cost per entry may be
   * large (anything but INLINE_MODULES, whose work is one linear pass over the entry and cheaper here than the
   * hand-over).
   */
  headWorthSending(): boolean {
    return this.query.modules.slice(0, this.head).some((m) => !INLINE_MODULES.has(m.name) && !m.inline)
  }

  /**
   * The values of the head's output the rest of the pipeline reads, when it is known to read no others (the module
   * after the head replaces the values: stats, count...); null when every value may be read. A head run elsewhere
   * sends back only these: `regex ... | count` then moves no captures between threads.
   */
  headKeeps(): string[] | null {
    const next = this.query.modules[this.head]
    return next?.replacesValues ? next.consumes : null
  }

  /** The worker filters at the head of the query, in order (a leading plain grep lets the store skip entries). */
  workerFilters() {
    return this.query.modules.slice(0, this.filterHead).map((m) => m.workerFilter!)
  }

  /**
   * One entry in. `headPassed`: the entry came out of the stateless head run elsewhere (with the values it set): it
   * goes on from the first module after the head (its stats in the head: countHead).
   */
  push(e: Entry, headPassed = false): void {
    this.sinks[headPassed ? this.head : 0]!(e)
  }

  /**
   * The pipeline stats of entries whose head ran elsewhere: entry i reached the modules of the head up to
   * `reached[i]` (HeadStages.reached; what came out is counted as it is pushed). Counted with the entry as it was sent.
   */
  countHead(sent: readonly Pick<Entry, 'ts' | 'data'>[], reached: Uint16Array): void {
    for (let i = 0; i < sent.length; i++) {
      const last = Math.min(reached[i]!, this.head - 1)
      for (let k = 0; k <= last; k++) this.stats.count(k, sent[i]!)
    }
  }

  /** True once no further entry can come out (a limit reached): the scan may stop. */
  done(): boolean {
    for (const s of this.stages) if (s.done?.()) return true
    return false
  }

  /** The end of the input: every stage passes on what it holds, the first one first, all at once (tests, benches). */
  flush(): void {
    for (const _ of this.flushSteps());
  }

  /**
   * The end of the input, a slice at a time: every stage passes on what it holds, the first one first; each step
   * yields after a slice of entries went all the way through (a search takes a turn of the event loop between steps:
   * a condensing stage may hold a million keys).
   */
  *flushSteps(): Generator<void> {
    const all = [...this.stages.map((stage, i) => [stage, this.sinks[i + 1]!] as const), [this.renderStage, this.toRecord] as const]
    for (const [stage, out] of all) {
      const steps = stage.flush?.(out)
      if (steps) for (const _ of steps) yield
    }
  }
}

/**
 * Modules cheap enough per entry to run on the thread that feeds the pipeline (see Pipeline.headWorthSending): one
 * linear pass over the entry's bytes or values with a small constant and no regular expression (json: one scan of
 * the document, jsonscan.ts, or JSON.parse, both linear). The search's steps (STEP_MS, checked after every entry)
 * bound how long they hold the event loop, as for grep. Measured in process over 200,000 lines: kv itself took
 * 115-175 ms of CPU, handing the same entries to a worker and reading its answers back cost this thread about 1 s;
 * `json host | stats count by host` took 480-850 ms through a worker and 200-250 ms here.
 */
const INLINE_MODULES = new Set(['grep', 'kv', 'json', 'fields', 'csv', 'alias', 'require', 'upper', 'lower', 'enrich'])

/**
 * The values module `i` sets that no module after it reads: known when a module after it replaces every value
 * (CompiledModule.replacesValues: stats, count...) and the modules up to that one say what they read (consumes).
 * Empty when every value may be read (no such module: the renderer shows them all).
 */
export function unreadAfter(query: CompiledQuery, i: number): ReadonlySet<string> {
  const modules = query.modules
  const read = new Set<string>()
  for (let k = i + 1; k < modules.length; k++) {
    for (const name of modules[k]!.consumes) read.add(name)
    if (modules[k]!.replacesValues) return new Set(modules[i]!.produces.filter((name) => !read.has(name)))
  }
  return new Set()
}

/** The RunEnv of module i's stage: the search's, with the values it need not set (unreadAfter). */
function envFor(query: CompiledQuery, i: number, env: RunEnv): RunEnv {
  const unread = unreadAfter(query, i)
  return unread.size === 0 ? env : { ...env, unread }
}

/** How many leading modules of the query are stateless (CompiledModule.stateless). */
export function statelessHead(query: CompiledQuery): number {
  let n = 0
  while (n < query.modules.length && query.modules[n]!.stateless) n++
  return n
}

/**
 * The first `n` modules of a query, stateless, run apart from the rest (on a worker thread): an entry in, what comes
 * out of the last of them to `out`. Since they keep no state, entries of one search may go through several of these.
 */
export class HeadStages {
  private readonly first: Sink
  /** The deepest module of the head the last entry pushed (or one made from it) reached: its pipeline stats. */
  reached = 0

  constructor(query: CompiledQuery, env: RunEnv, n: number, out: Sink) {
    if (n > statelessHead(query)) throw new Error(`the first ${n} modules are not all stateless`)
    let next: Sink = (e) => {
      this.reached = n
      out(e)
    }
    for (let i = n - 1; i >= 0; i--) {
      const stage = query.modules[i]!.stage(envFor(query, i, env))
      const after = next
      next =
        i === 0
          ? (e) => stage.push(e, after)
          : (e) => {
              if (this.reached < i) this.reached = i
              stage.push(e, after)
            }
    }
    this.first = next
  }

  push(e: Entry): void {
    this.reached = 0
    this.first(e)
  }
}
