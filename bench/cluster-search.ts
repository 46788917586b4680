// bench/cluster-search.sh's work: two replicas (A, B) on one fresh PostgreSQL database and one S3 bucket; entries
// ingested on A; then, alternating in each round, a search launched on A and followed over a WebSocket opened on A
// (local) or on B (relayed to A). Measured per round: the time from sending the launch to the first entry received
// on the socket (the socket is open before the launch, as a client's is), and the median of BENCH_REQUESTS entries
// requests on the attached search. Answers a Markdown table of medians and the ratio through B / local.
import { SQL } from 'bun'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { benchEnv } from './session'

const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 200_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15)
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 200)
/** Pause between the polls for the first entry: without one, a local client's polls compete with the search on A. */
const POLL_MS = Number(process.env.BENCH_POLL_MS ?? 5)
const GET_ENTRIES = 0x10
const PASSWORD = 'bench-cluster-password'
const T0 = Date.parse('2026-01-01T00:00:00Z')

const pgUrl = process.env.QUARRY_TEST_DATABASE_URL!
const admin = new SQL(pgUrl, { max: 1 })
const dbName = `bench_cluster_${Date.now()}`
await admin.unsafe(`CREATE DATABASE ${dbName}`)
const url = new URL(pgUrl)
url.pathname = `/${dbName}`
const dirs: string[] = []
const procs: ReturnType<typeof Bun.spawn>[] = []

async function replica(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-bench-replica-'))
  dirs.push(dir)
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = probe.port
  probe.stop(true)
  const proc = Bun.spawn([process.execPath, 'run', 'server/main.ts'], {
    env: benchEnv({
      PATH: process.env.PATH ?? '', QUARRY_LISTEN: `127.0.0.1:${port}`, QUARRY_DATA_DIR: dir, QUARRY_DATABASE_URL: url.toString(),
      QUARRY_CLUSTER_SECRET: 'bench-cluster-secret-0123456789abcdef', QUARRY_ADMIN_PASSWORD: PASSWORD, QUARRY_LOG_LEVEL: 'warn',
      QUARRY_S3_ENDPOINT: process.env.QUARRY_TEST_S3_ENDPOINT!, QUARRY_S3_BUCKET: process.env.QUARRY_TEST_S3_BUCKET!,
      QUARRY_S3_ACCESS_KEY: process.env.QUARRY_TEST_S3_ACCESS_KEY!, QUARRY_S3_SECRET_KEY: process.env.QUARRY_TEST_S3_SECRET_KEY!,
      QUARRY_S3_REGION: process.env.QUARRY_TEST_S3_REGION ?? 'us-east-1', QUARRY_MAX_SEARCHES_PER_USER: '1000',
    }),
    stdout: 'ignore',
    stderr: 'inherit',
  })
  procs.push(proc)
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; i < 300; i++) {
    if (proc.exitCode !== null) break
    try {
      if ((await fetch(`${base}/api/test`)).status === 200) return base
    } catch {}
    await Bun.sleep(100)
  }
  throw new Error('a replica did not start')
}

try {
  const A = await replica()
  const B = await replica()
  const login = (await (await fetch(`${A}/api/login`, { method: 'POST', body: JSON.stringify({ User: 'admin', Pass: PASSWORD }), headers: { 'content-type': 'application/json' } })).json()) as { JWT: string }
  const jwt = login.JWT as string
  const headers = { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' }
  for (let i = 0; i < ENTRIES; i += 5000) {
    const batch = Array.from({ length: Math.min(5000, ENTRIES - i) }, (_, k) => ({
      TS: new Date(T0 + (i + k) * 10).toISOString(), Tag: 'bench', Data: Buffer.from(`entry ${i + k} ${(i + k) % 1000 === 999 ? 'needle' : 'hay'} ${'x'.repeat(80)}`).toString('base64'),
    }))
    const res = await fetch(`${A}/api/ingest/json`, { method: 'POST', headers, body: JSON.stringify(batch) })
    if (res.status !== 200) throw new Error(`ingest: ${res.status} ${await res.text()}`)
  }

  const socket = async (base: string) => {
    const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/api/ws/search`, jwt)
    const queue: any[] = []
    let wake: (() => void) | null = null
    ws.onmessage = (e) => {
      queue.push(JSON.parse(String(e.data)))
      wake?.()
    }
    await new Promise((resolve) => (ws.onopen = resolve))
    const ask = async (m: unknown) => {
      ws.send(JSON.stringify(m))
      while (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve))
      return queue.shift()
    }
    return { ws, ask }
  }

  const first: Record<'local' | 'through B', number[]> = { local: [], 'through B': [] }
  const request: Record<'local' | 'through B', number[]> = { local: [], 'through B': [] }
  for (let round = 0; round < ROUNDS; round++) {
    for (const [how, base] of (round % 2 === 0 ? [['local', A], ['through B', B]] : [['through B', B], ['local', A]]) as ['local' | 'through B', string][]) {
      const s = await socket(base)
      const t0 = performance.now()
      const launched = await fetch(`${A}/api/searchctrl/launch`, {
        method: 'POST', headers,
        body: JSON.stringify({ SearchString: 'tag=bench grep needle', SearchStart: new Date(T0 - 1000).toISOString(), SearchEnd: new Date(T0 + ENTRIES * 10 + 1000).toISOString() }),
      })
      const id = ((await launched.json()) as { SearchID: string }).SearchID
      const attached = await s.ask({ type: 'attach', data: { ID: id } })
      const sub = attached.data.Subproto as string
      for (;;) {
        const a = await s.ask({ type: sub, data: { ID: GET_ENTRIES, EntryRange: { First: 0, Last: 1 } } })
        if ((a.data.Entries ?? []).length > 0) break
        await Bun.sleep(POLL_MS)
      }
      first[how].push(performance.now() - t0)
      const times: number[] = []
      for (let i = 0; i < REQUESTS; i++) {
        const t = performance.now()
        await s.ask({ type: sub, data: { ID: GET_ENTRIES, EntryRange: { First: 0, Last: 10 } } })
        times.push(performance.now() - t)
      }
      request[how].push(median(times))
      s.ws.close()
      await fetch(`${A}/api/searchctrl/${id}`, { method: 'DELETE', headers })
    }
  }
  const fmt = (ms: number) => `${ms.toFixed(2)} ms`
  const row = (what: string, m: typeof first) => {
    const local = median(m.local)
    const through = median(m['through B'])
    return `| ${what} | ${fmt(local)} | ${fmt(through)} | ${(through / local).toFixed(2)} |`
  }
  console.log(`${ENTRIES.toLocaleString('en')} entries on A, \`tag=bench grep needle\` (one match per 1,000 entries), ${ROUNDS} rounds alternating local and through B, polls every ${POLL_MS} ms, medians:`)
  console.log()
  console.log('| measured | followed on A (local) | followed through B | through B / local |')
  console.log('| --- | ---: | ---: | ---: |')
  console.log(row('launch on A → first entry on the socket (attach included; through B: B opens its socket to A)', first))
  console.log(row(`one entries request (10 entries) on the attached search, median of ${REQUESTS}`, request))
} finally {
  for (const p of procs) p.kill('SIGTERM')
  await Promise.all(procs.map((p) => p.exited))
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
  await admin.unsafe(`DROP DATABASE ${dbName} WITH (FORCE)`).catch(() => {})
  await admin.close()
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
