// Issue 12, points 2 and 8: what one user can make the search engine hold. The regex cost bound and matching off the
// event loop; the cap on live searches per user; searches of ended sessions; the bounded statement cache.
import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Config } from '../../server/runtime/config'
import { SCAN_CACHE_SIZE } from '../../server/search/entries'
import { MatchBudgetError, MatchPool } from '../../server/search/match'
import { MAX_REGEX_PROGRAM } from '../../engine/regex'
import { type TestServer, type TestServerOptions, createTestServer, expectError, itemWorld, storeSnapshot } from '../../test/helpers'

const servers: TestServer[] = []
afterEach(() => {
  for (const s of servers.splice(0)) s.close()
})

async function setup(config: Partial<Config> = {}, search: TestServerOptions['search'] = undefined) {
  const s = await createTestServer(config, { search })
  servers.push(s)
  const w = await itemWorld(s)
  // the owner's searches are shared with the group of owner and member
  expect((await s.call('PUT', `/api/users/${w.owner.uid}/searchgroup`, { jwt: w.owner.jwt, json: { GID: w.gid } })).status).toBe(200)
  return w
}

const T0 = Date.parse('2026-01-01T00:00:00Z')
const entry = (i: number, tag = 'web', data: string | Buffer = `line ${i}`) => ({
  TS: new Date(T0 + i * 1000).toISOString(),
  Tag: tag,
  SRC: '192.0.2.7',
  Data: Buffer.from(data).toString('base64'),
})

async function ingest(s: TestServer, entries: unknown[]) {
  const res = await s.call('POST', '/api/ingest/json', { jwt: s.adminJwt, json: entries })
  expect({ status: res.status, text: res.text.slice(0, 200) }).toMatchObject({ status: 200 })
}

async function launch(s: TestServer, jwt: string, query: string, extra: Record<string, unknown> = {}) {
  return s.call('POST', '/api/searchctrl/launch', { jwt, json: { SearchString: query, ...extra } })
}

async function launched(s: TestServer, jwt: string, query: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await launch(s, jwt, query, extra)
  expect({ status: res.status, text: res.text }).toMatchObject({ status: 200 })
  return res.body.SearchID as string
}

const all = async (s: TestServer, jwt = s.adminJwt) =>
  (await s.call('GET', '/api/searchctrl/all', { jwt })).body as { ID: string; State: string }[]
const workFiles = (s: TestServer) => (existsSync(join(s.dir, 'searches')) ? readdirSync(join(s.dir, 'searches')).sort() : [])
const details = async (s: TestServer, jwt: string, id: string) => (await s.call('GET', `/api/searchctrl/${id}/details`, { jwt })).body

/** The largest entry ingest takes in one body of the configured limit (its base64 in a one-element JSON array). */
function largestEntrySize(s: TestServer): number {
  const overhead = JSON.stringify([entry(0, 'web', '')]).length
  return Math.floor((s.config.maxBodyBytes - overhead) / 4) * 3
}

/** The worst pattern the bound accepts (`(?:a?){k}a{k}[^a]`, a DFA-defeating shape: cost per byte grows with k²). */
const WORST_K = Math.floor((MAX_REGEX_PROGRAM - 3) / 3)
const WORST = `(?:a?){${WORST_K}}a{${WORST_K}}[^a]`

