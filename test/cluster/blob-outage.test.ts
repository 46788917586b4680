// An S3 outage seen by a cluster (test/cluster/harness.ts: real replicas on PostgreSQL and the test S3 server): the
// replicas reach S3 through a TCP relay of this test that can freeze (it keeps every connection open and passes no
// byte either way, as an endpoint that hangs), so no other test's S3 is disturbed. While S3 is frozen every replica
// stays ready (the load balancer keeps them all), logins and user listings work, what needs a blob answers 503
// naming the blob store within QUARRY_BLOB_TIMEOUT, and each replica logs the outage once and its end once.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Socket, TCPSocketListener } from 'bun'
import { testS3 } from '../s3'
import { type Cluster, type Replica, startCluster, until } from './harness'

/** A TCP relay to `target` that can freeze: frozen, it accepts connections and drops every byte both ways. */
function freezableRelay(target: URL) {
  let frozen = false
  interface Side {
    upstream?: Socket<unknown>
    pending: Uint8Array[]
  }
  const clients = new Set<Socket<Side>>()
  const server: TCPSocketListener<Side> = Bun.listen<Side>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(client) {
        client.data = { pending: [] }
        clients.add(client)
        void Bun.connect({
          hostname: target.hostname,
          port: Number(target.port),
          socket: {
            data(_, chunk) {
              if (!frozen) client.write(chunk)
            },
            close() {
              client.end()
            },
            error() {
              client.end()
            },
          },
        }).then(
          (up) => {
            client.data.upstream = up
            for (const chunk of client.data.pending) up.write(chunk)
            client.data.pending = []
          },
          () => client.end(),
        )
      },
      data(client, chunk) {
        if (frozen) return
        if (client.data.upstream) client.data.upstream.write(chunk)
        else client.data.pending.push(new Uint8Array(chunk))
      },
      close(client) {
        clients.delete(client)
        client.data.upstream?.end()
      },
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}`,
    freeze() {
      frozen = true
    },
    /** Passes bytes again; the connections that lost some while frozen are closed (their streams are broken). */
    thaw() {
      frozen = false
      for (const c of clients) c.end()
    },
    stop() {
      server.stop(true)
    },
  }
}

const relay = freezableRelay(new URL(testS3()!.config.endpoint))
let cluster: Cluster
let A: Replica, B: Replica
let admin: string

beforeAll(async () => {
  cluster = await startCluster({ replicas: 2, env: { QUARRY_S3_ENDPOINT: relay.url, QUARRY_BLOB_TIMEOUT: '3s' } })
  ;[A, B] = cluster.replicas as [Replica, Replica]
  admin = await cluster.login('admin', cluster.adminPassword, A)
}, 60_000)
afterAll(async () => {
  relay.thaw()
  await cluster?.stop()
  relay.stop()
}, 30_000)

const outageLines = (r: Replica) => r.lines.filter((l) => l.dependency === 'blobs').map((l) => [l.level, l.msg])
const WARNED = ['warn', 'the blob store is failing: requests that need it fail until it answers again']
const RECOVERED = ['info', 'the blob store answers again']

describe('cluster: the blob store freezes', () => {
  test('replicas stay ready, logins and users work, blob downloads answer 503 in time, one warning and one recovery per replica', async () => {
    const created = await A.call('POST', '/api/resources', { jwt: admin, json: { ResourceName: 'outage', Description: 'd' } })
    const guid = created.body.GUID as string
    const fd = new FormData()
    fd.append('file', new Blob(['stored before the outage']), 'contents.bin')
    expect((await A.call('PUT', `/api/resources/${guid}/raw`, { jwt: admin, body: fd })).status).toBe(200)
    expect((await B.call('GET', `/api/resources/${guid}/raw`, { jwt: admin })).text).toBe('stored before the outage')

    relay.freeze()
    for (const r of [A, B]) {
      // Ready, in time for a load balancer's 2 s check, although the blob probe gets no answer (asked until an answer
      // made after the freeze says so: one may be reused for a second).
      const ready = await until(
        async () => {
          const started = performance.now()
          const res = await r.call('GET', '/api/health/ready')
          expect([r.name, res.status, res.body.checks.store, res.body.checks.migrations]).toEqual([r.name, 200, 'ok', 'ok'])
          expect(performance.now() - started).toBeLessThan(2000)
          return res
        },
        (res) => String(res.body.checks.blobs).startsWith('failed: '),
        10_000,
      )
      expect(ready.body.checks.blobs).toStartWith('failed: ')
      expect((await r.call('POST', '/api/login', { json: { User: 'admin', Pass: cluster.adminPassword } })).status).toBe(200)
      expect((await r.call('GET', '/api/users', { jwt: admin })).status).toBe(200)
      const downloadStarted = performance.now()
      const download = await r.call('GET', `/api/resources/${guid}/raw`, { jwt: admin })
      expect([download.status, download.body]).toEqual([503, { Error: 'the blob store did not answer within 3 s (QUARRY_BLOB_TIMEOUT): try again later' }])
      // the bound, plus room for a loaded machine (it hung for more than 30 s before)
      expect(performance.now() - downloadStarted).toBeLessThan(10_000)
      expect((await r.call('GET', '/api/health')).body.dependencies).toEqual({ store: 'ok', blobs: 'failing' })
    }
    for (const r of [A, B]) expect(outageLines(r)).toEqual([WARNED])

    relay.thaw()
    for (const r of [A, B]) {
      const back = await until(() => r.call('GET', `/api/resources/${guid}/raw`, { jwt: admin }), (res) => res.status === 200)
      expect(back.text).toBe('stored before the outage')
      await until(() => outageLines(r), (lines) => lines.length === 2)
      // however many operations failed meanwhile (downloads, probes every 10 s): one line each way
      expect(outageLines(r)).toEqual([WARNED, RECOVERED])
      expect((await r.call('GET', '/api/health')).body.dependencies).toEqual({ store: 'ok', blobs: 'ok' })
    }
  }, 120_000)
})
