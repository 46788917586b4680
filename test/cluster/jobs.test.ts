// The periodic jobs of a cluster (server/runtime/jobs.ts): each cluster-wide job runs on exactly one replica at a time, and
// moves to a survivor when its replica dies. Leases of 2 s and sweeps (and compactions) every second, so that this
// takes seconds.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type Cluster, type Replica, startCluster } from './harness'

const TTL_MS = 2000
const CLUSTER_JOBS = ['blob-sweep', 'notification-sweep', 'orphaned-searches', 'retention-sweep', 'segment-compaction', 'session-sweep']
/**
 * Jobs that do not run every second here: the blob sweep (at takeover, then every 6 h), the orphan check (every 10 s),
 * the retention sweep (at takeover, then every hour).
 */
const SLOW_JOBS = new Set(['blob-sweep', 'orphaned-searches', 'retention-sweep'])

let cluster: Cluster

beforeAll(async () => {
  cluster = await startCluster({ env: { QUARRY_LEASE_TTL: '2s', QUARRY_SWEEP_INTERVAL: '1s', QUARRY_COMPACT_INTERVAL: '1s', QUARRY_LOG_LEVEL: 'debug' } })
}, 60_000)
afterAll(() => cluster?.stop(), 30_000)

/** The live replica whose lease-holder name is `holder` (its `listening` log line names it). */
const byHolder = (holder: unknown) => cluster.replicas.find((r) => r.alive && r.lines.find((l) => l.msg === 'listening')?.replica === holder)

/** Log lines of every replica since `since` (a count of lines per replica) with message `msg` and job `job`. */
function runs(msg: string, job: string, since: Map<Replica, number> = new Map()) {
  return cluster.replicas.flatMap((r) => r.lines.slice(since.get(r) ?? 0).filter((l) => l.msg === msg && l.job === job).map(() => r.name))
}
const mark = () => new Map(cluster.replicas.map((r) => [r, r.lines.length]))

async function until<T>(what: string, get: () => Promise<T | undefined> | T | undefined, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await get()
    if (v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(100)
  }
}

/** The live replica holding `job`'s lease, by the leases table. */
async function holderOf(job: string): Promise<Replica | undefined> {
  const [row] = await cluster.rows('SELECT holder, expires_at FROM leases WHERE name = ?', [job])
  return row ? byHolder(row.holder) : undefined
}

describe('cluster: periodic jobs', () => {
  test('each cluster-wide job runs on exactly one replica at a time', async () => {
    const holders = await until('every job to have a holder', async () => {
      const found = await Promise.all(CLUSTER_JOBS.map(holderOf))
      return found.every((r) => r !== undefined) ? found : undefined
    })
    expect((await cluster.rows('SELECT name FROM leases ORDER BY name')).map((r) => r.name)).toEqual(CLUSTER_JOBS)
    // the blob sweep ran once, at the start of its holder: not once per replica
    await until('the blob sweep', () => (runs('periodic job ran', 'blob-sweep').length > 0 ? true : undefined))
    expect(runs('periodic job ran', 'blob-sweep')).toEqual([holders[0]!.name])
    expect(cluster.replicas.flatMap((r) => r.lines.filter((l) => l.msg === 'blob sweep'))).toHaveLength(1)
    // the sweeps every second: three seconds of runs, all by their holder
    const from = mark()
    await Bun.sleep(3000)
    for (const [i, job] of CLUSTER_JOBS.entries()) {
      if (SLOW_JOBS.has(job)) continue
      const by = runs('periodic job ran', job, from)
      expect(by.length).toBeGreaterThanOrEqual(1)
      expect(new Set(by)).toEqual(new Set([holders[i]!.name]))
      // no run overlapped another: at most one per second and the three seconds (with a tick of slack)
      expect(by.length).toBeLessThanOrEqual(4)
    }
  }, 30_000)

  test('the jobs of a killed replica move to one survivor, within the lease time; the restarted replica does not take them back', async () => {
    const victim = await until('a holder of the session sweep', () => holderOf('session-sweep'))
    const held = (await cluster.rows('SELECT name, holder FROM leases')).filter((r) => byHolder(r.holder) === victim).map((r) => r.name as string)
    expect(held).toContain('session-sweep')
    const killedAt = Date.now()
    await cluster.kill(victim)
    const from = mark()
    for (const job of held) {
      const next = await until(`a survivor to take ${job}`, () => holderOf(job))
      expect(next).not.toBe(victim)
    }
    // the lease lapses after TTL_MS; a survivor asks every TTL_MS / 3 (generous bound for a loaded machine)
    expect(Date.now() - killedAt).toBeLessThan(TTL_MS * 4)
    const survivor = (await holderOf('session-sweep'))!
    await until('the session sweep to run on the survivor', () => (runs('periodic job ran', 'session-sweep', from).length >= 2 ? true : undefined))
    expect(new Set(runs('periodic job ran', 'session-sweep', from))).toEqual(new Set([survivor.name]))
    if (held.includes('blob-sweep')) expect(runs('periodic job ran', 'blob-sweep', from)).toEqual([(await holderOf('blob-sweep'))!.name])

    await cluster.restart(victim)
    const after = mark()
    await Bun.sleep(TTL_MS)
    expect(await holderOf('session-sweep')).toBe(survivor)
    expect(runs('periodic job ran', 'session-sweep', after).every((name) => name === survivor.name)).toBe(true)
    expect(runs('periodic job lease taken', 'session-sweep', after)).toEqual([])
  }, 40_000)

  test('a replica stopped cleanly gives its leases up at once', async () => {
    const holder = await until('a holder of the notification sweep', () => holderOf('notification-sweep'))
    const names = (await cluster.rows('SELECT name, holder FROM leases')).filter((r) => byHolder(r.holder) === holder).map((r) => r.name)
    holder.alive = false
    holder.proc.kill('SIGTERM')
    expect(await holder.proc.exited).toBe(0)
    // released (expires_at 0), or already taken by a survivor
    for (const name of names) {
      const [row] = await cluster.rows('SELECT holder, expires_at FROM leases WHERE name = ?', [name])
      expect(row!.expires_at === 0 || byHolder(row!.holder) !== undefined).toBe(true)
    }
    await cluster.restart(holder)
  }, 30_000)
})
