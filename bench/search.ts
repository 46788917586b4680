// The driver of bench/search.sh (see bench/README.md): against a running Quarry,
//   1. ingests ENTRIES entries of ENTRY_BYTES bytes of text through POST /api/ingest/json in batches of BATCH, one
//      request at a time, and reports entries per second (and MB/s of entry data);
//   2. measures GET /api/info/whoami latency for BASELINE_S seconds with nothing else running (one request at a
//      time, back to back);
//   3. launches `tag=bench grep <needle>` over every entry (1 in 100 holds the needle) and, while it runs, keeps the
//      same whoami loop going and polls the search's details every POLL_MS ms: time to the first result (ItemCount
//      above 0), time to finish (Finished set), and whoami p50/p99/max during the search;
//   4. checks the search's results (count and a download) and prints one JSON object with every figure.
//
//   bun run bench/search.ts <base-url> <admin-password>
// Tunables (environment): BENCH_ENTRIES (1000000), BENCH_BATCH (1000), BENCH_ENTRY_BYTES (1024),
// BENCH_BASELINE_S (5), BENCH_POLL_MS (10), BENCH_STAGE (`grep NEEDLE-7f3a`: the stage after `tag=bench`; any stage
// that keeps exactly the entries holding the needle, e.g. `regex "(?i)needle-7f3a"`), BENCH_SETTLE_S (0: seconds to
// wait after the ingest, so that the server's compaction into segments catches up before the search).

import { NEEDLE, entryText } from './search-texts'

const [base, password] = process.argv.slice(2)
if (!base || !password) {
  console.error('usage: bun run bench/search.ts <base-url> <admin-password>')
  process.exit(2)
}
const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 1_000_000)
const BATCH = Number(process.env.BENCH_BATCH ?? 1000)
const ENTRY_BYTES = Number(process.env.BENCH_ENTRY_BYTES ?? 1024)
const BASELINE_S = Number(process.env.BENCH_BASELINE_S ?? 5)
const POLL_MS = Number(process.env.BENCH_POLL_MS ?? 10)
/** One entry in NEEDLE_EVERY holds the needle. */
const NEEDLE_EVERY = 100
const QUERY = `tag=bench ${process.env.BENCH_STAGE ?? `grep ${NEEDLE}`}`
const T0 = Date.parse('2026-01-01T00:00:00Z')

function fail(msg: string): never {
  console.error(`bench/search.ts: ${msg}`)
  process.exit(1)
}

async function json(res: Response, what: string): Promise<any> {
  const text = await res.text()
  if (!res.ok) fail(`${what}: HTTP ${res.status}: ${text.slice(0, 500)}`)
  return text === '' ? undefined : JSON.parse(text)
}

