// GET /api/info/searchmodules and /api/info/rendermodules: the lists the clients show, checked against what the
// clients read (the TypeScript client's isSearchModuleData / toRenderModule, the Go client's SearchModuleInfo and
// RenderModuleInfo) and against the engine itself: every module a query may name is listed once, in the right list,
// and every example it shows is a query that compiles.
import { afterAll, describe, expect, test } from 'bun:test'
import { compileQueryNow } from '../../engine/query'
import { MODULES } from '../../engine/registry'
import { type TestServer, createTestServer, expectError } from '../../test/helpers'

const servers: TestServer[] = []
afterAll(() => servers.forEach((s) => void s.close()))
async function server() {
  const s = await createTestServer()
  servers.push(s)
  return s
}

describe('module lists', () => {
  test('searchmodules lists every module but the renderers, with the fields the clients check', async () => {
    const s = await server()
    const u = await s.createUser()
    const res = await s.call('GET', '/api/info/searchmodules', { jwt: u.jwt })
    expect(res.status).toBe(200)
    const list = res.body as Record<string, unknown>[]
    for (const m of list) {
      expect(Object.keys(m).sort()).toEqual(['Examples', 'FrontendOnly', 'Info', 'Name', 'Sorting'])
      expect(typeof m.Name === 'string' && typeof m.Info === 'string' && (m.Info as string).length > 0).toBe(true)
      expect(m.FrontendOnly).toBe(false)
      expect(m.Sorting).toBe(m.Name === 'sort')
    }
    const names = list.map((m) => m.Name as string)
    expect(names).toEqual([...names].sort())
    expect(new Set(names)).toEqual(new Set(MODULES.filter((m) => m.kind !== 'render').map((m) => m.name)))
  })

  test('rendermodules lists the renderers as Name, Description, Examples', async () => {
    const s = await server()
    const res = await s.call('GET', '/api/info/rendermodules', { jwt: s.adminJwt })
    expect(res.status).toBe(200)
    const list = res.body as Record<string, unknown>[]
    for (const m of list) expect(Object.keys(m).sort()).toEqual(['Description', 'Examples', 'Name'])
    expect(new Set(list.map((m) => m.Name))).toEqual(new Set(MODULES.filter((m) => m.kind === 'render').map((m) => m.name)))
    expect(list.map((m) => m.Name)).toContain('text')
  })

  test('every example shown compiles as a query of its module', async () => {
    const s = await server()
    const search = (await s.call('GET', '/api/info/searchmodules', { jwt: s.adminJwt })).body as { Name: string; Examples: string[] }[]
    const render = (await s.call('GET', '/api/info/rendermodules', { jwt: s.adminJwt })).body as { Name: string; Examples: string[] }[]
    for (const m of [...search, ...render]) {
      expect(m.Examples.length).toBeGreaterThan(0)
      for (const example of m.Examples) {
        const q = compileQueryNow(`tag=x ${example}`)
        expect([...q.modules.map((c) => c.name), ...(q.explicitRenderer ? [q.renderer.name] : [])]).toContain(m.Name)
      }
    }
  })

  test('no credential: 401', async () => {
    const s = await server()
    expectError(await s.call('GET', '/api/info/searchmodules'), 401)
    expectError(await s.call('GET', '/api/info/rendermodules'), 401)
  })
})
