// GET /api/health (liveness) and GET /api/health/ready (readiness), through the real app: public, cheap, in the
// OpenAPI document, and 503 naming the part that fails. Readiness depends on the metadata store only: a blob store
// that fails or freezes is reported and logged, what needs it answers 503 within QUARRY_BLOB_TIMEOUT, and everything
// else keeps working.
import { afterEach, describe, expect, test } from 'bun:test'
import { type BlobStore, createDiskBlobStore } from '../server/blob'
import { READY_CACHE_MS } from '../plugins/system/health'
import { ADMIN_PASSWORD, type TestServer, createTestServer } from './helpers'

let servers: TestServer[] = []
afterEach(() => {
  servers.forEach((s) => s.close())
  servers = []
})
async function server(...args: Parameters<typeof createTestServer>) {
  const s = await createTestServer(...args)
  servers.push(s)
  return s
}

async function blobKeys(s: TestServer) {
  const keys: string[] = []
  for await (const e of s.blobs.list()) keys.push(e.key)
  return keys
}

describe('liveness', () => {
  test('GET /api/health: 200 {"status":"ok"} without authentication, with the dependencies as last seen', async () => {
    const s = await server()
    const res = await s.call('GET', '/api/health')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ status: 'ok', dependencies: { store: 'unknown', blobs: 'unknown' } })
    await s.call('GET', '/api/health/ready')
    expect((await s.call('GET', '/api/health')).body).toEqual({ status: 'ok', dependencies: { store: 'ok', blobs: 'ok' } })
  })
})

