// The periodic jobs that act on the shared store or blob store (expired sessions, notifications, the blob sweep).
// Guarantees:
// - A job runs only in the process that holds its lease (server/store/leases.ts), so on N replicas it runs on one at a
//   time, not N times. The lease is renewed every ttl/3 while the process lives (during a long run too); when the
//   holder dies, the lease expires after at most `ttlMs` and the next replica to ask (every ttl/3) takes the job
//   over. A clean shutdown gives its leases up, so a survivor takes them at its next ask.
// - One cadence for the whole cluster: a job runs when `everyMs` has passed since its last run on any replica (the
//   lease row keeps it), so a change of holder neither skips nor doubles a run. A job marked `atTakeover` also runs
//   as soon as a process takes its lease for the first time (the blob sweep: a restart after a restore sweeps).
// - A holder that stalls longer than the lease (a frozen VM) may still finish the run it had begun while another
//   replica starts one: every job here is idempotent (deletes what is expired or unreferenced), so an overlap costs
//   work, never correctness.
// The SQLite store has one process, whose holder name is fixed: it always holds every lease, at once after a crash.
import type { LeasesRepo } from '../store/leases'
import type { Logger } from './log'

export interface Job {
  name: string
  everyMs: number
  /** Run as soon as this process first takes the lease, whatever the last run (see above). */
  atTakeover?: boolean
  run(): Promise<unknown>
}

export interface JobsDeps {
  leases: LeasesRepo
  /** This process's name in the leases table (unique per process on PostgreSQL). */
  holder: string
  ttlMs: number
  log: Logger
}

export class Jobs {
  private readonly timers: ReturnType<typeof setInterval>[] = []
  private readonly held = new Set<string>()
  private readonly taken = new Set<string>()
  private readonly running = new Map<string, Promise<void>>()
  /** Jobs whose lease is being asked for: a slow store must not let two asks of one job overlap (and both start it). */
  private readonly asking = new Set<string>()
  private stopped = false

  constructor(private readonly deps: JobsDeps) {}

  /** Starts asking for the job's lease now and every min(everyMs, ttl/3). */
  start(job: Job): void {
    const period = Math.max(50, Math.min(job.everyMs, Math.floor(this.deps.ttlMs / 3)))
    const timer = setInterval(() => void this.tick(job), period)
    timer.unref()
    this.timers.push(timer)
    void this.tick(job)
  }

  /** Whether this process holds the job's lease (as of its last ask). */
  holds(name: string): boolean {
    return this.held.has(name)
  }

  private async tick(job: Job): Promise<void> {
    if (this.stopped || this.asking.has(job.name)) return
    this.asking.add(job.name)
    try {
      await this.ask(job)
    } finally {
      this.asking.delete(job.name)
    }
  }

  private async ask(job: Job): Promise<void> {
    const { leases, holder, ttlMs, log } = this.deps
    let lease: { lastRun: number; now: number } | undefined
    try {
      lease = await leases.acquire(job.name, holder, ttlMs)
    } catch (e) {
      // A store that does not answer: the lease will lapse, and whichever replica reaches the store takes the job.
      log.warn('periodic job lease could not be renewed', { job: job.name, error: e instanceof Error ? e.message : String(e) })
      return
    }
    if (this.stopped) return
    if (!lease) {
      if (this.held.delete(job.name)) log.info('periodic job lease lost', { job: job.name, holder })
      return
    }
    if (!this.held.has(job.name)) {
      this.held.add(job.name)
      log.info('periodic job lease taken', { job: job.name, holder })
    }
    const first = !this.taken.has(job.name)
    this.taken.add(job.name)
    if (this.running.has(job.name)) return // a long run goes on; this ask only renewed the lease
    if (!(first && job.atTakeover) && lease.now - lease.lastRun < job.everyMs) return
    const started = performance.now()
    // A failed run counts as a run too: it is tried again at the next interval, as a run that went well would be,
    // not at every ask (a blob sweep against an unreachable bucket would otherwise retry every few seconds).
    const run = Promise.resolve()
      .then(() => job.run())
      .then(
        () => log.debug('periodic job ran', { job: job.name, holder, ms: Math.round(performance.now() - started) }),
        (e: unknown) => log.error('periodic job failed', { job: job.name, error: e instanceof Error ? e.message : String(e) }),
      )
      .then(() => leases.ran(job.name, holder))
      .catch((e: unknown) => log.warn('periodic job run could not be recorded', { job: job.name, error: e instanceof Error ? e.message : String(e) }))
      .finally(() => this.running.delete(job.name))
    this.running.set(job.name, run)
  }

  /** Stops asking, waits up to `waitMs` for runs in progress, and gives up the leases held. */
  async stop(waitMs = 2000): Promise<void> {
    this.stopped = true
    for (const t of this.timers) clearInterval(t)
    await Promise.race([Promise.all(this.running.values()), Bun.sleep(waitMs)])
    await Promise.all([...this.held].map((name) => this.deps.leases.release(name, this.deps.holder).catch(() => undefined)))
    this.held.clear()
  }
}
