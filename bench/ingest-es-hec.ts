// Elasticsearch bulk and Splunk HEC event ingest: entries/s and MB/s of Quarry against a floor, interleaved.
//
//   bun run bench/ingest-es-hec.ts [--entries N] [--batch B] [--concurrency C] [--rounds R]
//
// Defaults: 200,000 entries per run, 1,000 per request, 4 requests in flight, 3 rounds. Each round runs, in turn,
// Quarry ES, floor ES, Quarry HEC, floor HEC on fresh bodies of the same bytes: lines of 200 bytes (the document's or
// event's whole JSON text), each with its time. The figure is what a shipper waits for: from the first request sent
// to the last 2xx, over loopback HTTP, every entry durable (committed) before its answer. The bulk requests ask for
// what Filebeat and Logstash ask (`?filter_path=errors,items.*.error,items.*.status`), which the floor answers.
// The floor (`floor` mode, a child process of this script): a plain Bun.serve that reads the same body, parses it the
// same way (NDJSON action and document lines with JSON.parse and @timestamp; HEC: JSON events one after another),
// and writes the same rows (ts, tag id, src, data) into the same table and index of SQLite in WAL mode with
// synchronous=NORMAL, one transaction per request: what Quarry's store does, without its HTTP framework, auth, limits
// and metrics. Quarry runs as `server/main.ts` (QUARRY_INGEST_RATE=unlimited) on a fresh data directory.
// After the runs, the time from a 2xx to the entry being found by a search is measured (median of 5 single entries).
import { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { benchEnv } from './session'

const ROOT = join(import.meta.dir, '..')

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : Number(process.argv[i + 1])
}

function freePort(): number {
  const s = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() })
  const port = s.port!
  s.stop(true)
  return port
}

