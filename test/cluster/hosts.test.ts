// The cluster on hosts without containers (docs/cluster.md, "On hosts without containers"), as an operator sets it
// up: PostgreSQL and S3 (the suite's own servers, test/pg-server.sh and test/s3-server.sh), two replicas
// (test/cluster/harness.ts) and Debian's HAProxy (test/haproxy-install.sh installs it when missing) running the
// shipped deploy/haproxy-hosts.cfg with only what the doc says to change: the port of `bind` and one `server` line
// per replica. Through it: a login, a search launched on one replica and read through the load balancer (answered
// by both replicas in turn), and the internal routes refused by HAProxy itself. deploy/haproxy.cfg (the compose
// file's) runs too, for the same refusal: its frontend is the same, its `server` lines name container hosts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Subprocess } from 'bun'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SECRET_HEADER } from '../../server/cluster'
import { CLUSTER_SECRET, type Cluster, type Replica, startCluster, until } from './harness'

const ROOT = join(import.meta.dir, '..', '..')
const SHIPPED_PORT = 8080

/**
 * What docs/cluster.md tells the operator to change in a shipped configuration: the port of each `bind` line, and
 * the `server` lines, replaced by one per replica (the first line's name and options kept, its address replaced).
 */
export function operatorEdit(shipped: string, bindPort: number, replicas: string[]): string {
  const out: string[] = []
  let serversDone = false
  for (const line of shipped.split('\n')) {
    const bind = /^(\s*bind\s+\S*:)(\d+)(\s.*)?$/.exec(line)
    if (bind) {
      expect(Number(bind[2])).toBe(SHIPPED_PORT)
      out.push(`${bind[1]}${bindPort}${bind[3] ?? ''}`)
      continue
    }
    const server = /^(\s*server\s+)(\S+)\s+(\S+)(.*)$/.exec(line)
    if (server) {
      if (!serversDone) replicas.forEach((address, i) => out.push(`${server[1]}${String.fromCharCode(97 + i)} ${address}${server[4]}`))
      serversDone = true
      continue
    }
    out.push(line)
  }
  return out.join('\n')
}

/** The lines an operator does not touch (every line but `bind` and `server`), to show nothing else was changed. */
const untouched = (cfg: string) => cfg.split('\n').filter((l) => !/^\s*(bind|server)\s/.test(l))

interface Balancer {
  port: number
  proc: Subprocess<'ignore', 'pipe', 'pipe'>
  /** Its log so far (the configuration's `log stdout`, one `option httplog` line per request). */
  log(): string
  stop(): Promise<void>
}

/** A port nobody listens on, below the ephemeral range (see free_port in test/pg-server.sh for why). */
async function freePort(): Promise<number> {
  for (;;) {
    const port = 10_000 + Math.floor(Math.random() * 22_000)
    try {
      Bun.listen({ hostname: '0.0.0.0', port, socket: { data() {} } }).stop(true)
      return port
    } catch {}
  }
}

/** Runs HAProxy (in the foreground, -db) on the configuration made by `config(port)`; resolves once it answers. */
async function startBalancer(haproxy: string, dir: string, name: string, config: (port: number) => string): Promise<Balancer> {
  let lastError = ''
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort()
    const file = join(dir, `${name}.cfg`)
    writeFileSync(file, config(port))
    // The configuration drops to the account `haproxy` as Debian's service does, which needs root: without it, through
    // sudo (as test/haproxy-install.sh installs it), which passes SIGTERM on.
    const command = [haproxy, '-db', '-f', file]
    const proc = Bun.spawn(process.getuid?.() === 0 ? command : ['sudo', '-n', ...command], { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
    let log = ''
    void (async () => {
      const decoder = new TextDecoder()
      for await (const chunk of proc.stdout) log += decoder.decode(chunk)
    })()
    let exited = false
    void proc.exited.then(() => (exited = true))
    const health = await until(
      () => fetch(`http://127.0.0.1:${port}/api/health`).then((r) => r.status, () => (exited ? -1 : 0)),
      (s) => s === 200 || s === -1,
      10_000,
    )
    if (health === 200) {
      return {
        port,
        proc,
        log: () => log,
        async stop() {
          proc.kill('SIGTERM')
          await proc.exited
        },
      }
    }
    proc.kill('SIGKILL')
    await proc.exited
    lastError = await new Response(proc.stderr).text()
    if (!lastError.includes('cannot bind')) break // another process took the port meanwhile: again on another
  }
  throw new Error(`HAProxy did not start on ${name}: ${lastError}`)
}

/** One request sent as written (fetch would resolve dot segments and backslashes before sending). */
function rawRequest(port: number, path: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let raw = ''
    socket.setEncoding('latin1')
    socket.on('data', (d) => (raw += d))
    socket.on('error', reject)
    socket.on('end', () => {
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(raw)?.[1] ?? 0)
      resolve({ status, text: raw.slice(raw.indexOf('\r\n\r\n') + 4) })
    })
    const head = Object.entries({ host: `127.0.0.1:${port}`, connection: 'close', ...headers }).map(([k, v]) => `${k}: ${v}\r\n`)
    socket.write(`GET ${path} HTTP/1.1\r\n${head.join('')}\r\n`)
  })
}