describe('regex cost', () => {
  test('a pattern whose program is over the bound is 400 with its position, and nothing is launched or recorded', async () => {
    const { s, owner } = await setup()
    const before = storeSnapshot(s)
    for (let [query, position] of <[string, number][]>[
      ['tag=web regex "(?:a?){1000}a{1000}[^a]"', 14],
      // the bound is on the query's regexes together
      [`tag=web regex "a{${MAX_REGEX_PROGRAM - 10}}" | regex "b{20}"`, -1],
    ]) {
      if (position < 0) position = query.indexOf('"b{20}"')
      const res = await launch(s, owner.jwt, query)
      expectError(res, 400, { Position: position })
      expect(res.body.Error).toContain(`more than the ${MAX_REGEX_PROGRAM} allowed`)
    }
    expect(storeSnapshot(s)).toEqual(before)
    expect(await all(s)).toEqual([])
    expect(workFiles(s)).toEqual([])
  })

  test('/api/test answers within 100 ms while the worst accepted pattern runs over the largest entry ingest accepts', async () => {
    const { s, owner } = await setup()
    const size = largestEntrySize(s)
    expect(size).toBeGreaterThan(3_000_000)
    // 24 of them: the match takes about 50 ms each on a quiet machine here (six gave 283 ms in all, under the 300 ms
    // this test needs to mean anything) and up to 0.8 s each under load
    const large = 24
    for (let i = 1; i <= large; i++) await ingest(s, [entry(i, 'web', Buffer.alloc(size, 'a'))])
    await ingest(s, [entry(large + 1, 'web', `${'a'.repeat(WORST_K)}b`), entry(large + 2, 'web', 'bbbb')])
    const id = await launched(s, owner.jwt, `tag=web regex "${WORST}"`)
    const latencies: number[] = []
    const started = performance.now()
    while ((await details(s, owner.jwt, id)).Finished === '0001-01-01T00:00:00Z') {
      const asked = performance.now()
      const res = await s.call('GET', '/api/test')
      latencies.push(performance.now() - asked)
      expect(res.status).toBe(200)
      await Bun.sleep(5)
    }
    const ran = performance.now() - started
    // The requests were answered while the match ran, which took several times the bound.
    expect(ran).toBeGreaterThan(300)
    expect(latencies.length).toBeGreaterThan(5)
    expect(Math.max(...latencies)).toBeLessThan(100)
    const d = await details(s, owner.jwt, id)
    expect(d.State).toBe('ACTIVE') // no ERROR: within the budget
    expect(d.ItemCount).toBe(1) // a's and a b
    console.log(`worst accepted regex over ${size} bytes: ${ran.toFixed(0)} ms; /api/test ${latencies.length} times, at most ${Math.max(...latencies).toFixed(1)} ms`)
  }, 120_000)

  test('a regex slow to compile is compiled on a worker: requests answer meanwhile; past the budget it is 400', async () => {
    // 550 alternatives of a Unicode class: a small program, but slow to compile: 100-200 ms on a quiet machine here,
    // seconds under load. The budget is well below the quiet time, so the refusal does not depend on the load.
    const { s, owner } = await setup({}, { compileBudgetMs: 40 })
    const query = `tag=web regex "(?:${'[\\\\pL]|'.repeat(550)}x)"`
    expect(query.length).toBeLessThan(4096)
    const before = storeSnapshot(s)
    let answered = false
    const launching = launch(s, owner.jwt, query).finally(() => (answered = true))
    const latencies: number[] = []
    while (!answered) {
      const asked = performance.now()
      expect((await s.call('GET', '/api/test')).status).toBe(200)
      latencies.push(performance.now() - asked)
      await Bun.sleep(2)
    }
    const res = await launching
    expectError(res, 400, { Position: 14 })
    expect(res.body.Error).toContain('takes more than 0.04 s to compile')
    expect(latencies.length).toBeGreaterThan(5)
    expect(Math.max(...latencies)).toBeLessThan(100)
    expect(storeSnapshot(s)).toEqual(before)
  })

  test('a batch past the matching budget stops its search with an error; the next search matches on a new worker', async () => {
    // 10 ms: the match of one 12 MB entry (a larger body limit than the default) takes several times that on the
    // fastest CPU seen here (83 ms; with a budget of 100 ms this test passed or failed by the machine)
    const pool = new MatchPool(1, 10)
    const { s, owner } = await setup({ maxBodyBytes: 16 << 20 }, { matcher: pool })
    await ingest(s, [entry(1, 'web', Buffer.alloc(largestEntrySize(s), 'a'))])
    await ingest(s, [entry(2, 'web', 'aaab')])
    const id = await launched(s, owner.jwt, `tag=web regex "${WORST}"`)
    await s.searches.settled()
    const d = await details(s, owner.jwt, id)
    expect({ State: d.State, ItemCount: d.ItemCount, Error: d.Error }).toEqual({
      State: 'ACTIVE/ERROR',
      ItemCount: 0,
      Error: expect.stringContaining('matching one batch of entries took longer than 0.01 s: the search was stopped'),
    })
    // An ordinary regex afterwards (over the small entry only) runs on a new worker and finds its entry (with room
    // for a cold worker on a loaded machine).
    pool.budgetMs = 60_000
    const next = await launched(s, owner.jwt, 'tag=web regex "a+b$"', { SearchStart: new Date(T0 + 2000).toISOString() })
    await s.searches.settled()
    expect(await details(s, owner.jwt, next)).toMatchObject({ State: 'ACTIVE', ItemCount: 1 })
  })

  test('a batch over the budget is refused also when its answer comes in before the budget timer ran (this thread was held)', async () => {
    // Under a heavy load a full run once saw the batch above accepted: the JS thread was held past the match, and
    // the worker's answer was then taken before the overdue timer. Held here on purpose: 3 s, while the match of
    // 16 MB by the worst pattern takes 0.1-0.3 s on a quiet machine (CPUs differ), ten times the 10 ms budget or more.
    const pool = new MatchPool(1, 60_000)
    try {
      // the worker has started (not within the budget below: a loaded machine may take longer to hand a batch over)
      await pool.run([{ op: 'grep', text: 'x' }], [new Uint8Array([1])])
      pool.budgetMs = 10
      const batch = pool.run([{ op: 'regex', pattern: WORST }], [Buffer.alloc(16 << 20, 'a')])
      batch.catch(() => undefined)
      const until = performance.now() + 3000
      while (performance.now() < until) {} // holds this thread: no timer runs meanwhile
      expect(await batch.then(() => 'accepted', (e: unknown) => (e instanceof MatchBudgetError ? e.message : String(e)))).toBe(
        'matching one batch of entries took longer than 0.01 s',
      )
    } finally {
      pool.close()
    }
  })

  test('stopping a search mid-match gives up the batch at once (its worker is terminated)', async () => {
    // A larger body limit than the default: the match of the one entry takes several seconds.
    const { s, owner } = await setup({ maxBodyBytes: 16 << 20 })
    await ingest(s, [entry(1, 'web', Buffer.alloc(largestEntrySize(s), 'a'))])
    const id = await launched(s, owner.jwt, `tag=web regex "${WORST}"`)
    await Bun.sleep(100) // the batch is on the worker now
    const stopped = performance.now()
    expect((await s.call('PUT', `/api/searchctrl/${id}/stop`, { jwt: owner.jwt })).status).toBe(200)
    await s.searches.settled()
    expect(performance.now() - stopped).toBeLessThan(1000) // the match alone takes 3 s or more
    expect(await details(s, owner.jwt, id)).toMatchObject({ State: 'ACTIVE', ItemCount: 0 }) // stopped, not failed
  })
})