describe('readiness', () => {
  test('ready: 200 with every check ok, no authentication, and the write probe leaves no blob behind', async () => {
    const s = await server()
    const before = await blobKeys(s)
    const res = await s.call('GET', '/api/health/ready')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ status: 'ok', checks: { store: 'ok', migrations: 'ok', blobs: 'ok' } })
    expect(await blobKeys(s)).toEqual(before)
  })

  test('a blob store that refuses writes: still ready (200) with blobs failed, logged once at warn, its recovery at info', async () => {
    let failing = false
    const s = await server(
      {},
      {
        blobs: async (dir) => {
          const disk = await createDiskBlobStore({ dataDir: dir })
          return { ...disk, put: (key, stream, opts) => (failing ? Promise.reject(new Error('ENOSPC: no space left on device')) : disk.put(key, stream, opts)) }
        },
      },
    )
    failing = true
    const res = await s.call('GET', '/api/health/ready')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ status: 'ok', checks: { store: 'ok', migrations: 'ok', blobs: 'failed: ENOSPC: no space left on device' } })
    expect((await s.call('GET', '/api/health')).body).toEqual({ status: 'ok', dependencies: { store: 'ok', blobs: 'failing' } })
    await Bun.sleep(READY_CACHE_MS + 100)
    expect((await s.call('GET', '/api/health/ready')).status).toBe(200)
    // once the store takes writes again (after the short reuse of the last answer) its check is ok again
    failing = false
    await Bun.sleep(READY_CACHE_MS + 100)
    expect((await s.call('GET', '/api/health/ready')).body.checks.blobs).toBe('ok')
    expect((await s.call('GET', '/api/health')).body.dependencies).toEqual({ store: 'ok', blobs: 'ok' })
    // two failed checks, one outage: one warning; one recovery line
    const lines = s.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.dependency === 'blobs')
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      ['warn', 'the blob store is failing: requests that need it fail until it answers again'],
      ['info', 'the blob store answers again'],
    ])
    expect(lines[0]!.error).toBe('ENOSPC: no space left on device')
  })

  test('a frozen blob store: downloads and uploads answer 503 naming it within QUARRY_BLOB_TIMEOUT; login, users and readiness keep working', async () => {
    let frozen = false
    const never = new Promise<never>(() => {})
    const s = await server(
      { blobTimeoutMs: 300 },
      {
        blobs: async (dir) => {
          const disk = await createDiskBlobStore({ dataDir: dir })
          // A store that accepts every call and never answers (an S3 endpoint that froze), until thawed.
          const hang =
            <A extends unknown[], R>(f: (...a: A) => Promise<R>) =>
            (...a: A): Promise<R> =>
              frozen ? never : f(...a)
          const store: BlobStore = {
            ...disk,
            put: hang(disk.put),
            get: hang(disk.get),
            body: hang((key: string) => disk.get(key)),
            stat: hang(disk.stat),
            delete: hang(disk.delete),
            copy: hang(disk.copy),
          }
          return store
        },
      },
    )
    const jwt = await s.login('admin', ADMIN_PASSWORD)
    const created = await s.call('POST', '/api/resources', { jwt, json: { ResourceName: 'frozen', Description: 'd' } })
    const guid = created.body.GUID as string
    const put = (data: string) => {
      const fd = new FormData()
      fd.append('file', new Blob([data]), 'contents.bin')
      return s.handle(new Request(`http://localhost/api/resources/${guid}/raw`, { method: 'PUT', body: fd, headers: { authorization: `Bearer ${jwt}` } }))
    }
    expect((await put('before the freeze')).status).toBe(200)
    frozen = true
    const blobError = 'the blob store did not answer within 0.3 s (QUARRY_BLOB_TIMEOUT): try again later'
    for (const attempt of [1, 2]) {
      const started = performance.now()
      const download = await s.call('GET', `/api/resources/${guid}/raw`, { jwt })
      expect([attempt, download.status, download.body]).toEqual([attempt, 503, { Error: blobError }])
      const upload = await put('during the freeze')
      expect([upload.status, upload.body]).toEqual([503, { Error: blobError }])
      // generous: a loaded machine, two operations each bounded by 0.3 s
      expect(performance.now() - started).toBeLessThan(5000)
    }
    // what needs only the metadata store works; the replica stays ready
    expect((await s.call('POST', '/api/login', { json: { User: 'admin', Pass: ADMIN_PASSWORD } })).status).toBe(200)
    expect((await s.call('GET', '/api/users', { jwt })).status).toBe(200)
    const ready = await s.call('GET', '/api/health/ready')
    expect(ready.status).toBe(200)
    expect(ready.body.checks.blobs).toStartWith('failed: ')
    expect((await s.call('GET', '/api/health')).body.dependencies).toEqual({ store: 'ok', blobs: 'failing' })
    // thawed: the old contents are there, the next operation says so, and the outage was logged once
    frozen = false
    const after = await s.call('GET', `/api/resources/${guid}/raw`, { jwt })
    expect([after.status, after.text]).toEqual([200, 'before the freeze'])
    expect((await s.call('GET', '/api/health')).body.dependencies).toEqual({ store: 'ok', blobs: 'ok' })
    const lines = s.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.dependency === 'blobs')
    expect(lines.map((l) => l.level)).toEqual(['warn', 'info'])
  })

  test('a store that errors: 503 naming the store', async () => {
    const s = await server()
    s.store.close()
    const res = await s.call('GET', '/api/health/ready')
    expect(res.status).toBe(503)
    expect(res.body.checks.store).toStartWith('failed: ')
    expect(res.body.checks.blobs).toBe('ok')
    expect(res.body.Error).toBe('not ready: store')
  })

  test('a store behind this server\'s migrations: 503 naming migrations', async () => {
    const s = await server()
    await s.rows('DELETE FROM schema_migrations WHERE version = (SELECT MAX(version) FROM schema_migrations)')
    const res = await s.call('GET', '/api/health/ready')
    expect(res.status).toBe(503)
    expect(res.body.checks).toMatchObject({ store: 'ok', blobs: 'ok' })
    expect(res.body.checks.migrations).toMatch(/^failed: the store is at schema version \d+, this server needs \d+$/)
    expect(res.body.Error).toBe('not ready: migrations')
  })

  test('both routes are in the OpenAPI document, public (no x-permission)', async () => {
    const s = await server()
    const doc = (await s.call('GET', '/api/docs/json')).body
    for (const path of ['/api/health', '/api/health/ready']) {
      expect(doc.paths[path]?.get).toBeDefined()
      expect(doc.paths[path].get['x-permission']).toBeUndefined()
    }
  })
})
