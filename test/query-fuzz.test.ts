// Generated queries, short run (docs/query-language.md): see test/query-fuzz.ts for what is generated and checked.
// QUARRY_QFUZZ_RUNS sets the number of generated queries (default 400, after every module's examples on their own),
// QUARRY_QFUZZ_SEED replays a run (default 23); test/query-fuzz-long.sh is the long run.
import { afterAll, describe, expect, test } from 'bun:test'
import { MODULES } from '../engine/registry'
import { queryFuzzSeed, queryFuzzServer, runQueryFuzz, tokensOf } from './query-fuzz'

const runs = Number(process.env.QUARRY_QFUZZ_RUNS ?? 400)
const seed = queryFuzzSeed()
const s = await queryFuzzServer()
afterAll(() => s.close())

describe('generated queries', () => {
  test(`every module's examples and ${runs} generated chains (seed ${seed}): 200 or a 400 with its Position, every search ends`, async () => {
    const stats = await runQueryFuzz(s, runs, seed)
    const { modulesLaunched, ...totals } = stats
    console.log(`query fuzz: seed ${seed}, ${JSON.stringify(totals)}`)
    expect(stats.cases).toBe(runs + MODULES.reduce((n, m) => n + m.examples.length, 0))
    // both sides were reached: searches that ran and refusals inside modules
    expect(stats.launched).toBeGreaterThan(runs / 10)
    expect(stats.refusedInModule).toBeGreaterThan(runs / 10)
    // every module of the registry ran in at least one launched search (lookup needs a resource: it is refused)
    expect(MODULES.map((m) => m.name).filter((n) => n !== 'lookup' && !modulesLaunched.has(n))).toEqual([])
  }, 600_000)
})

describe('the generator', () => {
  test('a quoted string, with its escapes, is one token; a backtick string too', () => {
    expect(tokensOf('regex "(?P<a>\\"x y\\")" `b c` d')).toEqual(['regex', '"(?P<a>\\"x y\\")"', '`b c`', 'd'])
  })
})
