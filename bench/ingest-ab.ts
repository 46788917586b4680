// A/B of the server's cost per ingest protocol (bench/README.md, "bench/ingest-ab.ts"): the same request bodies, made
// before any clock starts, sent one at a time to servers started from two source trees (this one and another
// checkout, e.g. the commit before a change), in interleaved rounds. Reported per tree and round: the server's CPU
// seconds (user + system, /proc/<pid>/stat) over the requests alone (not its start), its main thread's, and the wall
// time; with the load average, as the machine is shared and CPU time is the figure that does not depend on it.
//
//   bun run bench/ingest-ab.ts <work-dir> <protocol> <tree-A> [<tree-B>]
//
// protocol: lines (POST /api/ingest/lines, the bodies `quarry ingest` sends: multipart, 5,000 lines or 1 MiB),
// json (POST /api/ingest/json, 5,000 entries or 1 MiB), bulk (POST /api/ingest/elastic/_bulk, 5,000 documents), hec
// (POST /api/ingest/splunk/services/collector/event, 5,000 events), syslog (bench/syslog.ts's 200-byte RFC 5424 lines on one
// TCP connection to QUARRY_SYSLOG_TCP, 5,000 lines per write, until /metrics counts them all stored). Environment: BENCH_ENTRIES (200000), BENCH_ROUNDS (3),
// BENCH_CPU_PROF=<dir> (the servers run with `bun --cpu-prof-md --cpu-prof-dir=<dir>`), BENCH_THREADS=1 (each server
// thread's CPU since its start, by name: the main thread, Bun's pool where zstd and file writes run, the JIT).
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { accessLine } from './engine-data'
import { benchEnv, ingestToken, waitForServer } from './session'

const [work = '', protocol = '', ...trees] = process.argv.slice(2)
if (work === '' || !['lines', 'json', 'bulk', 'hec', 'syslog'].includes(protocol) || trees.length === 0) {
  console.error('usage: bun run bench/ingest-ab.ts <work-dir> lines|json|bulk|hec|syslog <tree-A> [<tree-B>]')
  process.exit(2)
}
const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 200_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const CPU_PROF = process.env.BENCH_CPU_PROF ?? ''
const BATCH_ENTRIES = 5000
const BATCH_BYTES = 1 << 20
const BUN = process.execPath
const log = (msg: string) => console.error(`== ${msg}`)

const lines: string[] = []
for (let i = 0; i < ENTRIES; i++) lines.push(accessLine(i))

/** Cuts the lines into batches of at most BATCH_ENTRIES and about BATCH_BYTES of `cost` each. */
function batches<T>(each: (line: string, i: number) => T, cost: (item: T) => number): T[][] {
  const out: T[][] = []
  let batch: T[] = []
  let size = 0
  lines.forEach((line, i) => {
    const item = each(line, i)
    const c = cost(item)
    if (batch.length > 0 && (size + c > BATCH_BYTES || batch.length >= BATCH_ENTRIES)) {
      out.push(batch)
      batch = []
      size = 0
    }
    batch.push(item)
    size += c
  })
  if (batch.length > 0) out.push(batch)
  return out
}

interface Body {
  path: string
  type: string
  body: Uint8Array
  count: number
}