describe('ingest of large entries', () => {
  test('the largest entry a body takes is checked in linear time (also past 8 MiB); bad base64 is still 400', async () => {
    const { s } = await setup()
    const body = JSON.stringify([entry(1, 'web', Buffer.alloc(largestEntrySize(s), 'q'))])
    const started = performance.now()
    const res = await s.call('POST', '/api/ingest/json', { jwt: s.adminJwt, body, headers: { 'content-type': 'application/json' } })
    expect(res.status).toBe(200)
    // The check took 1.7 s per MiB of entry on the event loop (5 s here); now the whole request takes well under 1 s.
    expect(performance.now() - started).toBeLessThan(3000)
    // Past 8 MiB the old check answered false.
    const big = await setup({ maxBodyBytes: 16 << 20 })
    await ingest(big.s, [entry(1, 'web', Buffer.alloc(largestEntrySize(big.s), 'q'))])
    const before = storeSnapshot(s)
    for (const data of ['YWJj=', 'YW=j', 'YWJ=YWJj', 'YWJj!A==', 'YQ', '====']) {
      const res = await s.call('POST', '/api/ingest/json', { jwt: s.adminJwt, json: [{ Tag: 'web', Data: data }] })
      expectError(res, 400)
      expect(res.body.Error).toBe('entry 0: Data is not base64')
    }
    expect(storeSnapshot(s)).toEqual(before)
    for (const data of ['', 'YQ==', 'YWI=', 'YWJj']) expect((await s.call('POST', '/api/ingest/json', { jwt: s.adminJwt, json: [{ Tag: 'web', Data: data }] })).status).toBe(200)
  }, 60_000)
})

