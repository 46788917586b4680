// Generated queries (docs/query-language.md): every module of the registry (engine/registry.ts MODULES), by its own
// examples and by mutations of them, chained 1 to 5 deep in random order, launched through the real app over a small
// data set of mixed lines (JSON, key=value, syslog, access log, binary). A module added to the registry is fuzzed by
// its examples without any change here. For every case:
// - the launch answers 200, or 400 with `Error` and a numeric `Position`; when the engine refuses the query in a
//   module (compileQuery throws a QueryError naming it), the 400 names that module at that position; never a 5xx;
// - compiling throws nothing but a QueryError;
// - a launched search ends (finished, or failed with an error in its details) within HANG_MS: past that it hangs;
// - its results download, it deletes, and /api/test still answers.
// Used by test/query-fuzz.test.ts (short run) and test/query-fuzz-long.sh (long run), with a fixed seed.
import { expect } from 'bun:test'
import fc from 'fast-check'
import { QueryError } from '../engine/errors'
import { compileQueryNow } from '../engine/query'
import { MODULES } from '../engine/registry'
import { type TestServer, createTestServer } from './helpers'

export function queryFuzzSeed(): number {
  const raw = process.env.QUARRY_QFUZZ_SEED
  return raw ? Number(raw) : 23
}

const T0 = Date.parse('2026-01-01T00:00:00Z')

/** The data set: one line of each shape the extraction modules read, and lines that are none of them. */
export const FUZZ_LINES: (string | Uint8Array)[] = [
  '{"Author":"ann","status":503,"latency":1.7,"location":{"region_code":"FR"},"groups":["a","b"],"domain":"example.com","ms":120}',
  '{"Author":"bob","status":200,"nested":{"deep":[1,2,{"x":"y"}]},"bytes":4096,"user":"u1"}',
  'devname=fw1 level="critical" logdesc="Admin login failed" msg="bad password" user=root SrcIP=10.0.0.7 SrcPort=4431',
  'user:ann|host:alpha|bytes:77',
  '<34>1 2026-01-01T00:00:00.003Z mymachine.example.com su 4711 ID47 [exampleSDID@32473 iut="3" eventSource="App"] BOM\'su root\' failed',
  '<13>Jan  1 00:00:01 myhost sshd[311]: Accepted password for ann from 192.168.0.4 port 22 ssh2',
  '192.0.2.1 - ann [01/Jan/2026:00:00:02 +0000] "GET /api/things?id=1 HTTP/1.1" 200 5123 "-" "Mozilla/5.0 Firefox/115.0"',
  'POST /login took 250 ms',
  'a\tb\tc\td\te\tf\tg\th\ti\thttp://example.com/x\tk',
  '1,2,3,"four, quoted",5,,7,8,9,http://example.com/y',
  'ipaddr=172.16.3.4 srcip=8.8.8.8 SrcMAC=00:11:22:33:44:55 DstPort=80 DstIP=10.1.1.1 tsString=2026-01-01T00:00:03Z',
  'héllo wörld ☃ \u0000 \u202e gravwell Gravwell HTTP 1.1',
  new Uint8Array([0, 1, 2, 0xff, 0xfe, 0x80, 0xc3, 0x28, 10, 13, 0x7b, 0x22]),
  '',
]

export async function queryFuzzServer(): Promise<TestServer> {
  const s = await createTestServer({}, { search: { chunk: 5, stepMs: 0 } })
  const json = FUZZ_LINES.map((data, i) => ({
    TS: new Date(T0 + i * 1000).toISOString(),
    Tag: i % 2 ? 'fz' : 'fy',
    SRC: '192.0.2.7',
    Data: Buffer.from(data).toString('base64'),
  }))
  const res = await s.call('POST', '/api/ingest/json', { jwt: s.adminJwt, json })
  expect(res.status).toBe(200)
  return s
}

// ---------------------------------------------------------------------------------------------------------------
// Queries

/** A call's tokens as a user types them: words and quoted strings (a quoted string is one token). */
export function tokensOf(example: string): string[] {
  return example.match(/"(?:\\.|[^"\\])*"|`[^`]*`|\S+/g) ?? []
}

