// The state of what this process depends on (the metadata store, the blob store), as the last operations and checks
// found it, for GET /api/health and the logs.
//
// Guarantees:
// - A dependency that starts failing is logged once at warn (with the first error), however many operations fail
//   during the outage; its recovery is logged once at info (with how long it failed). An operator sees each outage as
//   two lines per replica, not one line per failed request.
// - Reading the state touches nothing (liveness stays free).
import type { Logger } from './log'

export type DependencyName = 'store' | 'blobs'
export type DependencyState = 'ok' | 'failing' | 'unknown'

const LABELS: Record<DependencyName, string> = { store: 'the metadata store', blobs: 'the blob store' }

export class Dependencies {
  private readonly state = new Map<DependencyName, { failing: boolean; since: number }>()

  constructor(
    private readonly log: Logger,
    private readonly clock: () => number = Date.now,
  ) {}

  /** An operation on `name` succeeded (or the store answered with a refusal of its own: it is up). */
  ok(name: DependencyName): void {
    const was = this.state.get(name)
    if (was && !was.failing) return
    const now = this.clock()
    this.state.set(name, { failing: false, since: now })
    if (was) this.log.info(`${LABELS[name]} answers again`, { dependency: name, failedMs: now - was.since })
  }

  /** An operation on `name` failed because of the dependency itself (no answer, refused connection, a 5xx). */
  failed(name: DependencyName, error: unknown): void {
    if (this.state.get(name)?.failing) return
    this.state.set(name, { failing: true, since: this.clock() })
    this.log.warn(`${LABELS[name]} is failing: requests that need it fail until it answers again`, {
      dependency: name,
      error: (error instanceof Error ? error.message : String(error)).split('\n')[0]!.slice(0, 200),
    })
  }

  /** Each dependency's state as last seen: 'unknown' before anything used or checked it. */
  states(): Record<DependencyName, DependencyState> {
    const of = (name: DependencyName): DependencyState => {
      const s = this.state.get(name)
      return s === undefined ? 'unknown' : s.failing ? 'failing' : 'ok'
    }
    return { store: of('store'), blobs: of('blobs') }
  }
}
