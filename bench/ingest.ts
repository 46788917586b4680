// The ingest benchmark (bench/ingest.sh; bench/README.md, "bench/ingest.sh"): the same generated lines stored
//   - by the sqlite3 CLI into a fresh Quarry store, in one transaction (`.import` into a temporary table, then one
//     INSERT ... SELECT into `entries`, the store's own schema and indexes, WAL, synchronous=NORMAL): the floor;
//   - through POST /api/ingest/json of a fresh server, in batches of at most BATCH_ENTRIES entries and 1 MiB of body
//     (the CLI's), one request at a time; the bodies are made before the clock starts;
//   - by `quarry ingest FILE --tag T` against a fresh server (a process of its own, as a user runs it);
// in interleaved rounds (each method once per round, the order turning), each figure its median round. During the
// route's runs the server compacts every second: the rows waiting (not yet in segments) are sampled every 250 ms
// from a read-only connection. Last, one server takes the access and JSON lines through the route and compacts them
// all: the data directory's size against the input's.
//
//   bun run bench/ingest.ts <work-dir>
//
// Each method's CPU time (user + system) is reported beside its wall time, as the machine is shared: the sqlite3
// process's; the server's while the route's requests ran (from /proc/<pid>/stat); the server's plus the CLI's.
//
// Environment: BENCH_ENTRIES (1000000 lines of each kind), BENCH_ROUNDS (3), BENCH_NO_SIZE=1 (skip the size run),
// BENCH_METHODS (a comma-separated subset of sqlite3,route,cli), BENCH_CPU_PROF=<dir> (the servers run with
// `bun --cpu-prof-md --cpu-prof-dir=<dir>`: a profile per server and CLI process, written when it ends).
import { Database } from 'bun:sqlite'
import { mkdirSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { createSqliteStore } from '../server/repos'
import { accessLine, jsonLine } from './engine-data'
import { benchEnv, ingestToken, waitForServer } from './session'

const work = process.argv[2] ?? ''
if (work === '') {
  console.error('usage: bun run bench/ingest.ts <work-dir>')
  process.exit(2)
}
const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 1_000_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const METHODS = new Set((process.env.BENCH_METHODS ?? 'sqlite3,route,cli').split(','))
const CPU_PROF = process.env.BENCH_CPU_PROF ?? ''
const BATCH_ENTRIES = 5000
const BATCH_BYTES = 1 << 20
const ROOT = join(import.meta.dir, '..')
const BUN = process.execPath
const log = (msg: string) => console.error(`== ${msg}`)

// --- the lines ---------------------------------------------------------------------------------------------------
const files = { access: join(work, 'access.log'), json: join(work, 'json.log') }
for (const [kind, gen] of [['access', accessLine], ['json', jsonLine]] as const) {
  const w = Bun.file(files[kind]).writer()
  for (let i = 0; i < ENTRIES; i++) w.write(`${gen(i)}\n`)
  await w.end()
}
const inputBytes = { access: statSync(files.access).size, json: statSync(files.json).size }
log(`${ENTRIES} access lines (${mb(inputBytes.access)} MB), ${ENTRIES} JSON lines (${mb(inputBytes.json)} MB)`)

function mb(n: number): string {
  return (n / 1e6).toFixed(1)
}

/** The request bodies of a file's lines, as the CLI cuts them. */
async function bodies(file: string, tag: string): Promise<string[]> {
  const out: string[] = []
  let batch: string[] = []
  let size = 2
  const text = await Bun.file(file).text()
  for (const line of text.split('\n')) {
    if (line === '') continue
    const entry = JSON.stringify({ Tag: tag, Data: Buffer.from(line).toString('base64') })
    if (batch.length > 0 && (size + entry.length + 1 > BATCH_BYTES || batch.length >= BATCH_ENTRIES)) {
      out.push(`[${batch.join(',')}]`)
      batch = []
      size = 2
    }
    batch.push(entry)
    size += entry.length + 1
  }
  if (batch.length > 0) out.push(`[${batch.join(',')}]`)
  return out
}

// --- a server ----------------------------------------------------------------------------------------------------
interface Server {
  base: string
  dataDir: string
  token: string
  /** CPU seconds (user + system) the server process has used so far. */
  cpu(): Promise<number>
  /** CPU seconds of its main thread alone (JavaScript and SQLite; not Bun's thread pool, where zstd runs). */
  mainCpu(): Promise<number>
  /** Seconds its main thread was runnable but waited for a CPU (/proc/<pid>/task/<pid>/schedstat). */
  mainWait(): Promise<number>
  stop(): Promise<void>
}

/** CPU seconds (user + system, all threads) a process has used, from /proc/<pid>/stat (clock ticks of 1/100 s). */
async function cpuOf(pid: number, thread = false): Promise<number> {
  const stat = await Bun.file(thread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`).text()
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

async function startServer(name: string): Promise<Server> {
  const dataDir = join(work, name)
  rmSync(dataDir, { recursive: true, force: true })
  mkdirSync(dataDir, { recursive: true })
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() })
  const port = probe.port
  probe.stop(true)
  const password = `bench-${crypto.randomUUID()}`
  const profile = CPU_PROF === '' ? [] : ['--cpu-prof-md', `--cpu-prof-dir=${CPU_PROF}`]
  const proc = Bun.spawn([BUN, ...profile, 'run', 'server/main.ts'], {
    cwd: ROOT,
    env: {
      ...benchEnv(),
      QUARRY_DATA_DIR: dataDir,
      QUARRY_LISTEN: `127.0.0.1:${port}`,
      QUARRY_ADMIN_PASSWORD: password,
      QUARRY_LOG_LEVEL: 'warn',
      QUARRY_COMPACT_INTERVAL: '1s',
      QUARRY_USER_QUOTA: 'unlimited',
      // the store's speed is measured, not the per-user rate (64 MiB/s by default, which a fast machine's CLI outruns)
      QUARRY_INGEST_RATE: 'unlimited',
    },
    stdout: 'ignore',
    stderr: Bun.file(join(work, `${name}.log`)),
  })
  const base = `http://127.0.0.1:${port}`
  await waitForServer(base, 30_000, name)
  const token = await ingestToken(base, password)
  return {
    base,
    dataDir,
    token,
    cpu: () => cpuOf(proc.pid),
    mainCpu: () => cpuOf(proc.pid, true),
    mainWait: async () => Number((await Bun.file(`/proc/${proc.pid}/task/${proc.pid}/schedstat`).text()).split(' ')[1]) / 1e9,
    async stop() {
      proc.kill('SIGTERM')
      await proc.exited
    },
  }
}

/** Rows waiting for compaction, sampled from a read-only connection to the server's store. */
function sampler(dataDir: string) {
  const db = new Database(join(dataDir, 'quarry.db'), { readonly: true })
  const q = db.query<{ n: number }, []>('SELECT count(*) AS n FROM entries')
  const samples: { at: number; rows: number }[] = []
  const t0 = performance.now()
  const timer = setInterval(() => {
    try {
      samples.push({ at: performance.now() - t0, rows: q.get()!.n })
    } catch {}
  }, 250)
  return {
    samples,
    rows: () => q.get()!.n,
    stop() {
      clearInterval(timer)
      db.close()
    },
  }
}

/** Waits until the rows waiting are below one segment's worth (the compaction caught up); answers the ms it took. */
async function settle(s: ReturnType<typeof sampler>, limitMs = 600_000): Promise<number> {
  const t0 = performance.now()
  while (s.rows() >= 20_000) {
    if (performance.now() - t0 > limitMs) throw new Error('the compaction did not catch up')
    await Bun.sleep(100)
  }
  return performance.now() - t0
}

// --- the methods -------------------------------------------------------------------------------------------------
interface Run {
  seconds: number
  /** CPU seconds of the work (see the header). */
  cpu: number
  extra?: Record<string, number>
}

async function viaSqlite3(round: number): Promise<Run> {
  const dir = join(work, `sqlite3-${round}`)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const path = join(dir, 'quarry.db')
  createSqliteStore(path).db.close()
  const script = [
    'PRAGMA journal_mode = WAL;',
    'PRAGMA synchronous = NORMAL;',
    'BEGIN;',
    'CREATE TEMP TABLE lines (line TEXT);',
    '.mode ascii',
    '.separator "\\037" "\\n"',
    `.import ${files.access} lines`,
    "INSERT INTO ingest_tags (name) VALUES ('access');",
    `INSERT INTO entries (ts, tag_id, src, data) SELECT ${Date.now()} + rowid, (SELECT id FROM ingest_tags WHERE name = 'access'), '', CAST(line AS BLOB) FROM lines;`,
    'COMMIT;',
  ].join('\n')
  const t0 = performance.now()
  const p = Bun.spawn(['sqlite3', path], { stdin: new Blob([script]), stdout: 'pipe', stderr: 'pipe' })
  const code = await p.exited
  const seconds = (performance.now() - t0) / 1000
  if (code !== 0) throw new Error(`sqlite3: ${await new Response(p.stderr).text()}`)
  const usage = p.resourceUsage()!
  const cpu = Number(usage.cpuTime.user + usage.cpuTime.system) / 1e6
  const db = new Database(path, { readonly: true })
  const n = db.query<{ n: number }, []>('SELECT count(*) AS n FROM entries').get()!.n
  db.close()
  rmSync(dir, { recursive: true, force: true })
  if (n !== ENTRIES) throw new Error(`sqlite3 stored ${n} entries, not ${ENTRIES}`)
  return { seconds, cpu }
}

const accessBodies = await bodies(files.access, 'access')

async function viaRoute(round: number): Promise<Run> {
  const s = await startServer(`route-${round}`)
  const rows = sampler(s.dataDir)
  try {
    const headers = { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' }
    const cpu0 = await s.cpu()
    const main0 = await s.mainCpu()
    const wait0 = await s.mainWait()
    const client0 = process.cpuUsage()
    const t0 = performance.now()
    let stored = 0
    for (const body of accessBodies) {
      const res = await fetch(`${s.base}/api/ingest/json`, { method: 'POST', headers, body })
      if (!res.ok) throw new Error(`ingest: ${res.status} ${await res.text()}`)
      stored += ((await res.json()) as { Count: number }).Count
    }
    const seconds = (performance.now() - t0) / 1000
    const cpu = (await s.cpu()) - cpu0
    const mainCpu = (await s.mainCpu()) - main0
    const mainWait = (await s.mainWait()) - wait0
    const client = process.cpuUsage(client0)
    if (stored !== ENTRIES) throw new Error(`the route stored ${stored} entries, not ${ENTRIES}`)
    const during = rows.samples.filter((x) => x.at <= seconds * 1000)
    const atEnd = rows.rows()
    const catchUp = await settle(rows)
    const cpuWithCatchUp = (await s.cpu()) - cpu0
    return {
      seconds,
      cpu,
      extra: {
        'server main thread CPU (s)': Math.round(mainCpu * 100) / 100,
        'server main thread waiting for a CPU (s)': Math.round(mainWait * 100) / 100,
        'client CPU (s)': Math.round((client.user + client.system) / 1e4) / 100,
        'rows waiting, max during ingest': Math.max(0, ...during.map((x) => x.rows)),
        'rows waiting at the end': atEnd,
        'compacted share at the end (%)': Math.round((100 * (ENTRIES - atEnd)) / ENTRIES),
        'catch-up after the end (s)': Math.round(catchUp / 100) / 10,
        'server CPU with the catch-up (s)': Math.round(cpuWithCatchUp * 100) / 100,
      },
    }
  } finally {
    rows.stop()
    await s.stop()
    rmSync(s.dataDir, { recursive: true, force: true })
  }
}

async function viaCli(round: number): Promise<Run> {
  const s = await startServer(`cli-${round}`)
  try {
    const cpu0 = await s.cpu()
    const t0 = performance.now()
    const profile = CPU_PROF === '' ? [] : ['--cpu-prof-md', `--cpu-prof-dir=${CPU_PROF}`]
    const p = Bun.spawn([BUN, ...profile, 'run', 'cli/main.ts', 'ingest', files.access, '--tag', 'access'], {
      cwd: ROOT,
      env: { ...benchEnv(), QUARRY_URL: s.base, QUARRY_TOKEN: s.token },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const code = await p.exited
    const seconds = (performance.now() - t0) / 1000
    if (code !== 0) throw new Error(`quarry ingest: ${await new Response(p.stderr).text()}`)
    const usage = p.resourceUsage()!
    const server = (await s.cpu()) - cpu0
    const cli = Number(usage.cpuTime.user + usage.cpuTime.system) / 1e6
    return { seconds, cpu: server + cli, extra: { 'server CPU (s)': Math.round(server * 100) / 100, 'CLI CPU (s)': Math.round(cli * 100) / 100 } }
  } finally {
    await s.stop()
    rmSync(s.dataDir, { recursive: true, force: true })
  }
}

const methods = (
  [
    ['sqlite3', 'sqlite3, one transaction', viaSqlite3],
    ['route', 'POST /api/ingest/json', viaRoute],
    ['cli', 'quarry ingest', viaCli],
  ] as const
)
  .filter(([key]) => METHODS.has(key))
  .map(([, name, run]) => [name, run] as [string, (round: number) => Promise<Run>])
const runs = new Map<string, Run[]>(methods.map(([name]) => [name, []]))
for (let round = 0; round < ROUNDS; round++) {
  for (let k = 0; k < methods.length; k++) {
    const [name, run] = methods[(k + round) % methods.length]!
    const r = await run(round)
    runs.get(name)!.push(r)
    log(`round ${round + 1}: ${name}: ${r.seconds.toFixed(2)} s, CPU ${r.cpu.toFixed(2)} s${r.extra ? ` ${JSON.stringify(r.extra)}` : ''}`)
  }
}

const median = (list: Run[]) => [...list].sort((a, b) => a.seconds - b.seconds)[Math.floor(list.length / 2)]!
const medianCpu = (list: Run[]) => [...list].map((r) => r.cpu).sort((a, b) => a - b)[Math.floor(list.length / 2)]!
const floorRuns = runs.get('sqlite3, one transaction')
const floor = floorRuns ? median(floorRuns).seconds : Number.NaN
const floorCpu = floorRuns ? medianCpu(floorRuns) : Number.NaN
console.log(`| method | seconds (median of ${ROUNDS}) | entries/s | MB/s | of sqlite3 | CPU s (median) | of sqlite3's CPU | rounds (s) | rounds (CPU s) |`)
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |')
for (const [name] of methods) {
  const list = runs.get(name)!
  const m = median(list)
  const cpu = medianCpu(list)
  console.log(
    `| ${name} | ${m.seconds.toFixed(2)} | ${Math.round(ENTRIES / m.seconds).toLocaleString('en-US')} | ${mb(inputBytes.access / m.seconds)} | ${(floor / m.seconds).toFixed(2)} | ${cpu.toFixed(2)} | ${(floorCpu / cpu).toFixed(2)} | ${list
      .map((r) => r.seconds.toFixed(2))
      .join(', ')} | ${list.map((r) => r.cpu.toFixed(2)).join(', ')} |`,
  )
}
const routeRuns = runs.get('POST /api/ingest/json')
if (routeRuns) {
  console.log()
  console.log('Compaction during the route runs (each round):')
  for (const r of routeRuns) console.log(`- ${JSON.stringify(r.extra)}`)
}

// --- the data directory's size after both kinds and compaction --------------------------------------------------
if (process.env.BENCH_NO_SIZE !== '1') {
  const s = await startServer('size')
  const rows = sampler(s.dataDir)
  try {
    const headers = { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' }
    for (const [file, tag] of [[files.access, 'access'], [files.json, 'json']] as const)
      for (const body of await bodies(file, tag)) {
        const res = await fetch(`${s.base}/api/ingest/json`, { method: 'POST', headers, body })
        if (!res.ok) throw new Error(`ingest: ${res.status} ${await res.text()}`)
      }
    await settle(rows)
    // The last compaction run's reclaim and checkpoint: a few seconds more, then the size as `du` sees it.
    await Bun.sleep(3000)
    rows.stop()
    await s.stop()
    const du = Bun.spawnSync(['du', '-sb', s.dataDir]).stdout.toString().split('\t')[0]
    const blobs = Bun.spawnSync(['du', '-sb', join(s.dataDir, 'blobs')]).stdout.toString().split('\t')[0]
    const db = statSync(join(s.dataDir, 'quarry.db')).size
    const input = inputBytes.access + inputBytes.json
    console.log()
    console.log(
      `Data directory after ${ENTRIES} access + ${ENTRIES} JSON lines (${mb(input)} MB) and compaction: ${mb(Number(du))} MB (${(Number(du) / input).toFixed(2)} x the input): quarry.db ${mb(db)} MB, blobs ${mb(Number(blobs))} MB`,
    )
  } finally {
    rmSync(s.dataDir, { recursive: true, force: true })
  }
}
