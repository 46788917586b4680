// The pipeline of one running search, built once from its compiled query: each module's stage, chained so that an
// entry goes from one to the next by direct calls, and the renderer's records out of the end.
//
// Guarantees:
// - Entries are pushed in time order; a stage sees them in that order.
// - The head of the query that is made of worker filters (CompiledModule.workerFilter: plain greps and regular
//   expressions without captures) may be matched elsewhere: push(e, passed) then skips those stages and takes
//   `passed` (how many of them the entry passed, in order) as their verdict.
// - flush() is called once, after the last entry: condensing stages emit what they hold, in module order.
import type { Entry } from './entry'
import type { RunEnv, Sink, Stage } from './module'
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

  constructor(
    readonly query: CompiledQuery,
    env: RunEnv,
    /** Receives each stored record the renderer makes. */
    private readonly onRecord: (record: string) => void,
    /** Sees each entry that reaches the renderer (tests). */
    private readonly onFinal?: (e: Entry) => void,
  ) {
    this.stages = query.modules.map((m) => m.stage(env))
    const render = query.renderer
    const renderStage = render.stage(env)
    const last: Sink = (e) => {
      this.emitted++
      this.onFinal?.(e)
      this.onRecord(render.record(e))
    }
    this.renderStage = renderStage
    this.toRecord = last
    const toRenderer: Sink = (e) => renderStage.push(e, last)
    this.sinks = new Array<Sink>(this.stages.length + 1)
    this.sinks[this.stages.length] = toRenderer
    for (let i = this.stages.length - 1; i >= 0; i--) {
      const stage = this.stages[i]!
      const next = this.sinks[i + 1]!
      this.sinks[i] = (e) => stage.push(e, next)
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
