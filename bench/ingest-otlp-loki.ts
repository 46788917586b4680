// OTLP/HTTP logs (protobuf) and Loki push (protobuf + snappy) ingest against a floor, in one interleaved run:
//   bun run bench/ingest-otlp-loki.ts
// Starts a real Quarry (server/main.ts, its own data directory, QUARRY_LOG_LEVEL=warn, no ingest rate) and the floor: a
// plain Bun.serve in another process that decodes the same bodies with the same decoders (server/ingest/otlp.ts,
// loki.ts, snappy.ts) and writes the same rows (ts, tag_id, src, data, the same table and index) to SQLite with the
// same durability (WAL, synchronous NORMAL, one transaction per request), and nothing else: no authentication, no
// quota, no tag directory, no metrics, no compaction. Both get the same pre-built bodies: BENCH_BATCH records of
// 200-byte lines per request, BENCH_REQUESTS requests per round, from BENCH_CLIENTS clients at once; rounds alternate
// quarry/floor per protocol, BENCH_ROUNDS times, and the median of each is reported with the ratio. The lines are
// counted as MB/s (the line bytes, 10^6). Then a search of the last Quarry round counts its entries (what a 2xx
// acknowledged is there) and the time from a 2xx to the entry being found by a search is measured once per protocol.
// Prints one JSON object.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { benchEnv } from './session'
import { Database } from 'bun:sqlite'

const ROOT = join(import.meta.dir, '..')
const BATCH = Number(process.env.BENCH_BATCH ?? 1000)
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 100)
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 4)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const LINE_BYTES = 200
const PASSWORD = 'bench-password-1'
const T0 = Date.parse('2026-05-01T00:00:00Z')

function freePort(): number {
  const s = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() })
  const port = s.port!
  s.stop(true)
  return port
}

async function waitFor(url: string) {
  const end = Date.now() + 60_000
  while (Date.now() < end) {
    try {
      await fetch(url)
      return
    } catch {
      await Bun.sleep(50)
    }
  }
  throw new Error(`${url} did not answer within 60 s`)
}

// ---- the floor: `bun run bench/ingest-otlp-loki.ts floor <port> <dir>` --------------------------------------------
if (process.argv[2] === 'floor') {
  const { decodeOtlpLogs } = await import('../server/ingest/otlp')
  const { decodeLokiPush } = await import('../server/ingest/loki')
  const { snappyUncompress } = await import('../server/ingest/snappy')
  const port = Number(process.argv[3])
  const db = new Database(join(process.argv[4]!, 'floor.db'))
  db.run('PRAGMA journal_mode = WAL')
  db.run('PRAGMA synchronous = NORMAL')
  db.run('CREATE TABLE ingest_tags (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)')
  db.run('CREATE TABLE entries (id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, tag_id INTEGER NOT NULL REFERENCES ingest_tags(id), src TEXT NOT NULL, data BLOB NOT NULL)')
  db.run('CREATE INDEX entries_time_tag ON entries(ts, tag_id)')
  const tagId = db.query<{ id: number }, [string]>('SELECT id FROM ingest_tags WHERE name = ?')
  const addTag = db.query<{ id: number }, [string]>('INSERT INTO ingest_tags (name) VALUES (?) RETURNING id')
  const insert = db.query('INSERT INTO entries (ts, tag_id, src, data) VALUES (?, ?, ?, ?)')
  const store = db.transaction((entries: { ts: number; tag: string; src: string; data: Uint8Array }[]) => {
    const ids = new Map<string, number>()
    for (const e of entries) {
      let id = ids.get(e.tag)
      if (id === undefined) ids.set(e.tag, (id = tagId.get(e.tag)?.id ?? addTag.get(e.tag)!.id))
      insert.run(e.ts, id, e.src, e.data)
    }
  })
  const max = 16 << 20
  Bun.serve({
    hostname: '127.0.0.1',
    port,
    async fetch(request, server) {
      if (request.method !== 'POST') return new Response(null, { status: 404 })
      const body = new Uint8Array(await request.arrayBuffer())
      const src = server.requestIP(request)?.address ?? ''
      const path = new URL(request.url).pathname
      const decoded = path.endsWith('/v1/logs')
        ? decodeOtlpLogs(body, 'protobuf', { tagAttribute: 'service.name', defaultTag: 'otlp', maxRecords: 65536 }, Date.now())
        : decodeLokiPush(snappyUncompress(body, max), 'protobuf', { tagLabel: 'job', defaultTag: 'loki', maxRecords: 65536 }, Date.now())
      for (const e of decoded.entries) e.src = src
      store(decoded.entries)
      return path.endsWith('/v1/logs') ? new Response(new Uint8Array(0), { headers: { 'content-type': 'application/x-protobuf' } }) : new Response(null, { status: 204 })
    },
  })
  console.log('ready')
  await new Promise(() => {})
}

// ---- the driver ---------------------------------------------------------------------------------------------------
const { protobufMessages } = await import('../server/ingest/protobuf')
const snappy = require('snappyjs') as { compress(b: Uint8Array): Uint8Array }

