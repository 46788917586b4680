// The real server (server/main.ts) with syslog listeners on free ports, for the tests that send to it with real
// clients (logger, rsyslog, syslog-ng) and then search over HTTP for what they sent.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ADMIN_PASSWORD, listening, spawnServer } from './helpers'

export interface Found {
  TS: string
  Tag: string
  SRC: string
  /** Data decoded as UTF-8 (lossy) and as bytes. */
  text: string
  bytes: Buffer
}

export interface SyslogServer {
  url: string
  ports: { tcp?: number; udp?: number; tls?: number }
  lines: string[]
  dir: string
  jwt: string
  /** Every entry a search finds between `from` and `to` (default: the last day to the next), in time order. */
  search(query: string, from?: number, to?: number): Promise<Found[]>
  /** Waits until `query` finds `count` entries (or the deadline passes), and answers what it finds then. */
  searchUntil(query: string, count: number, from?: number, to?: number): Promise<Found[]>
  /** The /metrics lines of quarry_ingest_* for the syslog listeners, as `name{labels} value`. */
  metrics(): Promise<Map<string, number>>
  stop(): Promise<number>
  /** SIGTERM, leaving the data directory for checks; answers the exit code. */
  stopKeepingData(): Promise<number>
  kill(): void
}

/** A self-signed certificate for 127.0.0.1 and localhost (openssl), written into `dir`. */
export function selfSignedCertificate(dir: string): { cert: string; key: string } {
  const cert = join(dir, 'cert.pem')
  const key = join(dir, 'key.pem')
  const r = Bun.spawnSync(
    ['openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', key, '-out', cert],
    { stderr: 'pipe' },
  )
  if (r.exitCode !== 0) throw new Error(`openssl failed: ${r.stderr.toString()}`)
  return { cert, key }
}

export async function startSyslogServer(env: Record<string, string>, dir = mkdtempSync(join(tmpdir(), 'quarry-syslog-'))): Promise<SyslogServer> {
  const proc = spawnServer({
    QUARRY_DATA_DIR: join(dir, 'data'),
    QUARRY_ADMIN_PASSWORD: ADMIN_PASSWORD,
    QUARRY_MIN_FREE_SPACE: '0',
    ...env,
  })
  const stderr = new Response(proc.stderr).text()
  const { url, lines } = await listening(proc).catch(async (e) => {
    throw new Error(`${e.message}: ${await stderr}`)
  })
  const ports: SyslogServer['ports'] = {}
  const expected = ['TCP', 'UDP', 'TLS'].filter((t) => env[`QUARRY_SYSLOG_${t}`]).length
  const end = Date.now() + 10_000
  for (;;) {
    const started = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'syslog listening')
    for (const l of started) ports[l.transport as 'tcp'] = l.port
    if (started.length >= expected) break
    if (Date.now() > end) throw new Error(`the syslog listeners did not start: ${lines.join('\n')}`)
    await Bun.sleep(20)
  }
  // With QUARRY_TLS_CERT the HTTP API is HTTPS too: its certificate is the one CA trusted here.
  const tls = env.QUARRY_TLS_CERT ? { tls: { ca: readFileSync(env.QUARRY_TLS_CERT, 'utf8') } } : {}
  const call = async (method: string, path: string, init: { jwt?: string; json?: unknown } = {}) => {
    const res = await fetch(`${url}${path}`, {
      ...tls,
      method,
      headers: { ...(init.jwt ? { authorization: `Bearer ${init.jwt}` } : {}), ...(init.json ? { 'content-type': 'application/json' } : {}) },
      body: init.json === undefined ? undefined : JSON.stringify(init.json),
    })
    const text = await res.text()
    let body: any
    try {
      body = JSON.parse(text)
    } catch {}
    return { status: res.status, text, body }
  }
  const login = await call('POST', '/api/login', { json: { User: 'admin', Pass: ADMIN_PASSWORD } })
  if (login.status !== 200) throw new Error(`login failed: ${login.text}`)
  const jwt = login.body.JWT as string
  const search = async (query: string, from = Date.now() - 366 * 86_400_000, to = Date.now() + 366 * 86_400_000): Promise<Found[]> => {
    const launched = await call('POST', '/api/searchctrl/launch', {
      jwt,
      json: { SearchString: query, SearchStart: new Date(from).toISOString(), SearchEnd: new Date(to).toISOString() },
    })
    if (launched.status !== 200) throw new Error(`launch of ${query} failed: ${launched.text}`)
    const id = launched.body.SearchID as string
    const deadline = Date.now() + 20_000
    while ((await call('GET', `/api/searchctrl/${id}/details`, { jwt })).body.Finished === '0001-01-01T00:00:00Z') {
      if (Date.now() > deadline) throw new Error(`search ${query} did not finish`)
      await Bun.sleep(20)
    }
    const got = await call('GET', `/api/searchctrl/${id}/download/json`, { jwt })
    if (got.status !== 200) throw new Error(`download of ${query} failed: ${got.text}`)
    await call('DELETE', `/api/searchctrl/${id}`, { jwt })
    return (got.body as { TS: string; Tag: string; SRC: string; Data: string }[]).map((e) => {
      const bytes = Buffer.from(e.Data, 'base64')
      return { TS: e.TS, Tag: e.Tag, SRC: e.SRC, bytes, text: bytes.toString('utf8') }
    })
  }
  return {
    url,
    ports,
    lines,
    dir,
    jwt,
    search,
    async searchUntil(query, count, from, to) {
      const deadline = Date.now() + 20_000
      for (;;) {
        const found = await search(query, from, to)
        if (found.length >= count || Date.now() > deadline) return found
        await Bun.sleep(100)
      }
    },
    async metrics() {
      const text = await (await fetch(`${url}/metrics`, tls)).text()
      const m = new Map<string, number>()
      for (const line of text.split('\n')) {
        const hit = /^(quarry_ingest_\w+\{[^}]*listener="syslog-[^}]*\}) (\S+)$/.exec(line)
        if (hit) m.set(hit[1]!, Number(hit[2]))
      }
      return m
    },
    async stop() {
      proc.kill('SIGTERM')
      const code = await proc.exited
      rmSync(dir, { recursive: true, force: true })
      return code
    },
    async stopKeepingData() {
      proc.kill('SIGTERM')
      return proc.exited
    },
    kill() {
      proc.kill('SIGKILL')
    },
  }
}

/** The value of one metric line (0 when absent), e.g. metric(m, 'entries', 'syslog-tcp', 'rfc5424'). */
export function metric(m: Map<string, number>, name: 'entries' | 'bytes' | 'refusals', listener: string, protocol: string, reason?: string): number {
  for (const [k, v] of m) {
    if (!k.startsWith(`quarry_ingest_${name}_total{`)) continue
    if (!k.includes(`listener="${listener}"`) || !k.includes(`protocol="${protocol}"`)) continue
    if (reason !== undefined && !k.includes(`reason="${reason}"`)) continue
    return v
  }
  return 0
}

