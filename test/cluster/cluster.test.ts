// Three replicas on one PostgreSQL database and one S3 bucket (test/cluster/harness.ts): whatever one replica
// does, the others see at the next request; a replica that dies leaves the others serving; it rejoins on restart.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { tmpdir } from 'node:os'
import { MAIN } from '../cli'
import { type Cluster, type Replica, startCluster } from './harness'

let cluster: Cluster
let A: Replica, B: Replica, C: Replica

beforeAll(async () => {
  cluster = await startCluster()
  ;[A, B, C] = cluster.replicas as [Replica, Replica, Replica]
}, 60_000)
afterAll(() => cluster?.stop(), 30_000)

const whoami = (r: Replica, jwt: string) => r.call('GET', '/api/info/whoami', { jwt })

describe('cluster: sessions and tokens', () => {
  test('three replicas started together on an empty database made one admin (UID 1) and migrated once', async () => {
    expect(await cluster.rows('SELECT uid, username FROM users')).toEqual([{ uid: 1, username: 'admin' }])
    const versions = (await cluster.rows('SELECT version FROM schema_migrations ORDER BY version')).map((r) => r.version as number)
    expect(versions).toEqual([...new Set(versions)])
    // and the same signing key: a JWT from one is accepted by every other
    const jwt = await cluster.login('admin', cluster.adminPassword, A)
    for (const r of [A, B, C]) expect((await whoami(r, jwt)).body.UID).toBe(1)
  })

  test('a login on A is used on B and C', async () => {
    const u = await cluster.createUser()
    const jwt = await cluster.login(u.User, u.Pass, A)
    for (const r of [B, C, A]) {
      const res = await whoami(r, jwt)
      expect(res.status).toBe(200)
      expect(res.body.UID).toBe(u.uid)
    }
  })

  test('a logout on B is refused at once on A and C', async () => {
    const u = await cluster.createUser()
    const jwt = await cluster.login(u.User, u.Pass, A)
    const other = await cluster.login(u.User, u.Pass, C)
    // every replica has seen the session (a cache, if any, would hold it now)
    for (const r of [A, B, C]) expect((await whoami(r, jwt)).status).toBe(200)
    expect((await B.call('PUT', '/api/logout', { jwt })).status).toBe(200)
    for (const r of [A, C, B]) {
      const res = await whoami(r, jwt)
      expect(res.status).toBe(401)
      expect(res.body).toHaveProperty('Error')
    }
    // only that session ended
    for (const r of [A, B, C]) expect((await whoami(r, other)).status).toBe(200)
  })

  test('a lock on C ends the user\'s sessions on every replica, and a login anywhere is refused', async () => {
    const u = await cluster.createUser()
    const sessions = [await cluster.login(u.User, u.Pass, A), await cluster.login(u.User, u.Pass, B)]
    for (const jwt of sessions) for (const r of [A, B, C]) expect((await whoami(r, jwt)).status).toBe(200)
    const admin = await cluster.login('admin', cluster.adminPassword, C)
    expect((await C.call('PUT', `/api/users/${u.uid}/lock`, { jwt: admin })).status).toBe(200)
    for (const jwt of sessions) for (const r of [A, B, C]) expect((await whoami(r, jwt)).status).toBe(401)
    for (const r of [A, B]) expect((await r.call('POST', '/api/login', { json: { User: u.User, Pass: u.Pass } })).status).toBe(423)
  })

  test('a password change on A ends the user\'s other sessions on B and C', async () => {
    const u = await cluster.createUser()
    const mine = await cluster.login(u.User, u.Pass, A)
    const elsewhere = await cluster.login(u.User, u.Pass, B)
    expect((await C.call('GET', '/api/info/whoami', { jwt: elsewhere })).status).toBe(200)
    const changed = await A.call('PUT', `/api/users/${u.uid}/pwd`, { jwt: mine, json: { OrigPass: u.Pass, NewPass: 'a-new-password-1' } })
    expect(changed.status).toBe(200)
    for (const r of [B, C]) expect((await whoami(r, elsewhere)).status).toBe(401)
    expect((await C.call('POST', '/api/login', { json: { User: u.User, Pass: u.Pass } })).status).toBe(422)
    expect((await B.call('POST', '/api/login', { json: { User: u.User, Pass: 'a-new-password-1' } })).status).toBe(200)
  })

  test('a token made on A works on B and stops on every replica when deleted on C', async () => {
    const u = await cluster.createUser()
    const jwt = await cluster.login(u.User, u.Pass, A)
    const made = await A.call('POST', '/api/tokens', {
      jwt,
      json: { name: 'cluster', description: 'for the cluster test', capabilities: ['DashboardRead'], expiresAt: null },
    })
    expect(made.status).toBe(200)
    const secret = made.body.token as string
    for (const r of [B, C, A]) expect((await r.call('GET', '/api/dashboards', { token: secret })).status).toBe(200)
    expect((await C.call('DELETE', `/api/tokens/${made.body.id}`, { jwt })).status).toBe(200)
    for (const r of [A, B, C]) {
      const res = await r.call('GET', '/api/dashboards', { token: secret })
      expect(res.status).toBe(401)
      expect(res.body).toHaveProperty('Error')
    }
  })

  test('the login throttle holds when the guesses are spread over every replica', async () => {
    const u = await cluster.createUser()
    const client = cluster.client()
    const statuses: number[] = []
    const servedBy = new Set<string>()
    // QUARRY_LOGIN_MAX_FAILURES is 5 by default: 9 guesses, 3 on each replica
    for (let i = 0; i < 9; i++) {
      const res = await client.call('POST', '/api/login', { json: { User: u.User, Pass: `wrong-${i}` } })
      statuses.push(res.status)
      servedBy.add(res.replica)
    }
    expect(servedBy.size).toBe(3)
    expect(statuses).toEqual([422, 422, 422, 422, 422, 429, 429, 429, 429])
    // the right password too, on any of them, until the window ends
    for (const r of [A, B, C]) expect((await r.call('POST', '/api/login', { json: { User: u.User, Pass: u.Pass } })).status).toBe(429)
  })
})

