// What the request hot path relies on (bench/README.md), checked on the assembled app: routes Elysia compiles without
// an await where the store answers at once, and the cluster's gate, which looks only at requests outside Bun's route
// table, missing no internal request.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { UNMATCHED_ROUTE } from '../server/runtime/metrics'
import { RouteLabels } from '../server/http/request-log'
import { createTestServer, type TestServer } from './helpers'

let s: TestServer
beforeAll(async () => {
  s = await createTestServer()
})
afterAll(() => s.close())

type CompiledRoute = { method: string; path: string; hooks: { parse?: unknown[] }; compile: () => (c: unknown) => unknown }
const routes = () => s.app.routes as unknown as CompiledRoute[]
const route = (method: string, path: string) => routes().find((r) => r.method === method && r.path === path)!

describe('routes compiled for the store', () => {
  test('no GET route has a body parser, so none is made async by one', () => {
    const withParser = routes().filter((r) => r.method === 'GET' && (r.hooks.parse?.length ?? 0) > 0)
    expect(withParser.map((r) => r.path)).toEqual([])
  })

  test('the hottest routes are plain functions on a store that answers at once (SQLite), async ones otherwise (PostgreSQL)', () => {
    const expected = s.auth.answersAtOnce ? 'Function' : 'AsyncFunction'
    for (const path of ['/api/info/whoami', '/api/dashboards/:id', '/api/dashboards'])
      expect({ path, compiled: route('GET', path).compile().constructor.name }).toEqual({ path, compiled: expected })
    // a public route without any store read is plain on every store
    expect(route('GET', '/api/test').compile().constructor.name).toBe('Function')
  })
})

describe("the cluster's gate", () => {
  test("no route of Bun's route table takes a path under /api/internal, so requests it routes need no look", () => {
    // Bun's table holds every route but WebSockets and wildcards (Elysia's BunAdapter); the rest reach the gate.
    const table = new RouteLabels()
    table.learn(routes().filter((r) => r.method !== 'WS' && !r.path.endsWith('*')))
    for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'])
      for (const path of ['/api/internal', '/api/internal/', '/api/internal/ws/search', '/api/internal/forward/api/info/whoami', '/api/internal/forward/api/dashboards/1'])
        expect({ method, path, route: table.of(method, `http://h${path}`) }).toEqual({ method, path, route: UNMATCHED_ROUTE })
  })

  test('over HTTP an internal request without the secret is refused before any route', async () => {
    const server = await createTestServer()
    server.app.listen({ hostname: '127.0.0.1', port: 0 })
    try {
      const base = `http://127.0.0.1:${server.app.server!.port}`
      const auth = { authorization: `Bearer ${server.adminJwt}` }
      for (const path of ['/api/internal/forward/api/info/whoami', '/api/internal/forward/api/dashboards/1', '/api/internal']) {
        const res = await fetch(`${base}${path}`, { headers: auth })
        expect({ path, status: res.status, body: await res.json() }).toEqual({ path, status: 401, body: { Error: 'internal route: the cluster secret is required' } })
      }
      const wrong = await fetch(`${base}/api/internal/forward/api/info/whoami`, { headers: { ...auth, 'x-quarry-cluster-secret': 'guess' } })
      expect(wrong.status).toBe(403)
    } finally {
      server.app.server!.stop(true)
      server.close()
    }
  })
})