let cluster: Cluster
let A: Replica, B: Replica
let work: string
let hosts: Balancer | undefined
let compose: Balancer | undefined
const lb = (path: string) => `http://127.0.0.1:${hosts!.port}${path}`

beforeAll(async () => {
  const install = Bun.spawnSync(['bash', join(ROOT, 'test', 'haproxy-install.sh')], { stdout: 'pipe', stderr: 'pipe' })
  if (install.exitCode !== 0) throw new Error(`test/haproxy-install.sh failed: ${install.stderr.toString()}`)
  const haproxy = install.stdout.toString().trim()
  // The load balancer is a proxy the replicas trust for X-Forwarded-For, as the doc tells the operator to set.
  cluster = await startCluster({ replicas: 2, env: { QUARRY_TRUSTED_PROXIES: '127.0.0.1' } })
  ;[A, B] = cluster.replicas as [Replica, Replica]
  work = mkdtempSync(join(tmpdir(), 'quarry-hosts-'))
  const addresses = cluster.replicas.map((r) => `127.0.0.1:${r.port}`)
  const shippedHosts = readFileSync(join(ROOT, 'deploy', 'haproxy-hosts.cfg'), 'utf8')
  const shippedCompose = readFileSync(join(ROOT, 'deploy', 'haproxy.cfg'), 'utf8')
  for (const shipped of [shippedHosts, shippedCompose]) expect(untouched(operatorEdit(shipped, 1, addresses))).toEqual(untouched(shipped))
  hosts = await startBalancer(haproxy, work, 'hosts', (port) => operatorEdit(shippedHosts, port, addresses))
  compose = await startBalancer(haproxy, work, 'compose', (port) => operatorEdit(shippedCompose, port, addresses))
}, 240_000) // the first run on a machine installs HAProxy (apt-get)

afterAll(async () => {
  await hosts?.stop()
  await compose?.stop()
  await cluster?.stop()
  if (work) rmSync(work, { recursive: true, force: true })
}, 30_000)

/** How many requests for `path` HAProxy's log shows it sent to each server (a, b: the replicas in order). */
const servedBy = (balancer: Balancer, path: string) =>
  ['a', 'b'].map((server) => balancer.log().split('\n').filter((l) => l.includes(` replicas/${server} `) && l.includes(` ${path} HTTP/`)).length)

