// bench/syslog.sh's run: syslog over TCP into Quarry (server/main.ts, QUARRY_SYSLOG_TCP) against the floor
// (bench/syslog-floor.ts: a plain Bun TCP server writing the same rows to SQLite with the same durability), in one
// interleaved run on the same bytes: BENCH_LINES 200-byte RFC 5424 lines (LF-framed) per round, sent by this process
// on one connection as fast as each server reads, timed from the first byte to the last entry stored (Quarry's
// /metrics count, the floor's /count: both count only what is committed; each asked every 100 ms). Then, per round, the time from sending one
// more message to a search finding it (launch, wait, download, over HTTP, repeated until found).
// Prints a Markdown block; bench/syslog.sh appends it to bench/results/syslog.md.
import { mkdtempSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { benchEnv } from './session'

const LINES = Number(process.env.BENCH_LINES ?? 300_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const ROOT = join(import.meta.dir, '..')
const PASSWORD = 'bench-password-1'

/** One 200-byte line (with its LF): an RFC 5424 message whose time is `at`. */
function line(i: number, at: number): string {
  const head = `<134>1 ${new Date(at).toISOString()} web-${i % 50} nginx ${1000 + (i % 7)} - - `
  const body = `GET /api/items/${i} HTTP/1.1 200 ${i % 9973} "Mozilla/5.0" request_time=0.${String(i % 1000).padStart(3, '0')} `
  return `${head}${body}`.padEnd(199, 'x').slice(0, 199) + '\n'
}

function payload(round: number): Buffer {
  const t0 = Date.now() - 3_600_000 + round * 1000
  return Buffer.from(Array.from({ length: LINES }, (_, i) => line(i, t0 + Math.floor(i / 100))).join(''))
}

function send(port: number, data: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => s.end(data))
    s.on('error', reject)
    s.on('close', () => resolve())
  })
}

/**
 * Reads until `done`, every `everyMs`: 100 ms for the stored counts (Quarry's /metrics renders the whole registry, which
 * asked every 10 ms took a visible share of its CPU; a tenth of a second is under 2 % of a round), at once for searches.
 */
async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, everyMs = 100, deadlineMs = 600_000): Promise<T> {
  const end = Date.now() + deadlineMs
  for (;;) {
    const v = await read()
    if (done(v) || Date.now() > end) return v
    await Bun.sleep(everyMs)
  }
}