const EXAMPLES = MODULES.map((m) => ({ name: m.name, examples: m.examples }))
const ALL_TOKENS = [...new Set(MODULES.flatMap((m) => m.examples.flatMap(tokensOf)))]
const FLAGS = ALL_TOKENS.filter((t) => /^-[A-Za-z]/.test(t))

const oddToken = fc.oneof(
  fc.constantFrom('"', '\\', '`', '|', '"\\"', '`\\`', '""', '``', '(', ')', '[', ']', '{', '}', ',', ';', '=', '==', '!=', '~', '!~', '<', '>=', 'as', 'by', 'over', '-', '--'),
  fc.constantFrom('0', '-1', '1.5', '-0', '1e308', '1e999', 'NaN', 'Infinity', '9007199254740993', '99999999999999999999999', '0x10', '5m', '-5m', '0s', '1000000h', '99.9999', '101'),
  fc.constantFrom(...FLAGS),
  fc.constantFrom(...ALL_TOKENS),
  fc.constantFrom('x'.repeat(1200), `"${'a'.repeat(900)}"`, '☃', '\u202e', '\u0000', 'é', '𝕏', '\ud800', 'DATA', 'TAG', 'SRC', 'TIMESTAMP'),
  fc.string({ maxLength: 8 }),
)

type Mutation = (tokens: string[]) => fc.Arbitrary<string[]>
const at = (tokens: string[]) => fc.nat({ max: Math.max(0, tokens.length - 1) })
const MUTATIONS: Mutation[] = [
  (t) => at(t).map((i) => t.filter((_, j) => j !== i || i === 0)), // drop (keeps the module name)
  (t) => at(t).map((i) => [...t.slice(0, i + 1), t[i] ?? '', ...t.slice(i + 1)]), // duplicate
  (t) => fc.tuple(at(t), at(t)).map(([i, j]) => { const u = [...t]; [u[i], u[j]] = [u[j]!, u[i]!]; return u }), // swap
  (t) => fc.tuple(fc.nat({ max: t.length }), oddToken).map(([i, x]) => [...t.slice(0, i), x, ...t.slice(i)]), // insert
  (t) => fc.tuple(at(t), oddToken).map(([i, x]) => t.map((y, j) => (j === i && j > 0 ? x : y))), // replace
  (t) => fc.tuple(at(t), fc.nat(), oddToken).map(([i, k, x]) => t.map((y, j) => (j === i ? y.slice(0, k % (y.length + 1)) + x + y.slice(k % (y.length + 1)) : y))), // splice into a token
]

/** One module call: an example as written, or mutated one to three times. */
const moduleCall: fc.Arbitrary<string> = fc
  .constantFrom(...EXAMPLES)
  .chain((m) => fc.constantFrom(...m.examples))
  .chain((example) => {
    const tokens = tokensOf(example)
    return fc.oneof(
      { weight: 2, arbitrary: fc.constant(example) },
      {
        weight: 3,
        arbitrary: fc
          .array(fc.nat({ max: MUTATIONS.length - 1 }), { minLength: 1, maxLength: 3 })
          .chain((picks) => picks.reduce<fc.Arbitrary<string[]>>((acc, p) => acc.chain((t) => MUTATIONS[p]!(t)), fc.constant(tokens)))
          .map((t) => t.join(' ')),
      },
    )
  })

export const fuzzQuery: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom('tag=fz', 'tag=fy', 'tag=fz,fy', 'tag=*'), fc.array(moduleCall, { minLength: 1, maxLength: 5 }))
  .map(([tags, calls]) => `${tags} ${calls.join(' | ')}`)

// ---------------------------------------------------------------------------------------------------------------
// Running

/**
 * How long a search of this data set (14 entries) may run before it counts as hung. Not a speed bound: on a quiet
 * machine each ends in milliseconds; 15 s leaves room for a loaded one, and a search that hangs never ends.
 */