describe('live searches per user', () => {
  test('past the cap a launch is 429 with an Error body and launches nothing; saved searches do not count', async () => {
    const { s, owner, member } = await setup({ maxSearchesPerUser: 3 })
    await ingest(s, [entry(1)])
    const ids = [await launched(s, owner.jwt, 'tag=web'), await launched(s, owner.jwt, 'tag=web', { Background: true })]
    ids.push(await launched(s, owner.jwt, 'tag=web'))
    await s.searches.settled()
    const before = { store: storeSnapshot(s), list: await all(s), files: workFiles(s) }
    const res = await launch(s, owner.jwt, 'tag=web grep line')
    expectError(res, 429)
    expect(res.body.Error).toContain('QUARRY_MAX_SEARCHES_PER_USER')
    expect({ store: storeSnapshot(s), list: await all(s), files: workFiles(s) }).toEqual(before)
    // Other users have their own allowance.
    await launched(s, member.jwt, 'tag=web')
    // A saved search leaves the count (a deleted one too): the owner may launch again, once.
    expect((await s.call('PATCH', `/api/searchctrl/${ids[0]}/save`, { jwt: owner.jwt })).status).toBe(200)
    await s.call('PUT', `/api/searchctrl/${ids[0]}/detach`, { jwt: owner.jwt })
    await s.searches.settled()
    expect((await details(s, owner.jwt, ids[0]!)).State).toBe('DORMANT/SAVED')
    await launched(s, owner.jwt, 'tag=web')
    expectError(await launch(s, owner.jwt, 'tag=web'), 429)
    expect((await s.call('DELETE', `/api/searchctrl/${ids[1]}`, { jwt: owner.jwt })).status).toBe(200)
    await launched(s, owner.jwt, 'tag=web')
  })

  test('at the cap, searches waiting out their grace period make room, the longest unattended first; attached and backgrounded ones stay', async () => {
    const { s, owner } = await setup({ maxSearchesPerUser: 4, searchGraceMs: 3_600_000 })
    await ingest(s, [entry(1)])
    const attached = await launched(s, owner.jwt, 'tag=web')
    const background = await launched(s, owner.jwt, 'tag=web', { Background: true })
    const closedFirst = await launched(s, owner.jwt, 'tag=web')
    const closedLast = await launched(s, owner.jwt, 'tag=web')
    await s.searches.settled()
    await s.call('PUT', `/api/searchctrl/${background}/detach`, { jwt: owner.jwt })
    await s.call('PUT', `/api/searchctrl/${closedFirst}/detach`, { jwt: owner.jwt })
    s.clock.advance(1000)
    await s.call('PUT', `/api/searchctrl/${closedLast}/detach`, { jwt: owner.jwt })
    const listedIds = async () => (await all(s)).map((x) => x.ID).sort()
    // within the grace period a closed search can still be attached again
    expect(await listedIds()).toEqual([attached, background, closedFirst, closedLast].sort())
    const third = await launched(s, owner.jwt, 'tag=web')
    expect(await listedIds()).toEqual([attached, background, closedLast, third].sort())
    const fourth = await launched(s, owner.jwt, 'tag=web')
    expect(await listedIds()).toEqual([attached, background, third, fourth].sort())
    // nothing left that waits: the cap holds
    expectError(await launch(s, owner.jwt, 'tag=web'), 429)
    await s.searches.settled()
    expect(workFiles(s).filter((f) => f.startsWith(closedFirst) || f.startsWith(closedLast))).toEqual([])
  })
})

describe('searches of ended sessions', () => {
  const HOUR = 3_600_000
  test.each([
    ['logout', async (s: TestServer, jwt: string) => void (await s.call('PUT', '/api/logout', { jwt }))],
    ['logout of every session', async (s: TestServer, jwt: string) => void (await s.call('DELETE', '/api/logout', { jwt }))],
    ['account lock', async (s: TestServer, _: string, uid: number) => void (await s.call('PUT', `/api/users/${uid}/lock`, { jwt: s.adminJwt }))],
    ['idle expiry', async (s: TestServer) => {
      s.clock.advance(s.config.sessionIdleMs)
      await s.auth.sweepExpiredSessions()
    }],
    ['absolute expiry', async (s: TestServer, jwt: string) => {
      // kept busy, so only the lifetime ends it
      for (let t = 0; t < s.config.sessionLifetimeMs; t += s.config.sessionIdleMs / 2) {
        s.clock.advance(s.config.sessionIdleMs / 2)
        await s.call('GET', '/api/info/whoami', { jwt })
      }
      await s.auth.sweepExpiredSessions()
    }],
  ])('%s removes the session\'s searches that are not backgrounded or saved, with their files; the others stay', async (_, end) => {
    const { s, owner, member } = await setup({ searchGraceMs: 24 * HOUR, sessionIdleMs: HOUR, sessionLifetimeMs: 3 * HOUR })
    await ingest(s, [entry(1), entry(2)])
    const plain = await launched(s, owner.jwt, 'tag=web')
    const backgrounded = await launched(s, owner.jwt, 'tag=web', { Background: true })
    const saving = await launched(s, owner.jwt, 'tag=web grep line')
    expect((await s.call('PATCH', `/api/searchctrl/${saving}/save`, { jwt: owner.jwt })).status).toBe(200)
    const shared = await launched(s, owner.jwt, 'tag=web | limit 1')
    expect((await s.call('PUT', `/api/searchctrl/${shared}/attach`, { jwt: member.jwt })).status).toBe(200)
    const other = await launched(s, member.jwt, 'tag=web')
    await s.searches.settled()
    const plainFiles = [`${plain}.idx`, `${plain}.ndjson`]
    expect(workFiles(s)).toEqual(expect.arrayContaining(plainFiles))
    await end(s, owner.jwt, owner.uid)
    await s.searches.settled()
    const left = new Map((await all(s, await s.login('admin', s.adminPassword))).map((e) => [e.ID, e.State]))
    expect(left.has(plain)).toBe(false)
    expect(workFiles(s)).not.toEqual(expect.arrayContaining([plainFiles[0]]))
    expect(left.get(backgrounded)).toBe('DORMANT/BACKGROUNDED')
    expect(left.get(saving)).toBe('DORMANT/SAVED')
    if (_ !== 'idle expiry' && _ !== 'absolute expiry') {
      // the member's session is alive: what it is attached to stays
      expect(left.get(shared)).toBe('ACTIVE')
      expect(left.get(other)).toBe('ACTIVE')
    }
  })

  test('a refreshed session keeps its searches; an explicit detach still leaves the grace period', async () => {
    const { s, owner } = await setup({ searchGraceMs: 60_000 })
    const id = await launched(s, owner.jwt, 'tag=web')
    const refreshed = (await s.call('GET', '/api/login/refreshtoken', { jwt: owner.jwt })).body.JWT as string
    expect((await all(s)).map((e) => e.ID)).toContain(id)
    await s.call('PUT', `/api/searchctrl/${id}/detach`, { jwt: refreshed })
    expect((await all(s)).map((e) => e.ID)).toContain(id)
    s.clock.advance(60_000)
    expect((await all(s)).map((e) => e.ID)).not.toContain(id)
  })
})