/** A 200-byte access-log-like line, varied by i. */
function line(i: number): string {
  const head = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255} - - [01/May/2026:00:00:${String(i % 60).padStart(2, '0')} +0000] "GET /shop/item/${i % 9973} HTTP/1.1" ${[200, 304, 404, 500][i % 4]} ${1000 + (i % 50000)} "-" "bench/1.0"`
  return (head + ' ' + 'x'.repeat(LINE_BYTES)).slice(0, LINE_BYTES)
}

/** Request r's OTLP ExportLogsServiceRequest (protobuf): BATCH records, string bodies, one resource and scope. */
function otlpBody(r: number): Uint8Array {
  const { ExportLogsServiceRequest } = protobufMessages()
  const logRecords = Array.from({ length: BATCH }, (_, j) => {
    const i = r * BATCH + j
    const nanos = BigInt(T0 + i) * 1_000_000n
    return {
      timeUnixNano: { low: Number(nanos & 0xffffffffn), high: Number(nanos >> 32n), unsigned: true },
      severityNumber: 9,
      severityText: 'INFO',
      body: { stringValue: line(i) },
    }
  })
  const message = { resourceLogs: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'bench' } }] }, scopeLogs: [{ scope: { name: 'bench' }, logRecords }] }] }
  return ExportLogsServiceRequest.encode(ExportLogsServiceRequest.fromObject(message)).finish()
}

/** Request r's Loki PushRequest (protobuf), snappy-compressed as Promtail sends it: BATCH entries of one stream. */
function lokiBody(r: number): Uint8Array {
  const { PushRequest } = protobufMessages()
  const entries = Array.from({ length: BATCH }, (_, j) => {
    const ms = T0 + r * BATCH + j
    return { timestamp: { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1_000_000 }, line: line(r * BATCH + j) }
  })
  return snappy.compress(PushRequest.encode(PushRequest.fromObject({ streams: [{ labels: '{job="bench", host="h1"}', entries }] })).finish())
}

const dir = mkdtempSync(join(tmpdir(), 'quarry-bench-shippers-'))
const quarryPort = freePort()
const floorPort = freePort()
const quarry = Bun.spawn([process.execPath, 'run', join(ROOT, 'server/main.ts')], {
  env: {
    ...benchEnv(),
    QUARRY_LISTEN: `127.0.0.1:${quarryPort}`,
    QUARRY_DATA_DIR: join(dir, 'quarry'),
    QUARRY_ADMIN_PASSWORD: PASSWORD,
    QUARRY_LOG_LEVEL: 'warn',
    QUARRY_INGEST_RATE: 'unlimited',
    QUARRY_USER_QUOTA: 'unlimited',
    QUARRY_MIN_FREE_SPACE: '0',
    QUARRY_MAX_BODY_SIZE: '16MiB',
  },
  stdout: 'ignore',
  stderr: 'inherit',
})
const floor = Bun.spawn([process.execPath, 'run', import.meta.path, 'floor', String(floorPort), dir], { env: benchEnv(), stdout: 'ignore', stderr: 'inherit' })

try {
  const quarryBase = `http://127.0.0.1:${quarryPort}`
  const floorBase = `http://127.0.0.1:${floorPort}`
  await waitFor(`${quarryBase}/api/version`)
  await waitFor(floorBase)
  const login = (await (await fetch(`${quarryBase}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ User: 'admin', Pass: PASSWORD }) })).json()) as { JWT: string }
  const jwt = login.JWT
  const tokenRes = (await (await fetch(`${quarryBase}/api/tokens`, { method: 'POST', headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'bench', capabilities: ['Ingest'] }) })).json()) as { token: string }
  const auth = { authorization: `Bearer ${tokenRes.token}`, 'content-type': 'application/x-protobuf' }

  console.error(`== building ${REQUESTS} bodies per protocol (${BATCH} lines of ${LINE_BYTES} bytes each)`)
  const bodies = { otlp: Array.from({ length: REQUESTS }, (_, r) => otlpBody(r)), loki: Array.from({ length: REQUESTS }, (_, r) => lokiBody(r)) }
  const paths = { otlp: '/api/ingest/otlp/v1/logs', loki: '/api/ingest/loki/api/v1/push' }

  /** One round: every body sent once from CLIENTS clients; its wall time in ms. Any non-2xx fails the run. */
  async function round(base: string, protocol: 'otlp' | 'loki'): Promise<number> {
    let next = 0
    const started = performance.now()
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        for (let r = next++; r < REQUESTS; r = next++) {
          const res = await fetch(`${base}${paths[protocol]}`, { method: 'POST', headers: auth, body: bodies[protocol][r] })
          await res.arrayBuffer()
          if (res.status !== 200 && res.status !== 204) throw new Error(`${base} ${protocol}: HTTP ${res.status}`)
        }
      }),
    )
    return performance.now() - started
  }

  const times: Record<string, number[]> = { 'quarry otlp': [], 'floor otlp': [], 'quarry loki': [], 'floor loki': [] }
  // warm-up, not counted
  for (const p of ['otlp', 'loki'] as const) {
    await round(quarryBase, p)
    await round(floorBase, p)
  }
  for (let k = 0; k < ROUNDS; k++)
    for (const p of ['otlp', 'loki'] as const) {
      const order = k % 2 === 0 ? ['quarry', 'floor'] : ['floor', 'quarry']
      for (const who of order) times[`${who} ${p}`]!.push(await round(who === 'quarry' ? quarryBase : floorBase, p))
      console.error(`   round ${k + 1} ${p}: quarry ${times[`quarry ${p}`]!.at(-1)!.toFixed(0)} ms, floor ${times[`floor ${p}`]!.at(-1)!.toFixed(0)} ms`)
    }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  const entries = REQUESTS * BATCH
  const figures: Record<string, unknown> = {}
  for (const p of ['otlp', 'loki'] as const) {
    const q = median(times[`quarry ${p}`]!)
    const f = median(times[`floor ${p}`]!)
    figures[p] = {
      quarry: { entriesPerS: Math.round(entries / (q / 1000)), mbPerS: +((entries * LINE_BYTES) / 1e6 / (q / 1000)).toFixed(1), ms: Math.round(q) },
      floor: { entriesPerS: Math.round(entries / (f / 1000)), mbPerS: +((entries * LINE_BYTES) / 1e6 / (f / 1000)).toFixed(1), ms: Math.round(f) },
      ratio: +(f / q).toFixed(3),
      roundMs: { quarry: times[`quarry ${p}`]!.map(Math.round), floor: times[`floor ${p}`]!.map(Math.round) },
    }
  }

  // Every acknowledged entry is there: the count over the whole range, through a search.
  const bearer = { authorization: `Bearer ${jwt}` }
  /** The records of a search over the whole range, once it finished. */
  async function searchRecords(query: string): Promise<{ Data?: string; Count?: number }[]> {
    const json = { SearchString: query, SearchStart: new Date(T0 - 86_400_000).toISOString(), SearchEnd: new Date(Date.now() + 86_400_000).toISOString() }
    const launched = (await (await fetch(`${quarryBase}/api/searchctrl/launch`, { method: 'POST', headers: { ...bearer, 'content-type': 'application/json' }, body: JSON.stringify(json) })).json()) as { SearchID: string }
    for (;;) {
      const d = (await (await fetch(`${quarryBase}/api/searchctrl/${launched.SearchID}/details`, { headers: bearer })).json()) as { Finished: string }
      if (d.Finished !== '0001-01-01T00:00:00Z') break
      await Bun.sleep(5)
    }
    const records = await (await fetch(`${quarryBase}/api/searchctrl/${launched.SearchID}/download/json`, { headers: bearer })).json()
    await fetch(`${quarryBase}/api/searchctrl/${launched.SearchID}`, { method: 'DELETE', headers: bearer })
    return records as never
  }
  const searchCount = async (query: string) => (await searchRecords(query))[0]?.Count ?? 0
  const rounds = ROUNDS + 1
  const counted = await searchCount('tag=bench | count')
  figures.searchCount = { expected: 2 * rounds * entries, foundByCount: counted }

  // From a 2xx to the entry found by a search, once per protocol: a fresh marker line, then searches until found.
  const visible: Record<string, number> = {}
  for (const p of ['otlp', 'loki'] as const) {
    const marker = `marker-${p}-${Date.now()}`
    const { ExportLogsServiceRequest, PushRequest } = protobufMessages()
    const now = Date.now()
    const body =
      p === 'otlp'
        ? ExportLogsServiceRequest.encode(ExportLogsServiceRequest.fromObject({ resourceLogs: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'marker' } }] }, scopeLogs: [{ logRecords: [{ body: { stringValue: marker } }] }] }] })).finish()
        : snappy.compress(PushRequest.encode(PushRequest.fromObject({ streams: [{ labels: '{job="marker"}', entries: [{ timestamp: { seconds: Math.floor(now / 1000), nanos: 0 }, line: marker }] }] })).finish())
    const res = await fetch(`${quarryBase}${paths[p]}`, { method: 'POST', headers: auth, body })
    if (res.status !== 200 && res.status !== 204) throw new Error(`marker ${p}: HTTP ${res.status}`)
    const acked = performance.now()
    while ((await searchRecords(`tag=marker grep ${marker}`)).length < 1) await Bun.sleep(5)
    visible[p] = Math.round(performance.now() - acked)
  }
  figures.ackToSearchMs = visible
  const load = (await Bun.file('/proc/loadavg').text().catch(() => '')).split(' ').slice(0, 3).join(' ')
  console.log(JSON.stringify({ loadAverage: load, batch: BATCH, requests: REQUESTS, clients: CLIENTS, rounds: ROUNDS, lineBytes: LINE_BYTES, ...figures }, null, 1))
} finally {
  quarry.kill()
  floor.kill()
  await Promise.all([quarry.exited, floor.exited])
  rmSync(dir, { recursive: true, force: true })
}
