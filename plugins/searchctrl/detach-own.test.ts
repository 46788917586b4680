// A client may always leave what it attached itself (AccessSpec releaseOwn): an API token without AttachSearch
// detaches from the searches it launched, and only from those; its owner is never blocked by searches such a token
// could not let go of.
import { afterEach, describe, expect, test } from 'bun:test'
import { type TestServer, createTestServer, expectError, itemWorld } from '../../test/helpers'

const servers: TestServer[] = []
afterEach(() => {
  for (const s of servers.splice(0)) s.close()
})

async function world(config = {}) {
  const s = await createTestServer(config)
  servers.push(s)
  return itemWorld(s)
}

async function tokenOf(s: TestServer, jwt: string, capabilities: string[]) {
  const res = await s.call('POST', '/api/tokens', { jwt, json: { name: `t${capabilities.join('')}`, capabilities } })
  expect(res.status).toBe(200)
  return { 'Service-Token': res.body.token as string }
}

async function launch(s: TestServer, opts: { jwt?: string; headers?: Record<string, string> }): Promise<string> {
  const res = await s.call('POST', '/api/searchctrl/launch', { ...opts, json: { SearchString: 'tag=web' } })
  expect({ status: res.status, text: res.text }).toMatchObject({ status: 200 })
  return res.body.SearchID as string
}

async function attachedClients(s: TestServer, id: string): Promise<number | undefined> {
  const res = await s.call('GET', '/api/searchctrl/all', { jwt: s.adminJwt })
  expect(res.status).toBe(200)
  return (res.body as { ID: string; AttachedClients: number }[]).find((e) => e.ID === id)?.AttachedClients
}

describe('detach with a token that lacks AttachSearch', () => {
  test('it leaves a search it launched itself', async () => {
    const { s, owner } = await world()
    const headers = await tokenOf(s, owner.jwt, ['Search', 'Download'])
    const id = await launch(s, { headers })
    expect(await attachedClients(s, id)).toBe(1)
    const res = await s.call('PUT', `/api/searchctrl/${id}/detach`, { headers })
    expect({ status: res.status, text: res.text }).toEqual({ status: 200, text: 'null' })
    expect(await attachedClients(s, id)).toBe(0)
    // attaching still needs the permission it lacks
    expectError(await s.call('PUT', `/api/searchctrl/${id}/attach`, { headers }), 403, { Cap: 'AttachSearch' })
  })

  test('it may not detach anything else: a search of its owner\'s session, one it already left, another user\'s', async () => {
    const { s, owner, member } = await world()
    const headers = await tokenOf(s, owner.jwt, ['Search'])
    const bySession = await launch(s, { jwt: owner.jwt })
    expectError(await s.call('PUT', `/api/searchctrl/${bySession}/detach`, { headers }), 403, { Cap: 'AttachSearch' })
    expect(await attachedClients(s, bySession)).toBe(1)
    const own = await launch(s, { headers })
    expect((await s.call('PUT', `/api/searchctrl/${own}/detach`, { headers })).status).toBe(200)
    expectError(await s.call('PUT', `/api/searchctrl/${own}/detach`, { headers }), 403, { Cap: 'AttachSearch' })
    // a search it may not see at all stays a 404, as for any caller
    const others = await launch(s, { jwt: member.jwt })
    expect((await s.call('PUT', `/api/searchctrl/${others}/detach`, { headers })).status).toBe(404)
    expect(await attachedClients(s, others)).toBe(1)
  })

  test('a token holding AttachSearch detaches as before, also from a search it did not attach (nothing changes)', async () => {
    const { s, owner } = await world()
    const headers = await tokenOf(s, owner.jwt, ['Search', 'AttachSearch'])
    const bySession = await launch(s, { jwt: owner.jwt })
    expect((await s.call('PUT', `/api/searchctrl/${bySession}/detach`, { headers })).status).toBe(200)
    expect(await attachedClients(s, bySession)).toBe(1)
  })

  test('past the cap of unsaved searches, the owner is not blocked by what such a token launched and left', async () => {
    const { s, owner } = await world({ maxSearchesPerUser: 3, searchGraceMs: 3_600_000 })
    const headers = await tokenOf(s, owner.jwt, ['Search', 'Download'])
    for (let i = 0; i < 5; i++) {
      const id = await launch(s, { headers })
      expect((await s.call('PUT', `/api/searchctrl/${id}/detach`, { headers })).status).toBe(200)
    }
    // the searches it left wait out their grace period and make room for the owner's next launch
    await launch(s, { jwt: owner.jwt })
  })
})