const login = await json(
  await fetch(`${base}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ User: 'admin', Pass: password }) }),
  'login',
)
const auth = { authorization: `Bearer ${login.JWT}`, 'content-type': 'application/json' }
const get = async (path: string) => json(await fetch(`${base}${path}`, { headers: auth }), `GET ${path}`)

// --- entry texts: words from a small alphabet, ENTRY_BYTES long; a few variants, base64-encoded once ---------
const VARIANTS = 64
const text = (seed: number, needle: boolean) => entryText(seed, needle, ENTRY_BYTES)
const plain = Array.from({ length: VARIANTS }, (_, i) => Buffer.from(text(i, false)).toString('base64'))
const needled = Array.from({ length: VARIANTS }, (_, i) => Buffer.from(text(i + VARIANTS, true)).toString('base64'))

/** The JSON body of batch b: entries b*BATCH .. b*BATCH+BATCH-1, one millisecond apart. */
function batchBody(b: number): string {
  const parts: string[] = []
  for (let j = 0; j < BATCH; j++) {
    const i = b * BATCH + j
    const data = i % NEEDLE_EVERY === 0 ? needled[i % VARIANTS] : plain[i % VARIANTS]
    parts.push(`{"TS":"${new Date(T0 + i).toISOString()}","Tag":"bench","SRC":"192.0.2.${i % 250}","Data":"${data}"}`)
  }
  return `[${parts.join(',')}]`
}

// --- 1. ingest ---------------------------------------------------------------------------------------------
const batches = Math.ceil(ENTRIES / BATCH)
console.error(`== ingesting ${batches * BATCH} entries of ${ENTRY_BYTES} bytes in batches of ${BATCH}`)
let ingestMs = 0
let next = batchBody(0)
for (let b = 0; b < batches; b++) {
  const body = next
  const t = performance.now()
  const answer = await json(await fetch(`${base}/api/ingest/json`, { method: 'POST', headers: auth, body }), 'ingest')
  ingestMs += performance.now() - t
  if (answer.Count !== BATCH) fail(`ingest answered Count ${answer.Count}`)
  // The next body is built outside the timed request.
  if (b + 1 < batches) next = batchBody(b + 1)
  if ((b + 1) % 100 === 0) console.error(`   ${(b + 1) * BATCH} entries, ${Math.round(((b + 1) * BATCH) / (ingestMs / 1000))} entries/s so far`)
}
const total = batches * BATCH

const SETTLE_S = Number(process.env.BENCH_SETTLE_S ?? 0)
if (SETTLE_S > 0) {
  console.error(`== waiting ${SETTLE_S} s for the compaction into segments`)
  await Bun.sleep(SETTLE_S * 1000)
}

// --- 2. and 3.: whoami latency, alone and during the search --------------------------------------------------
/** Calls whoami back to back until `until()` is true; answers each latency in ms. */
async function whoamiLoop(until: () => boolean): Promise<number[]> {
  const out: number[] = []
  while (!until()) {
    const t = performance.now()
    const res = await fetch(`${base}/api/info/whoami`, { headers: auth })
    await res.arrayBuffer()
    if (!res.ok) fail(`whoami: HTTP ${res.status}`)
    out.push(performance.now() - t)
  }
  return out
}
function stats(ms: number[]) {
  const s = [...ms].sort((a, b) => a - b)
  const at = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? 0
  const r = (x: number) => Math.round(x * 100) / 100
  return { count: s.length, p50: r(at(0.5)), p99: r(at(0.99)), max: r(s.at(-1) ?? 0) }
}

console.error(`== whoami alone for ${BASELINE_S} s`)
const baselineEnd = performance.now() + BASELINE_S * 1000
const baseline = stats(await whoamiLoop(() => performance.now() >= baselineEnd))

console.error(`== search: ${QUERY} over ${total} entries`)
let finished = false
const during = whoamiLoop(() => finished)
const launchedAt = performance.now()
const { SearchID: id } = await json(
  await fetch(`${base}/api/searchctrl/launch`, { method: 'POST', headers: auth, body: JSON.stringify({ SearchString: QUERY }) }),
  'launch',
)
const launchMs = performance.now() - launchedAt
let firstMs: number | undefined
let finishMs = 0
let polls = 0
for (;;) {
  const d = await get(`/api/searchctrl/${id}/details`)
  polls++
  const t = performance.now() - launchedAt
  if (firstMs === undefined && d.ItemCount > 0) firstMs = t
  if (d.Finished !== '0001-01-01T00:00:00Z') {
    finishMs = t
    break
  }
  await Bun.sleep(POLL_MS)
}
finished = true
const duringSearch = stats(await during)

// --- 4. check ----------------------------------------------------------------------------------------------
const details = await get(`/api/searchctrl/${id}/details`)
const expected = Math.ceil(total / NEEDLE_EVERY)
if (details.ItemCount !== expected) fail(`the search found ${details.ItemCount} entries, not ${expected}`)
const results = await get(`/api/searchctrl/${id}/download/json`)
if (!Array.isArray(results) || results.length !== expected) fail('the download does not hold every result')
if (!Buffer.from(results[0].Data, 'base64').toString().startsWith(NEEDLE)) fail('a result does not hold the needle')

const r1 = (x: number) => Math.round(x * 10) / 10
console.log(
  JSON.stringify({
    entries: total,
    entryBytes: ENTRY_BYTES,
    batch: BATCH,
    ingestSeconds: r1(ingestMs / 1000),
    ingestEntriesPerSecond: Math.round(total / (ingestMs / 1000)),
    ingestMBPerSecond: r1((total * ENTRY_BYTES) / 1e6 / (ingestMs / 1000)),
    launchMs: r1(launchMs),
    firstResultMs: r1(firstMs ?? finishMs),
    finishMs: r1(finishMs),
    scannedEntriesPerSecond: Math.round(total / (finishMs / 1000)),
    results: details.ItemCount,
    storeSize: details.StoreSize,
    polls,
    pollMs: POLL_MS,
    whoamiAlone: baseline,
    whoamiDuringSearch: duringSearch,
  }),
)