async function waitFor(url: string): Promise<void> {
  const deadline = Date.now() + 60_000
  for (;;) {
    try {
      await fetch(url)
      return
    } catch {
      if (Date.now() > deadline) throw new Error(`${url} did not answer within 60 s`)
      await Bun.sleep(100)
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The floor server.

async function floor(dir: string, port: number) {
  const db = new Database(join(dir, 'floor.db'), { create: true, strict: true })
  db.run('PRAGMA journal_mode = WAL')
  db.run('PRAGMA synchronous = NORMAL')
  db.run('CREATE TABLE ingest_tags (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)')
  db.run('CREATE TABLE entries (id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, tag_id INTEGER NOT NULL REFERENCES ingest_tags(id), src TEXT NOT NULL, data BLOB NOT NULL)')
  db.run('CREATE INDEX entries_time_tag ON entries(ts, tag_id)')
  const insert = db.query('INSERT INTO entries (ts, tag_id, src, data) VALUES (?, ?, ?, ?)')
  const tagIds = new Map<string, number>()
  const tagId = (name: string) => {
    let id = tagIds.get(name)
    if (id === undefined) {
      id = (db.query('INSERT INTO ingest_tags (name) VALUES (?) ON CONFLICT(name) DO UPDATE SET name = excluded.name RETURNING id').get(name) as { id: number }).id
      tagIds.set(name, id)
    }
    return id
  }
  const store = db.transaction((rows: [number, string, string, Uint8Array][]) => {
    for (const [ts, tag, src, data] of rows) insert.run(ts, tagId(tag), src, data)
  })
  const decoder = new TextDecoder()
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port,
    async fetch(request) {
      const body = new Uint8Array(await request.arrayBuffer())
      const src = server.requestIP(request)?.address ?? ''
      const now = Date.now()
      const rows: [number, string, string, Uint8Array][] = []
      const path = new URL(request.url).pathname
      if (path.endsWith('/_bulk')) {
        let pos = 0
        let index = ''
        let action = true
        while (pos < body.length) {
          let end = body.indexOf(10, pos)
          if (end === -1) end = body.length
          const line = body.subarray(pos, end)
          pos = end + 1
          if (line.length === 0) continue
          const value = JSON.parse(decoder.decode(line))
          if (action) index = value.index._index
          else {
            const t = value['@timestamp']
            rows.push([typeof t === 'string' ? Date.parse(t) : now, index, src, line])
          }
          action = !action
        }
        store(rows)
        return Response.json({ errors: false, items: rows.map(() => ({ index: { status: 201 } })) })
      }
      // HEC events: split the concatenated objects on their closing brace at depth 0
      let depth = 0
      let inString = false
      let start = -1
      for (let i = 0; i < body.length; i++) {
        const c = body[i]!
        if (inString) {
          if (c === 92) i++
          else if (c === 34) inString = false
        } else if (c === 34) inString = true
        else if (c === 123) {
          if (depth++ === 0) start = i
        } else if (c === 125 && --depth === 0) {
          const e = JSON.parse(decoder.decode(body.subarray(start, i + 1)))
          rows.push([Math.round(e.time * 1000), e.sourcetype, src, new TextEncoder().encode(typeof e.event === 'string' ? e.event : JSON.stringify(e.event))])
        }
      }
      store(rows)
      return Response.json({ text: 'Success', code: 0 })
    },
  })
  console.log('floor listening')
}

// ---------------------------------------------------------------------------------------------------------------
// The run.

const LINE = 200
const T0 = Date.parse('2026-01-01T00:00:00Z')

/** The requests of one run: `entries` entries in requests of `batch`, each document or event 200 bytes of JSON. */
function bodies(kind: 'es' | 'hec', entries: number, batch: number, seed: number): { bodies: Uint8Array[]; dataBytes: number } {
  const out: Uint8Array[] = []
  let dataBytes = 0
  for (let first = 0; first < entries; first += batch) {
    const parts: string[] = []
    for (let i = first; i < Math.min(entries, first + batch); i++) {
      const ts = T0 + seed * 10_000_000 + i
      if (kind === 'es') {
        const head = `{"@timestamp":"${new Date(ts).toISOString()}","message":"`
        const doc = `${head}${filler(i, LINE - head.length - 2)}"}`
        dataBytes += doc.length
        parts.push(`{"index":{"_index":"bench"}}\n${doc}\n`)
      } else {
        const event = filler(i, LINE)
        dataBytes += event.length
        parts.push(`{"time":${(ts / 1000).toFixed(3)},"sourcetype":"bench","event":"${event}"}`)
      }
    }
    out.push(new TextEncoder().encode(parts.join(kind === 'es' ? '' : '\n')))
  }
  return { bodies: out, dataBytes }
}

function filler(i: number, length: number): string {
  const s = `line ${i} 127.0.0.1 - - GET /index.html HTTP/1.1 200 612 Mozilla/5.0 (X11; Linux x86_64) `
  return s.repeat(Math.ceil(length / s.length)).slice(0, length)
}

async function send(url: string, headers: Record<string, string>, list: Uint8Array[], concurrency: number): Promise<number> {
  let next = 0
  const started = performance.now()
  const worker = async () => {
    while (next < list.length) {
      const body = list[next++]!
      const res = await fetch(url, { method: 'POST', body, headers })
      const text = await res.text()
      if (res.status !== 200 || text.includes('"errors":true')) throw new Error(`${url}: ${res.status} ${text.slice(0, 300)}`)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return (performance.now() - started) / 1000
}

async function bench() {
  const entries = arg('entries', 200_000)
  const batch = arg('batch', 1000)
  const concurrency = arg('concurrency', 4)
  const rounds = arg('rounds', 3)
  const dir = mkdtempSync(join(tmpdir(), 'quarry-bench-es-hec-'))
  const quarryPort = freePort()
  const floorPort = freePort()
  const password = 'bench-password-1'
  const quarry = Bun.spawn([process.execPath, 'run', join(ROOT, 'server/main.ts')], {
    cwd: ROOT,
    env: { ...benchEnv(), QUARRY_DATA_DIR: join(dir, 'quarry'), QUARRY_LISTEN: `127.0.0.1:${quarryPort}`, QUARRY_ADMIN_PASSWORD: password, QUARRY_LOG_LEVEL: 'warn', QUARRY_INGEST_RATE: 'unlimited', QUARRY_USER_QUOTA: 'unlimited' },
    stdout: 'inherit',
    stderr: 'inherit',
  })
  const floorProc = Bun.spawn([process.execPath, 'run', import.meta.path, 'floor', dir, String(floorPort)], { env: benchEnv(), stdout: 'inherit', stderr: 'inherit' })
  try {
    const q = `http://127.0.0.1:${quarryPort}`
    const f = `http://127.0.0.1:${floorPort}`
    await waitFor(`${q}/api/health`)
    await waitFor(f)
    const login = await (await fetch(`${q}/api/login`, { method: 'POST', body: JSON.stringify({ User: 'admin', Pass: password }), headers: { 'content-type': 'application/json' } })).json()
    const jwt = (login as { JWT: string }).JWT
    const created = await (await fetch(`${q}/api/tokens`, { method: 'POST', body: JSON.stringify({ name: 'bench', capabilities: ['Ingest', 'Search', 'Download'] }), headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' } })).json()
    const token = (created as { token: string }).token
    const targets: { name: string; kind: 'es' | 'hec'; url: string; headers: Record<string, string> }[] = [
      { name: 'Quarry ES bulk', kind: 'es', url: `${q}/api/ingest/elastic/_bulk?filter_path=errors,items.*.error,items.*.status`, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' } },
      { name: 'floor ES bulk', kind: 'es', url: `${f}/_bulk`, headers: { 'content-type': 'application/x-ndjson' } },
      { name: 'Quarry HEC event', kind: 'hec', url: `${q}/api/ingest/splunk/services/collector/event`, headers: { authorization: `Splunk ${token}` } },
      { name: 'floor HEC event', kind: 'hec', url: `${f}/services/collector/event`, headers: {} },
    ]
    const results = new Map<string, { seconds: number; entries: number; bytes: number }[]>()
    // warm-up: one small run of each, not counted
    for (const t of targets) await send(t.url, t.headers, bodies(t.kind, 2 * batch, batch, 99).bodies, concurrency)
    for (let r = 0; r < rounds; r++)
      for (const t of targets) {
        const made = bodies(t.kind, entries, batch, r)
        const seconds = await send(t.url, t.headers, made.bodies, concurrency)
        const list = results.get(t.name) ?? []
        list.push({ seconds, entries, bytes: made.dataBytes })
        results.set(t.name, list)
        console.log(`round ${r + 1} ${t.name}: ${(entries / seconds).toFixed(0)} entries/s, ${(made.dataBytes / seconds / 1e6).toFixed(1)} MB/s`)
      }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
    const rate = (name: string) => median(results.get(name)!.map((x) => x.entries / x.seconds))
    const mbps = (name: string) => median(results.get(name)!.map((x) => x.bytes / x.seconds / 1e6))
    // Quarry's run and the floor's of the same round ran back to back: their ratio is the figure, its median over
    // the rounds the one reported (the machine's load moves between rounds more than between two adjacent runs).
    const ratios = (a: string, b: string) => results.get(a)!.map((x, i) => results.get(b)![i]!.seconds / x.seconds)
    console.log(`\nload average at the end: ${loadavg().map((l) => l.toFixed(1)).join(' ')}; ${entries} entries of ${LINE} bytes per run, ${batch} per request, ${concurrency} in flight, ${rounds} rounds`)
    console.log(`\n| Protocol | Quarry entries/s | Quarry MB/s | floor entries/s | floor MB/s | Quarry / floor per round | median |`)
    console.log(`|---|---|---|---|---|---|---|`)
    for (const [label, a, b] of [['ES bulk', 'Quarry ES bulk', 'floor ES bulk'], ['HEC event', 'Quarry HEC event', 'floor HEC event']] as const)
      console.log(`| ${label} | ${rate(a).toFixed(0)} | ${mbps(a).toFixed(1)} | ${rate(b).toFixed(0)} | ${mbps(b).toFixed(1)} | ${ratios(a, b).map((r) => r.toFixed(2)).join(', ')} | ${median(ratios(a, b)).toFixed(2)} |`)

    // From a 2xx to the entry found by a search: one unique entry each time, searched until found.
    const waits: number[] = []
    for (let i = 0; i < 5; i++) {
      const marker = `marker${i}x${Date.now()}`
      const body = `{"index":{"_index":"latency"}}\n{"message":"${marker}"}\n`
      const res = await fetch(`${q}/api/ingest/elastic/_bulk`, { method: 'POST', body, headers: { authorization: `Bearer ${token}` } })
      if (res.status !== 200) throw new Error(`latency probe: ${res.status}`)
      const acked = performance.now()
      for (;;) {
        const launched = (await (await fetch(`${q}/api/searchctrl/launch`, {
          method: 'POST',
          body: JSON.stringify({ SearchString: `tag=latency grep ${marker}`, SearchStart: new Date(Date.now() - 60_000).toISOString(), SearchEnd: new Date(Date.now() + 60_000).toISOString() }),
          headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
        })).json()) as { SearchID: string }
        let rows: unknown[] = []
        for (let tries = 0; tries < 200; tries++) {
          const got = await fetch(`${q}/api/searchctrl/${launched.SearchID}/download/json`, { headers: { authorization: `Bearer ${jwt}` } })
          if (got.status === 200) {
            rows = (await got.json()) as unknown[]
            break
          }
          await Bun.sleep(5)
        }
        if (rows.length > 0) break
      }
      waits.push(performance.now() - acked)
    }
    console.log(`\nfrom the 2xx to the entry found by a search (launch + download, until found): median ${median(waits).toFixed(0)} ms of 5`)
  } finally {
    quarry.kill()
    floorProc.kill()
    await Promise.all([quarry.exited, floorProc.exited])
    rmSync(dir, { recursive: true, force: true })
  }
}

if (process.argv[2] === 'floor') await floor(process.argv[3]!, Number(process.argv[4]))
else await bench()