const HANG_MS = 15_000
/** The longest SearchString the launch route takes (plugins/searchctrl/schema.ts). */
const MAX_QUERY_LENGTH = 4096
const NOT_FINISHED = '0001-01-01T00:00:00Z'

export interface QueryFuzzStats {
  cases: number
  launched: number
  refused: number
  refusedInModule: number
  failedRunning: number
  /** Modules (by name) that appeared in a launched query. */
  modulesLaunched: Set<string>
}

/** What the engine makes of the query in-process: ok, or the QueryError (anything else thrown fails the case). */
function compiledHere(query: string): QueryError | undefined {
  try {
    compileQueryNow(query)
    return undefined
  } catch (e) {
    if (e instanceof QueryError) return e
    throw new Error(`compiling ${JSON.stringify(query)} threw ${e instanceof Error ? `${e.name}: ${e.message}\n${e.stack}` : String(e)}`)
  }
}

async function runCase(s: TestServer, query: string, stats: QueryFuzzStats): Promise<void> {
  const jwt = s.adminJwt
  const local = compiledHere(query)
  const res = await s.call('POST', '/api/searchctrl/launch', { jwt, json: { SearchString: query } })
  const where = `query ${JSON.stringify(query.length > 600 ? `${query.slice(0, 600)}...` : query)}: ${res.status} ${res.text.slice(0, 300)}`
  if (res.status !== 200 && (query.length > MAX_QUERY_LENGTH || query.includes('\u0000'))) {
    // refused with the request, before the engine sees it: too long for the route's schema, or a NUL (server/http/body.ts)
    expect(res.status, where).toBe(400)
    expect(typeof res.body?.Error, where).toBe('string')
    stats.refused++
    return
  }
  if (res.status !== 200) {
    expect(res.status, where).toBe(400)
    expect(typeof res.body?.Error, where).toBe('string')
    expect(typeof res.body?.Position, where).toBe('number')
    stats.refused++
    if (local && local.module) {
      stats.refusedInModule++
      expect(res.body.Error, where).toStartWith(`${local.module}: `)
      expect(res.body.Position, where).toBe(local.position)
    }
    return
  }
  // the app launched what the engine refuses: a refusal lost on the way
  expect(local?.message, where).toBeUndefined()
  stats.launched++
  const compiled = compileQueryNow(query)
  for (const m of [...compiled.modules, compiled.renderer]) stats.modulesLaunched.add(m.name)
  const id = res.body.SearchID as string
  const until = performance.now() + HANG_MS
  let details = (await s.call('GET', `/api/searchctrl/${id}/details`, { jwt })).body
  while (details.Finished === NOT_FINISHED && performance.now() < until) {
    await Bun.sleep(2)
    details = (await s.call('GET', `/api/searchctrl/${id}/details`, { jwt })).body
  }
  expect(details.Finished !== NOT_FINISHED, `${where}: not finished after ${HANG_MS} ms`).toBe(true)
  if (details.Error) {
    stats.failedRunning++
    expect(details.State, `${where}: ${details.Error}`).toContain('ERROR')
  }
  const download = await s.call('GET', `/api/searchctrl/${id}/download/json`, { jwt })
  expect(download.status, `${where}: download ${download.text.slice(0, 300)}`).toBe(200)
  expect((await s.call('DELETE', `/api/searchctrl/${id}`, { jwt })).status, where).toBe(200)
}

export async function runQueryFuzz(s: TestServer, runs: number, seed: number): Promise<QueryFuzzStats> {
  const stats: QueryFuzzStats = { cases: 0, launched: 0, refused: 0, refusedInModule: 0, failedRunning: 0, modulesLaunched: new Set() }
  // every example of every module on its own first, then generated chains
  const queries = [...MODULES.flatMap((m) => m.examples.map((e) => `tag=fz ${e}`)), ...fc.sample(fuzzQuery, { numRuns: runs, seed })]
  for (const query of queries) {
    await runCase(s, query, stats)
    stats.cases++
    if (stats.cases % 25 === 0) expect((await s.call('GET', '/api/test')).status).toBe(200)
  }
  expect((await s.call('GET', '/api/test')).status).toBe(200)
  return stats
}