function makeBodies(): Body[] {
  switch (protocol) {
    case 'lines': {
      const boundary = 'quarry-bench-boundary'
      const head = `--${boundary}\r\nContent-Disposition: form-data; name="tag"\r\n\r\nweb\r\n--${boundary}\r\nContent-Disposition: form-data; name="timezone"\r\n\r\nUTC\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="lines"\r\nContent-Type: text/plain\r\n\r\n`
      return batches((l) => `${l}\n`, (l) => l.length).map((b) => ({
        path: '/api/ingest/lines',
        type: `multipart/form-data; boundary=${boundary}`,
        body: Buffer.from(`${head}${b.join('')}\r\n--${boundary}--\r\n`),
        count: b.length,
      }))
    }
    case 'json':
      return batches((l) => JSON.stringify({ Tag: 'web', Data: Buffer.from(l).toString('base64') }), (e) => e.length + 1).map((b) => ({
        path: '/api/ingest/json',
        type: 'application/json',
        body: Buffer.from(`[${b.join(',')}]`),
        count: b.length,
      }))
    case 'bulk':
      return batches((l, i) => `{"index":{"_index":"web"}}\n${JSON.stringify({ '@timestamp': new Date(Date.UTC(2026, 0, 1) + i).toISOString(), message: l })}\n`, (e) => e.length).map((b) => ({
        path: '/api/ingest/elastic/_bulk',
        type: 'application/x-ndjson',
        body: Buffer.from(b.join('')),
        count: b.length,
      }))
    case 'syslog':
      return batches((l, i) => `<134>1 ${new Date(Date.UTC(2026, 0, 1) + i).toISOString()} web-${i % 50} nginx ${1000 + (i % 7)} - - ${l}`.padEnd(199, 'x').slice(0, 199) + '\n', (e) => e.length).map((b) => ({
        path: '',
        type: '',
        body: Buffer.from(b.join('')),
        count: b.length,
      }))
    default:
      return batches((l, i) => JSON.stringify({ time: (Date.UTC(2026, 0, 1) + i) / 1000, sourcetype: 'web', event: l }), (e) => e.length + 1).map((b) => ({
        path: '/api/ingest/splunk/services/collector/event',
        type: 'application/json',
        body: Buffer.from(b.join('\n')),
        count: b.length,
      }))
  }
}

const bodies = makeBodies()
const totalBytes = lines.reduce((n, l) => n + Buffer.byteLength(l), 0)
log(`${ENTRIES} access lines (${(totalBytes / 1e6).toFixed(1)} MB) in ${bodies.length} ${protocol} bodies`)

