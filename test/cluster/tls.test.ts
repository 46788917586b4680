// Replicas that reach each other over HTTPS with a private CA (QUARRY_TLS_CERT/KEY to serve, QUARRY_PEER_CA to
// check the others): requests and search sockets forwarded to the owner of a search travel encrypted, and a replica
// that advertises plain HTTP outside its host says at start that the cluster secret and users' credentials go in
// clear. The CA and the replicas' certificate are made here with openssl, in a temporary directory.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { clearTextWarning } from '../../server/cluster'
import { type Cluster, type Replica, startCluster, until } from './harness'

const dir = mkdtempSync(join(tmpdir(), 'quarry-cluster-tls-'))
const file = (name: string) => join(dir, name)

function openssl(...args: string[]) {
  const r = Bun.spawnSync(['openssl', ...args], { stderr: 'pipe', stdout: 'pipe' })
  if (r.exitCode !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr.toString()}`)
}

let cluster: Cluster
let A: Replica, B: Replica
let ca: string

beforeAll(async () => {
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2', '-subj', '/CN=Quarry test peers CA')
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('replica.key'), '-out', file('replica.csr'), '-subj', '/CN=127.0.0.1')
  await Bun.write(file('ext.cnf'), 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n')
  openssl('x509', '-req', '-in', file('replica.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-out', file('replica.pem'), '-days', '2', '-extfile', file('ext.cnf'))
  ca = await Bun.file(file('ca.pem')).text()
  cluster = await startCluster({
    replicas: 2,
    ca,
    env: { QUARRY_TLS_CERT: file('replica.pem'), QUARRY_TLS_KEY: file('replica.key'), QUARRY_PEER_CA: file('ca.pem') },
  })
  ;[A, B] = cluster.replicas as [Replica, Replica]
}, 60_000)
afterAll(async () => {
  await cluster?.stop()
  rmSync(dir, { recursive: true, force: true })
}, 30_000)

describe('cluster over HTTPS with a private CA', () => {
  test('the replicas advertise https; a request and a search socket on B reach the search A holds, through its https address', async () => {
    for (const r of [A, B]) {
      expect(r.url).toStartWith('https://127.0.0.1:')
      // no clear-text warning for an https address (the one warning a first start gives is where the admin password is)
      expect(r.lines.filter((l) => l.level === 'warn' && l.passwordFile === undefined).map((l) => l.msg)).toEqual([])
    }
    expect((await cluster.rows('SELECT address FROM replicas ORDER BY address')).map((r) => r.address)).toEqual([A.url, B.url].sort())
    const admin = await cluster.login('admin', cluster.adminPassword, A)
    const T0 = Date.parse('2026-01-01T00:00:00Z')
    const batch = Array.from({ length: 20 }, (_, i) => ({ TS: new Date(T0 + i * 1000).toISOString(), Tag: 'tls', Data: Buffer.from(`tls line ${i}`).toString('base64') }))
    expect((await A.call('POST', '/api/ingest/json', { jwt: admin, json: batch })).status).toBe(200)
    const launched = await A.call('POST', '/api/searchctrl/launch', {
      jwt: admin,
      json: { SearchString: 'tag=tls', SearchStart: '2025-12-31T00:00:00Z', SearchEnd: '2026-01-02T00:00:00Z' },
    })
    const id = launched.body.SearchID as string
    const onA = await until(() => A.call('GET', `/api/searchctrl/${id}/details`, { jwt: admin }), (r) => r.body.Finished !== '0001-01-01T00:00:00Z')
    // B does not hold it: it forwards to A (an unsaved search B could not serve otherwise: 404)
    const onB = await B.call('GET', `/api/searchctrl/${id}/details`, { jwt: admin })
    expect(onB.status).toBe(200)
    expect(onB.body).toEqual(onA.body)
    expect(onB.body.ItemCount).toBe(20)
    expect((await B.call('GET', `/api/searchctrl/${id}/download/json`, { jwt: admin })).body).toHaveLength(20)
    // a search socket on B relays to A's internal socket over wss
    const ws = new WebSocket(`${B.url.replace(/^https/, 'wss')}/api/ws/search`, { protocols: [admin], tls: { ca } } as never)
    const answers: any[] = []
    ws.onmessage = (e) => answers.push(JSON.parse(String(e.data)))
    await new Promise((resolve, reject) => ((ws.onopen = resolve), (ws.onerror = reject)))
    ws.send(JSON.stringify({ type: 'attach', data: { ID: id } }))
    const attached = await until(async () => answers.find((m) => m.type === 'attach'), (m) => m !== undefined, 10_000)
    expect(attached.data.Info.ID).toBe(id)
    expect(typeof attached.data.Subproto).toBe('string')
    ws.close()
    // neither replica found the other unreachable
    for (const r of [A, B]) expect(r.lines.filter((l) => String(l.msg).startsWith('a replica did not answer'))).toEqual([])
  }, 60_000)
})

describe('the clear-text warning', () => {
  test('plain http on an address outside the host warns; https and loopback addresses do not', () => {
    expect(clearTextWarning('http://10.0.0.5:8080')).toContain('over plain HTTP: the requests they forward to it carry the cluster secret')
    expect(clearTextWarning('http://quarry-2.internal:8080')).toContain('QUARRY_PEER_CA')
    expect(clearTextWarning('http://[fd00::5]:8080')).toBeDefined()
    for (const quiet of ['https://10.0.0.5:8443', 'http://127.0.0.1:8080', 'http://127.8.9.10:8080', 'http://localhost:8080', 'http://[::1]:8080'])
      expect([quiet, clearTextWarning(quiet)]).toEqual([quiet, undefined])
  })

  test('a replica advertising plain http outside its host says so at start, once, at warn', async () => {
    // 192.0.2.10 (TEST-NET-1) is never reached: the replica is alone, nothing is forwarded.
    const alone = await startCluster({ replicas: 1, env: { QUARRY_ADVERTISE: 'http://192.0.2.10:8080' } })
    try {
      const [r] = alone.replicas as [Replica]
      const warned = r.lines.filter((l) => l.level === 'warn' && l.passwordFile === undefined)
      expect(warned.map((l) => [l.msg, l.advertise])).toEqual([[clearTextWarning('http://192.0.2.10:8080'), 'http://192.0.2.10:8080']])
      // said before it serves
      expect(r.lines.findIndex((l) => l.level === 'warn')).toBeLessThan(r.lines.findIndex((l) => l.msg === 'listening'))
    } finally {
      await alone.stop()
    }
  }, 60_000)
})
