// Generated bad input, short run (bench/README.md, "Robustness"): see test/fuzz.ts for what is generated and checked.
// QUARRY_FUZZ_RUNS sets the number of requests (default 2,000), QUARRY_FUZZ_SOCKET_RUNS the rounds of socket floods
// (default 30), QUARRY_FUZZ_SEED replays a run;
// test/fuzz-long.sh is the long run.
import { afterAll, describe, expect, test } from 'bun:test'
import { createTestServer } from './helpers'
import { onPg } from './pg'
import { FLOOD_SOCKETS_PER_USER, TAG_FLOOD_LIMIT, floodFixture, fuzzFixture, fuzzSeed, listChanges, runFuzz, runSocketFloods, runTagFlood, storeChanges } from './fuzz'

const runs = Number(process.env.QUARRY_FUZZ_RUNS ?? 2000)
const seed = fuzzSeed()
const fixture = await fuzzFixture()
afterAll(() => fixture.s.close())

describe('generated bad input', () => {
  test(`${runs} generated requests over every route (seed ${seed}): no 5xx, refusals change nothing`, async () => {
    const stats = await runFuzz(fixture, runs, seed)
    const { byRoute, mustRefuseByRoute, ...totals } = stats
    console.log(`fuzz: seed ${seed}, ${JSON.stringify(totals)}`)
    expect(stats.requests).toBe(runs)
    // every route of the table was aimed at, and every route with a body schema got must-refuse bodies
    expect(fixture.routes.filter((r) => !byRoute[r.key]).map((r) => r.key)).toEqual([])
    const withBody = fixture.routes.filter((r) => r.body && !r.upload && JSON.stringify(r.body) !== '{}')
    expect(withBody.filter((r) => !mustRefuseByRoute[r.key]).map((r) => r.key)).toEqual([])
  // A snapshot of the store is taken only after a write (TestStore.changes): before that mark, PostgreSQL took a
  // whole snapshot around every request, and one seed ran 260 s there against 26 s on SQLite (32 s with it).
  }, Math.max(120_000, runs * 100))
})

describe('generated tag floods', () => {
  const floods = Math.max(100, Math.ceil(runs / 10))
  test(`${floods} generated batches of many distinct tags (seed ${seed}): the bound holds, every answer as the model predicts`, async () => {
    const stats = await runTagFlood(floods, seed)
    console.log(`tag flood: seed ${seed}, ${JSON.stringify(stats)}`)
    // the flood reached the bound, and batches of known tags went on being accepted past it
    expect(stats.refusedForTags).toBeGreaterThan(0)
    expect(stats.tags).toBeGreaterThan(TAG_FLOOD_LIMIT / 2)
    expect(stats.accepted).toBeGreaterThan(0)
  }, 120_000)
})

describe('generated socket floods', () => {
  const rounds = Number(process.env.QUARRY_FUZZ_SOCKET_RUNS ?? 30)
  test(`${rounds} rounds of junk on the WebSockets (seed ${seed}): answered or cut, never more than ${FLOOD_SOCKETS_PER_USER} sockets, the server small and responsive`, async () => {
    const flood = await floodFixture()
    try {
      const stats = await runSocketFloods(flood, rounds, seed)
      console.log(`socket floods: seed ${seed}, ${JSON.stringify(stats)}`)
      expect(stats.rounds).toBeGreaterThanOrEqual(rounds)
    } finally {
      await flood.close()
    }
  }, Math.max(120_000, rounds * 10_000))
})

describe("the store's change mark, which spares a snapshot when nothing was written", () => {
  test('stays while nothing is written, moves with every write through the API', async () => {
    // a server of its own: the generated requests above may have signed the fixture's admin out
    const s = await createTestServer()
    try {
      await s.searches.settled()
      const quiet = await s.testStore.changes()
      await s.testStore.rows('SELECT count(*) AS n FROM users')
      // PostgreSQL's mark is the whole test server's: another test worker's transaction moves it (a snapshot more)
      if (!onPg) expect(await s.testStore.changes()).toBe(quiet)
      const made = await s.call('POST', '/api/groups', { jwt: s.adminJwt, json: { Name: `mark-${Date.now()}` } })
      expect(made.status).toBe(200)
      const afterCreate = await s.testStore.changes()
      expect(afterCreate).not.toBe(quiet)
      expect((await s.call('DELETE', `/api/groups/${made.body}`, { jwt: s.adminJwt })).status).toBe(200)
      expect(await s.testStore.changes()).not.toBe(afterCreate)
    } finally {
      await s.close()
    }
  })
})

describe('a failure names what changed', () => {
  test('blob files that appeared and disappeared', () => {
    expect(listChanges(['a/b/keep', 'a/c/gone'], ['a/b/keep', 'tmp/x.part'], 'blob')).toBe('1 blob(s) appeared: tmp/x.part; 1 blob(s) disappeared: a/c/gone')
  })
  test('the rows added and removed, by table; unchanged tables are not named', () => {
    const before = { users: [{ id: 1, name: 'admin' }], saved_searches: [] as unknown[] }
    const after = { users: [{ id: 1, name: 'admin' }], saved_searches: [{ id: '7', state: 'saved' }] }
    expect(storeChanges(before, after)).toBe('table saved_searches: 1 row(s) appeared: {"id":"7","state":"saved"}')
  })
})