/** A WebSocket as the clients open it (the JWT as subprotocol) or with headers; `closed` settles with its close code. */
async function socket(url: string, auth: { protocol?: string; headers?: Record<string, string> }) {
  const ws = auth.headers
    ? new WebSocket(url, { headers: auth.headers } as unknown as string[])
    : new WebSocket(url, auth.protocol)
  const messages: unknown[] = []
  ws.onmessage = (e) => void messages.push(JSON.parse(String(e.data)))
  const closed = new Promise<number>((resolve) => ws.addEventListener('close', (e) => resolve(e.code)))
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve()
    ws.onerror = () => reject(new Error('the socket did not open'))
  })
  return { ws, messages, closed }
}

/** The close code, or 'open' when the socket is still open after `ms`. */
const closedWithin = (s: { closed: Promise<number> }, ms: number) => Promise.race([s.closed, Bun.sleep(ms).then(() => 'open' as const)])

describe('cluster: what a replica holds open', () => {
  test('a WebSocket on A ends (1008) at once when its session is logged out on B, or its token deleted on C', async () => {
    const admin = await cluster.login('admin', cluster.adminPassword, A)
    const kept = await cluster.login('admin', cluster.adminPassword, A)
    const wsUrl = `${A.url.replace(/^http/, 'ws')}/api/ws/stats`
    const bySession = await socket(wsUrl, { protocol: admin })
    const bystander = await socket(wsUrl, { protocol: kept })
    const made = await A.call('POST', '/api/tokens', {
      jwt: kept,
      json: { name: 'stats', description: '', capabilities: ['Stats'], expiresAt: null },
    })
    expect(made.status).toBe(200)
    const byToken = await socket(wsUrl, { headers: { 'Service-Token': made.body.token } })
    // the sockets work: a subscription is acknowledged
    bySession.ws.send(JSON.stringify({ Subs: ['ping'] }))
    for (let i = 0; i < 100 && bySession.messages.length === 0; i++) await Bun.sleep(20)
    expect(bySession.messages[0]).toEqual({ Resp: 'ACK' })

    expect((await B.call('PUT', '/api/logout', { jwt: admin })).status).toBe(200)
    expect(await closedWithin(bySession, 5000)).toBe(1008)
    expect((await C.call('DELETE', `/api/tokens/${made.body.id}`, { jwt: kept })).status).toBe(200)
    expect(await closedWithin(byToken, 5000)).toBe(1008)
    // nothing else ended
    expect(await closedWithin(bystander, 200)).toBe('open')
    bystander.ws.close()
  }, 20_000)

  test('`quarry admin reset-password` on a host against the database ends the user\'s WebSockets on every replica at once', async () => {
    const u = await cluster.createUser()
    const jwt = await cluster.login(u.User, u.Pass, A)
    // no subscription: nothing ticks, so only the tool's event can end it within the wait
    const onA = await socket(`${A.url.replace(/^http/, 'ws')}/api/ws/stats`, { protocol: jwt })
    const tool = Bun.spawn([process.execPath, 'run', MAIN, 'admin', 'reset-password', u.User, '--generate'], {
      env: { PATH: process.env.PATH ?? '', HOME: tmpdir(), NO_COLOR: '1', QUARRY_DATABASE_URL: cluster.databaseUrl },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [code, stderr] = await Promise.all([tool.exited, new Response(tool.stderr).text()])
    expect({ code, stderr }).toEqual({ code: 0, stderr: `quarry: the password of "${u.User}" (UID ${u.uid}) is reset; 1 session(s) ended\n` })
    expect(await closedWithin(onA, 5000)).toBe(1008)
    expect((await whoami(B, jwt)).status).toBe(401)
  }, 30_000)
})

describe('cluster: shared data', () => {
  test('dashboards, library entries, resources and files written on one replica are read on the others', async () => {
    const u = await cluster.createUser()
    const jwt = await cluster.login(u.User, u.Pass, A)

    const dash = await A.call('POST', '/api/dashboards', { jwt, json: { Name: 'shared dash', Data: { tiles: [1, 2] } } })
    expect(dash.status).toBe(200)
    for (const r of [B, C]) {
      const got = await r.call('GET', `/api/dashboards/${dash.body}`, { jwt })
      expect(got.status).toBe(200)
      expect(got.body).toMatchObject({ Name: 'shared dash', Data: { tiles: [1, 2] } })
    }

    const entry = await B.call('POST', '/api/library', { jwt, json: { Name: 'shared query', Query: 'tag=x grep y' } })
    expect(entry.status).toBe(200)
    for (const r of [A, C]) expect((await r.call('GET', `/api/library/${entry.body.ThingUUID}`, { jwt })).body).toMatchObject({ Name: 'shared query', Query: 'tag=x grep y' })

    const resource = await C.call('POST', '/api/resources', { jwt, json: { ResourceName: 'shared-res', Description: 'a resource' } })
    expect(resource.status).toBe(200)
    const fd = new FormData()
    fd.append('file', new Blob(['resource contents from C']), 'contents.bin')
    expect((await C.call('PUT', `/api/resources/${resource.body.GUID}/raw`, { jwt, body: fd })).status).toBe(200)
    for (const r of [A, B]) {
      const got = await r.call('GET', `/api/resources/${resource.body.GUID}/raw`, { jwt })
      expect(got.status).toBe(200)
      expect(got.text).toBe('resource contents from C')
    }

    const file = new FormData()
    file.append('name', 'shared-file')
    file.append('desc', 'a file')
    file.append('file', new Blob(['file contents from A']), 'upload.bin')
    const posted = await A.call('POST', '/api/files', { jwt, body: file })
    expect(posted.status).toBe(200)
    for (const r of [B, C]) {
      const got = await r.call('GET', `/api/files/${posted.body.ThingUUID}`, { jwt })
      expect(got.status).toBe(200)
      expect(got.text).toBe('file contents from A')
    }
    // a deletion on one is seen by the others
    expect((await B.call('DELETE', `/api/files/${posted.body.ThingUUID}`, { jwt })).status).toBe(200)
    for (const r of [A, C]) expect((await r.call('GET', `/api/files/${posted.body.ThingUUID}`, { jwt })).status).toBe(404)
  })
})

describe('cluster: a replica dies', () => {
  test('SIGKILL of A: B and C keep answering every request; A restarted rejoins and serves the same sessions', async () => {
    const u = await cluster.createUser()
    const jwt = await cluster.login(u.User, u.Pass, A)
    const dash = await A.call('POST', '/api/dashboards', { jwt, json: { Name: 'before the crash' } })
    expect(dash.status).toBe(200)
    await cluster.kill(A)
    const client = cluster.client()
    const answered = new Set<string>()
    for (let i = 0; i < 6; i++) {
      const res = await client.call('GET', `/api/dashboards/${dash.body}`, { jwt })
      expect(res.status).toBe(200)
      answered.add(res.replica)
    }
    expect([...answered].sort()).toEqual(['B', 'C'])
    // a write through the survivors too
    const after = await client.call('POST', '/api/dashboards', { jwt, json: { Name: 'during the outage' } })
    expect(after.status).toBe(200)

    await cluster.restart(A)
    expect((await whoami(A, jwt)).body.UID).toBe(u.uid)
    const got = await A.call('GET', `/api/dashboards/${after.body}`, { jwt })
    expect(got.body).toMatchObject({ Name: 'during the outage' })
    // the restarted replica did not make another admin
    expect(A.lines.some((l) => String(l.msg).startsWith('created the admin account'))).toBe(false)
    expect(await cluster.rows('SELECT count(*) AS n FROM users WHERE admin')).toEqual([{ n: 1 }])
  }, 30_000)
})
