// GET /api/health (liveness) and GET /api/health/ready (readiness) of issue 15 point 3, through the real app:
// public, cheap, in the OpenAPI document, and 503 naming the part that fails.
import { afterEach, describe, expect, test } from 'bun:test'
import { createDiskBlobStore } from '../server/blob'
import { READY_CACHE_MS } from '../plugins/system/health'
import { type TestServer, createTestServer } from './helpers'

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
  test('GET /api/health: 200 {"status":"ok"} without authentication', async () => {
    const s = await server()
    const res = await s.call('GET', '/api/health')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ status: 'ok' })
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

  test('a blob store that refuses writes: 503 naming blobs, the store still ok', async () => {
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
    expect(res.status).toBe(503)
    expect(res.body).toEqual({
      status: 'unavailable',
      checks: { store: 'ok', migrations: 'ok', blobs: 'failed: ENOSPC: no space left on device' },
      Error: 'not ready: blobs',
    })
    // liveness does no work, so it stays 200
    expect((await s.call('GET', '/api/health')).status).toBe(200)
    // once the store takes writes again (after the short reuse of the last answer) it is ready again
    failing = false
    await Bun.sleep(READY_CACHE_MS + 100)
    expect((await s.call('GET', '/api/health/ready')).status).toBe(200)
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