describe('search history', () => {
  test('keeps the newest launches of each user only (rows and all), other users\' untouched', async () => {
    const { s, owner, member } = await setup({}, { historyKeep: 5 })
    await launched(s, member.jwt, 'tag=web grep member')
    for (let i = 0; i < 8; i++) {
      const id = await launched(s, owner.jwt, `tag=web grep n${i}`)
      await s.call('DELETE', `/api/searchctrl/${id}`, { jwt: owner.jwt })
    }
    const rows = async (uid: number) => Number((await s.rows('SELECT COUNT(*) AS n FROM search_history WHERE uid = ?', [uid]))[0]!.n)
    expect(await rows(owner.uid)).toBe(5)
    expect(await rows(member.uid)).toBe(1)
    const history = (await s.call('GET', '/api/searchhistory', { jwt: owner.jwt })).body as { UserQuery: string }[]
    expect(history.map((h) => h.UserQuery)).toEqual([7, 6, 5, 4, 3].map((i) => `tag=web grep n${i}`))
  })
})

describe('caches keyed by user input', () => {
  test('the prepared scans stay bounded after many distinct tag lists, and searches still find the same entries', async () => {
    const { s, owner } = await setup({ maxSearchesPerUser: 1000 })
    const tags = Array.from({ length: 8 }, (_, i) => `t${i}`)
    await ingest(s, tags.map((t, i) => entry(i, t, `entry of ${t}`)))
    // The SQLite store prepares one statement per tag list and keeps them in an LRU; the PostgreSQL store runs one
    // statement text for every list (the ids are an array parameter), so it has no per-list statement to bound.
    const scans = () => (s.store.kind === 'sqlite' ? (s.store.entries as unknown as { scans: Map<string, unknown> }).scans.size : 0)
    const first = await launched(s, owner.jwt, 'tag=t0,t1')
    // 2^8 - 1 subsets of the tags, each a distinct list: one statement each without a bound.
    for (let mask = 1; mask < 256; mask++) {
      const list = tags.filter((_, i) => mask & (1 << i))
      const id = await launched(s, owner.jwt, `tag=${list.join(',')}`)
      await s.searches.settled()
      expect((await details(s, owner.jwt, id)).ItemCount).toBe(list.length)
      await s.call('DELETE', `/api/searchctrl/${id}`, { jwt: owner.jwt })
    }
    expect(scans()).toBeLessThanOrEqual(SCAN_CACHE_SIZE)
    // A list whose statement was dropped long ago is prepared again and finds the same entries.
    const again = await launched(s, owner.jwt, 'tag=t0,t1')
    await s.searches.settled()
    expect((await details(s, owner.jwt, again)).ItemCount).toBe((await details(s, owner.jwt, first)).ItemCount)
  })
})
