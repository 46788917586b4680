// Generated bad input, short run (issue 8, part 1): see test/fuzz.ts for what is generated and checked.
// QUARRY_FUZZ_RUNS sets the number of requests (default 2,000), QUARRY_FUZZ_SEED replays a run;
// test/fuzz-long.sh is the long run.
import { afterAll, describe, expect, test } from 'bun:test'
import { fuzzFixture, fuzzSeed, runFuzz } from './fuzz'

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
  }, Math.max(120_000, runs * 100))
})