describe('cluster on hosts without containers, behind the shipped HAProxy configuration', () => {
  test('the admin logs in through HAProxy, and is known on both replicas', async () => {
    const login = await fetch(lb('/api/login'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ User: 'admin', Pass: cluster.adminPassword }) })
    expect(login.status).toBe(200)
    const jwt = ((await login.json()) as { JWT: string }).JWT
    for (const r of [A, B]) {
      const who = await r.call('GET', '/api/info/whoami', { jwt })
      expect([who.status, who.body?.User]).toEqual([200, 'admin'])
    }
  })

  test('a search launched on replica A is read through the load balancer, from either replica', async () => {
    const jwt = await cluster.login('admin', cluster.adminPassword, A)
    const T0 = Date.parse('2026-01-01T00:00:00Z')
    const entries = Array.from({ length: 500 }, (_, i) => ({ TS: new Date(T0 + i * 1000).toISOString(), Tag: 'hostsweb', Data: Buffer.from(`hosts line ${i}`).toString('base64') }))
    expect((await A.call('POST', '/api/ingest/json', { jwt, json: entries })).status).toBe(200)
    const launched = await A.call('POST', '/api/searchctrl/launch', {
      jwt,
      json: { SearchString: 'tag=hostsweb grep line', SearchStart: new Date(T0 - 1000).toISOString(), SearchEnd: new Date(T0 + 86_400_000).toISOString() },
    })
    expect(launched.status).toBe(200)
    const id = launched.body.SearchID as string
    const path = `/api/searchctrl/${id}/details`
    const finished = await until(() => A.call('GET', path, { jwt }), (r) => r.body?.Finished !== '0001-01-01T00:00:00Z')
    expect(finished.body.ItemCount).toBe(500)
    // Round robin over two replicas: successive reads through the load balancer reach both (read until HAProxy's
    // log shows each answered one, at most 20). B forwards its reads to A, which runs the search: every answer is A's.
    const reached = () => servedBy(hosts!, path)
    for (let i = 0; i < 20 && reached().some((n) => n === 0); i++) {
      const res = await fetch(lb(path), { headers: { authorization: `Bearer ${jwt}` } })
      expect(res.status).toBe(200)
      const body = (await res.json()) as { ID: string; ItemCount: number }
      expect([body.ID, body.ItemCount]).toEqual([id, 500])
    }
    // (a line is written once its request ends: the last may still be on its way)
    expect((await until(reached, (n) => n.every((c) => c > 0), 5_000)).every((c) => c > 0)).toBe(true)
    const listed = await fetch(lb('/api/searchctrl'), { headers: { authorization: `Bearer ${jwt}` } })
    expect(((await listed.json()) as { ID: string }[]).map((s) => s.ID)).toContain(id)
  })

  test('/api/internal/* has no route through either shipped configuration: HAProxy answers, no replica sees it', async () => {
    const jwt = await cluster.login('admin', cluster.adminPassword, A)
    // What a replica answers a caller with the cluster secret: the internal route exists and would serve it.
    const direct = await A.call('GET', '/api/internal/forward/api/info/whoami', { jwt, headers: { [SECRET_HEADER]: CLUSTER_SECRET } })
    expect([direct.status, direct.body?.User]).toEqual([200, 'admin'])
    const internalSeen = () => [A, B].map((r) => r.lines.filter((l) => l.msg === 'request' && String(l.path).toLowerCase().includes('internal')).length)
    const seenBefore = internalSeen()
    const refused: [string, number][] = [
      ['/api/internal/forward/api/info/whoami', 404],
      ['/api/internal', 404],
      ['/api/internal/', 404],
      ['/api/internal/ws/search', 404],
      ['/API/Internal/forward/api/info/whoami', 404],
      ['/api//internal/forward/api/info/whoami', 404],
      ['/api/%69nternal/forward/api/info/whoami', 404],
      ['/api/internal/forward/api/info/whoami?x=1', 404],
      ['/x/../api/internal/forward/api/info/whoami', 400],
      ['/api/./internal/forward/api/info/whoami', 400],
      ['/x/%2e%2e/api/internal/forward/api/info/whoami', 400],
      ['/api\\internal/forward/api/info/whoami', 400],
    ]
    for (const balancer of [hosts!, compose!]) {
      for (const [path, status] of refused) {
        const res = await rawRequest(balancer.port, path, { authorization: `Bearer ${jwt}`, [SECRET_HEADER]: CLUSTER_SECRET })
        // HAProxy's own error page, not a replica's JSON answer
        expect([path, res.status, res.text.includes('<html>')]).toEqual([path, status, true])
      }
      // the public API next to it still passes
      expect((await rawRequest(balancer.port, '/api/info/whoami', { authorization: `Bearer ${jwt}` })).status).toBe(200)
    }
    expect(internalSeen()).toEqual(seenBefore)
  })
})