async function cpuOf(path: string): Promise<number> {
  const stat = await Bun.file(path).text()
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

async function run(tree: string, name: string): Promise<{ wall: number; cpu: number; main: number }> {
  const dataDir = join(work, name)
  rmSync(dataDir, { recursive: true, force: true })
  mkdirSync(dataDir, { recursive: true })
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() })
  const port = probe.port
  probe.stop(true)
  const probe2 = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() })
  const syslogPort = probe2.port as number
  probe2.stop(true)
  const password = `bench-${crypto.randomUUID()}`
  const profile = CPU_PROF === '' ? [] : ['--cpu-prof-md', `--cpu-prof-dir=${CPU_PROF}`]
  const proc = Bun.spawn([BUN, ...profile, 'run', 'server/main.ts'], {
    cwd: tree,
    env: {
      ...benchEnv(),
      QUARRY_DATA_DIR: dataDir,
      QUARRY_LISTEN: `127.0.0.1:${port}`,
      QUARRY_ADMIN_PASSWORD: password,
      QUARRY_LOG_LEVEL: 'warn',
      QUARRY_USER_QUOTA: 'unlimited',
      ...(protocol === 'syslog' ? { QUARRY_SYSLOG_TCP: `127.0.0.1:${syslogPort}` } : {}),
    },
    stdout: 'ignore',
    stderr: Bun.file(join(work, `${name}.log`)),
  })
  try {
    const base = `http://127.0.0.1:${port}`
    await waitForServer(base, 60_000, name)
    const token = await ingestToken(base, password)
    const auth = protocol === 'hec' ? `Splunk ${token}` : `Bearer ${token}`
    const send = async (b: Body) => {
      const r = await fetch(`${base}${b.path}`, { method: 'POST', headers: { authorization: auth, 'content-type': b.type }, body: b.body })
      const text = await r.text()
      if (!r.ok || (protocol === 'bulk' && text.includes('"errors":true'))) throw new Error(`${name}: ${r.status} ${text.slice(0, 300)}`)
    }
    /** The syslog entries /metrics counts as stored. */
    const storedSyslog = async () => {
      let n = 0
      for (const m of (await (await fetch(`${base}/metrics`)).text()).matchAll(/^quarry_ingest_entries_total\{[^}]*listener="syslog-tcp"[^}]*\} (\d+)$/gm)) n += Number(m[1])
      return n
    }
    const { connect } = await import('node:net')
    const sendSyslog = async (parts: Body[], total: number) => {
      await new Promise<void>((resolve, reject) => {
        const s = connect(syslogPort, '127.0.0.1', () => s.end(Buffer.concat(parts.map((b) => b.body))))
        s.on('error', reject)
        s.on('close', () => resolve())
      })
      const deadline = Date.now() + 600_000
      while ((await storedSyslog()) < total) {
        if (Date.now() > deadline) throw new Error(`${name}: syslog entries not stored in time`)
        await Bun.sleep(100)
      }
    }
    // one request first so that the route's first-use costs (its parser's import) are not in the figures
    if (protocol === 'syslog') await sendSyslog(bodies.slice(0, 1), bodies[0]!.count)
    else await send(bodies[0]!)
    const cpu0 = await cpuOf(`/proc/${proc.pid}/stat`)
    const main0 = await cpuOf(`/proc/${proc.pid}/task/${proc.pid}/stat`)
    const t0 = performance.now()
    if (protocol === 'syslog') await sendSyslog(bodies.slice(1), ENTRIES)
    else for (const b of bodies.slice(1)) await send(b)
    const wall = (performance.now() - t0) / 1000
    const cpu = (await cpuOf(`/proc/${proc.pid}/stat`)) - cpu0
    const main = (await cpuOf(`/proc/${proc.pid}/task/${proc.pid}/stat`)) - main0
    if (process.env.BENCH_THREADS === '1') {
      const { readdirSync } = await import('node:fs')
      for (const tid of readdirSync(`/proc/${proc.pid}/task`)) {
        const stat = await Bun.file(`/proc/${proc.pid}/task/${tid}/stat`).text()
        const c = await cpuOf(`/proc/${proc.pid}/task/${tid}/stat`)
        if (c > 0.05) log(`  thread ${tid} ${stat.slice(stat.indexOf('('), stat.lastIndexOf(')') + 1)}: ${c.toFixed(2)} s since start`)
      }
    }
    return { wall, cpu, main }
  } finally {
    proc.kill('SIGTERM')
    await proc.exited
  }
}

const results: Record<string, { wall: number; cpu: number; main: number }[]> = {}
const labels = trees.map((_, k) => String.fromCharCode(65 + k))
for (let round = 0; round < ROUNDS; round++) {
  for (let j = 0; j < trees.length; j++) {
    const k = (j + round) % trees.length
    const load = (await Bun.file('/proc/loadavg').text()).split(' ')[0]
    const r = await run(trees[k]!, `${protocol}-${labels[k]}-${round}`)
    ;(results[labels[k]!] ??= []).push(r)
    log(`round ${round + 1} ${labels[k]} (${trees[k]}): wall ${r.wall.toFixed(2)} s, CPU ${r.cpu.toFixed(2)} s, main thread ${r.main.toFixed(2)} s, load ${load}`)
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const sent = ENTRIES - bodies[0]!.count
for (const label of labels) {
  const rs = results[label]!
  const cpu = median(rs.map((r) => r.cpu))
  console.log(
    `${label}: CPU median ${cpu.toFixed(2)} s (${rs.map((r) => r.cpu.toFixed(2)).join(', ')}), main ${median(rs.map((r) => r.main)).toFixed(2)} s, wall median ${median(rs.map((r) => r.wall)).toFixed(2)} s (${rs.map((r) => r.wall.toFixed(2)).join(', ')}); about ${Math.round(sent / cpu).toLocaleString('en-US')} entries per CPU second`,
  )
}
