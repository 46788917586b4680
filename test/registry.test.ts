// The replica registry forgets replicas that are gone (server/cluster/index.ts): every heartbeat of a live replica
// sweeps the rows of replicas whose last heartbeat is older than FORGET_MS (10 minutes), with the search records they
// held; a replica that is merely late stays registered (and is no longer listed as live once 3 heartbeats late).
// Through the real store of the pass (SQLite, or PostgreSQL with QUARRY_TEST_STORE=pg), a real SearchManager, and
// the Cluster's own heartbeat timer on a clock the test moves.
import { afterAll, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Cluster, HEARTBEAT_MS, LIVE_HEARTBEATS } from '../server/cluster'
import { createDiskBlobStore } from '../server/blob'
import { createLogger } from '../server/runtime/log'
import { SearchManager } from '../server/search/manager'
import { openTestStore } from './helpers'

const tmp = mkdtempSync(join(tmpdir(), 'quarry-registry-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

const FORGET_MS = 10 * 60_000

async function until(what: string, check: () => Promise<boolean>) {
  const deadline = Date.now() + 30_000
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await Bun.sleep(20)
  }
}

test('a replica gone for FORGET_MS is removed from the registry with its search records; a late one is kept', async () => {
  mkdirSync(join(tmp, 'data'), { recursive: true })
  const { store, rows } = await openTestStore(join(tmp, 'data'))
  const log = createLogger('error', () => {})
  let now = Date.parse('2026-06-01T00:00:00Z')
  const blobs = await createDiskBlobStore({ dataDir: join(tmp, 'data') })
  const manager = new SearchManager({ entries: store.entries, searches: store.searches, blobs, log, clock: () => now, dataDir: join(tmp, 'data', 'searches'), graceMs: 60_000, maxPerUser: 10 })
  const cluster = new Cluster({ repo: store.cluster, saved: store.searches, manager, log, clock: () => now, shared: true, secret: undefined, heartbeatMs: 25 })
  try {
    await cluster.start({ name: 'self:80', address: 'http://self:80', description: {} })
    const start = now
    // Two other replicas, registered as they would register themselves (after this one: SQLite's register of this
    // process forgets earlier runs' rows), each holding a search record.
    const other = (id: string, heartbeat: number) =>
      rows('INSERT INTO replicas (id, name, address, description, started, heartbeat) VALUES ($1, $2, $3, $4, $5, $6)'.replace(/\$\d/g, (m) => (store.kind === 'sqlite' ? '?' : m)), [
        id, `${id}:80`, `http://${id}:80`, '{}', start, heartbeat,
      ])
    await other('gone', start)
    await other('late', start)
    await store.cluster.putRecords([{ id: 'search-of-gone', owner: 'gone', uid: 1, gid: 0, started: start, data: '{}', updated: start }])
    const registered = async () => (await rows('SELECT id FROM replicas ORDER BY id')).map((r) => String(r.id))
    const records = async () => (await rows('SELECT id FROM search_records ORDER BY id')).map((r) => String(r.id))
    expect((await cluster.replicas()).map((r) => r.id).sort()).toEqual([cluster.id, 'gone', 'late'].sort())

    // 'late' beats again just before the bound passes for 'gone'; this replica's heartbeats go on meanwhile.
    now = start + FORGET_MS - 2
    await rows(`UPDATE replicas SET heartbeat = ${now} WHERE id = 'late'`)
    // Not yet past the bound: still registered, though 'gone' is not live (listed) any more. Two heartbeats of this
    // replica at times before the bound: the sweep of the first has run once the second is written.
    const beatAt = (t: number) => until(`a heartbeat at ${t}`, async () => Number((await rows(`SELECT heartbeat FROM replicas WHERE id = '${cluster.id}'`))[0]?.heartbeat) === t)
    await beatAt(now)
    now = start + FORGET_MS - 1
    await beatAt(now)
    expect((await registered()).sort()).toEqual([cluster.id, 'gone', 'late'].sort())
    expect((await cluster.replicas()).map((r) => r.id).sort()).toEqual([cluster.id, 'late'].sort())

    // Past the bound: the next heartbeat sweeps 'gone' and the records it held; 'late' (and this one) stay.
    now = start + FORGET_MS + 1
    await until('the gone replica is swept', async () => !(await registered()).includes('gone'))
    expect((await registered()).sort()).toEqual([cluster.id, 'late'].sort())
    expect(await records()).not.toContain('search-of-gone')
    // 'late' goes the same way once its own last heartbeat is FORGET_MS old.
    now = start + 2 * FORGET_MS
    await until('the late replica is swept', async () => !(await registered()).includes('late'))
    expect(await registered()).toEqual([cluster.id])
    expect(HEARTBEAT_MS * LIVE_HEARTBEATS).toBeLessThan(FORGET_MS)
  } finally {
    await cluster.stop()
    await manager.close()
    await store.close()
  }
}, 60_000)
