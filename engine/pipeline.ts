// The pipeline of one running search, built once from its compiled query: each module's stage, chained so that an
// entry goes from one to the next by direct calls, and the renderer's records out of the end.
//
// Guarantees:
// - Entries are pushed in time order; a stage sees them in that order.
// - The head of the query that is made of worker filters (CompiledModule.workerFilter: plain greps and regular
//   expressions without captures) may be matched elsewhere: push(e, passed) then skips those stages and takes
//   `passed` (how many of them the entry passed, in order) as their verdict.
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
  /** Entries that left the last module. */
  emitted = 0
  /** What went through each module, by time. */
  readonly stats: PipelineStats

  constructor(
    readonly query: CompiledQuery,
    env: RunEnv,
    /** Receives each stored record the renderer makes. */
    private readonly onRecord: (record: string) => void,
  ) {
    this.stages = query.modules.map((m) => m.stage(env))
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
  }

  /** The worker filters at the head of the query, in order. */
  workerFilters() {
    return this.query.modules.slice(0, this.filterHead).map((m) => m.workerFilter!)
  }

  /** One entry in; `passed`: how many head filters it passed when they were matched elsewhere. */
  push(e: Entry, passed?: number): void {
    if (passed === undefined) {
      this.sinks[0]!(e)
      return
    }
    // the head filters it reached (the first always; filter k when it passed the k before it)
    for (let k = 0; k <= passed && k < this.filterHead; k++) this.stats.count(k, e)
    if (passed < this.filterHead) return
    this.sinks[this.filterHead]!(e)
  }

  /** True once no further entry can come out (a limit reached): the scan may stop. */
  done(): boolean {
    for (const s of this.stages) if (s.done?.()) return true
    return false
  }

  /** The end of the input: every stage passes on what it holds, the first one first. */
  flush(): void {
    for (let i = 0; i < this.stages.length; i++) this.stages[i]!.flush?.(this.sinks[i + 1]!)
    this.renderStage.flush?.(this.toRecord)
  }
}