async function startQuarry(dir: string) {
  const proc = Bun.spawn([process.execPath, 'run', join(ROOT, 'server/main.ts')], {
    env: benchEnv({
      PATH: process.env.PATH ?? '',
      QUARRY_LISTEN: '127.0.0.1:0',
      QUARRY_DATA_DIR: join(dir, 'quarry'),
      QUARRY_ADMIN_PASSWORD: PASSWORD,
      QUARRY_SYSLOG_TCP: '127.0.0.1:0',
      QUARRY_LOG_LEVEL: 'info',
    }),
    stdout: 'pipe',
    stderr: 'inherit',
  })
  let url = ''
  let port = 0
  const decoder = new TextDecoder()
  let buffered = ''
  const reader = proc.stdout.getReader()
  while (!url || !port) {
    const { value, done } = await reader.read()
    if (done) throw new Error('Quarry exited before listening')
    buffered += decoder.decode(value)
    const parts = buffered.split('\n')
    buffered = parts.pop()!
    for (const l of parts) {
      const e = JSON.parse(l)
      if (e.msg === 'listening') url = e.address
      if (e.msg === 'syslog listening') port = e.port
    }
  }
  // keep draining its log
  void (async () => {
    for (;;) if ((await reader.read()).done) break
  })()
  const login = await fetch(`${url}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ User: 'admin', Pass: PASSWORD }) })
  const jwt = ((await login.json()) as { JWT: string }).JWT
  const stored = async () => {
    const text = await (await fetch(`${url}/metrics`)).text()
    let n = 0
    for (const m of text.matchAll(/^quarry_ingest_entries_total\{[^}]*listener="syslog-tcp"[^}]*\} (\d+)$/gm)) n += Number(m[1])
    return n
  }
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${jwt}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    })
    return res.json() as Promise<any>
  }
  /** Entries a search for `text` finds between `from` and `to`. */
  const found = async (text: string, from: number, to: number) => {
    const { SearchID } = await call('POST', '/api/searchctrl/launch', { SearchString: `tag=syslog grep ${text}`, SearchStart: new Date(from).toISOString(), SearchEnd: new Date(to).toISOString() })
    while ((await call('GET', `/api/searchctrl/${SearchID}/details`)).Finished === '0001-01-01T00:00:00Z') await Bun.sleep(2)
    const results = (await call('GET', `/api/searchctrl/${SearchID}/download/json`)) as unknown[]
    await call('DELETE', `/api/searchctrl/${SearchID}`)
    return results.length
  }
  return { proc, port, stored, found }
}

async function startFloor(dir: string) {
  const proc = Bun.spawn([process.execPath, 'run', join(ROOT, 'bench/syslog-floor.ts'), join(dir, 'floor.db')], { env: benchEnv(), stdout: 'pipe', stderr: 'inherit' })
  const reader = proc.stdout.getReader()
  const { value } = await reader.read()
  const ports = JSON.parse(new TextDecoder().decode(value)) as { syslog: number; http: number }
  const stored = async () => Number(await (await fetch(`http://127.0.0.1:${ports.http}/count`)).text())
  return { proc, port: ports.syslog, stored }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const dir = mkdtempSync(join(tmpdir(), 'quarry-bench-syslog-'))
try {
  const quarry = await startQuarry(dir)
  const floor = await startFloor(dir)
  const rates: Record<'quarry' | 'floor', number[]> = { quarry: [], floor: [] }
  const latencies: number[] = []
  // A warm-up of a tenth of a round each, not counted: the first batches pay for JIT compilation, Quarry's for the
  // tag's creation and the metrics registry too.
  const warm = payload(ROUNDS).subarray(0, Math.floor(LINES / 10) * 200)
  for (const target of [quarry, floor]) {
    const before = await target.stored()
    await send(target.port, warm)
    await until(target.stored, (n) => n >= before + Math.floor(LINES / 10))
  }
  for (let round = 0; round < ROUNDS; round++) {
    const data = payload(round)
    // interleaved, the order alternating, so that drift of a shared machine hits both alike
    const order = round % 2 === 0 ? (['quarry', 'floor'] as const) : (['floor', 'quarry'] as const)
    for (const who of order) {
      const target = who === 'quarry' ? quarry : floor
      const before = await target.stored()
      const t0 = performance.now()
      await send(target.port, data)
      const after = await until(target.stored, (n) => n >= before + LINES)
      const seconds = (performance.now() - t0) / 1000
      if (after !== before + LINES) throw new Error(`${who} stored ${after - before} of ${LINES}`)
      rates[who].push(LINES / seconds)
      console.error(`round ${round + 1} ${who}: ${Math.round(LINES / seconds)} entries/s`)
    }
    // send to searchable
    const marker = `marker${round}x${Date.now()}`
    const at = Date.now()
    const t0 = performance.now()
    await send(quarry.port, Buffer.from(`<134>1 ${new Date(at).toISOString()} bench bench - - - ${marker}\n`))
    await until(() => quarry.found(marker, at - 1000, at + 1000), (n) => n === 1, 0, 60_000)
    latencies.push(performance.now() - t0)
  }
  quarry.proc.kill('SIGTERM')
  floor.proc.kill('SIGTERM')
  await Promise.all([quarry.proc.exited, floor.proc.exited])
  const q = median(rates.quarry)
  const f = median(rates.floor)
  const mb = (r: number) => ((r * 200) / 1e6).toFixed(1)
  const load = (await Bun.file('/proc/loadavg').text()).split(' ').slice(0, 3).join(' ')
  console.log(`### ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC: ${LINES.toLocaleString('en')} lines of 200 bytes, ${ROUNDS} rounds, load average ${load}

| | entries/s (median) | MB/s | rounds |
|---|---:|---:|---|
| Quarry (QUARRY_SYSLOG_TCP) | ${Math.round(q).toLocaleString('en')} | ${mb(q)} | ${rates.quarry.map((r) => Math.round(r).toLocaleString('en')).join(', ')} |
| floor (bench/syslog-floor.ts) | ${Math.round(f).toLocaleString('en')} | ${mb(f)} | ${rates.floor.map((r) => Math.round(r).toLocaleString('en')).join(', ')} |

Quarry / floor: **${(q / f).toFixed(2)}** of the medians (goal 0.8); by round (each pair run back to back): ${rates.quarry.map((r, i) => (r / rates.floor[i]!).toFixed(2)).join(', ')}, median ${median(rates.quarry.map((r, i) => r / rates.floor[i]!)).toFixed(2)}. Quarry ${q >= 100_000 ? 'meets' : 'misses'} the 100,000 entries/s goal.
Send to found by a search (median of ${ROUNDS}): **${Math.round(median(latencies))} ms** (${latencies.map((l) => Math.round(l)).join(', ')} ms).
`)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
