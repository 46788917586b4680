// GET /api/searchctrl/:id/details?wait=SECONDS: the long-poll `quarry search run` follows a search with. The answer
// to a running search is held until the search ends (finishes, is stopped) or the time is up; a finished search, or no
// `wait`, answers at once; a bad `wait` is a 400 that changes nothing.
import { afterEach, describe, expect, test } from 'bun:test'
import { ZERO_TIME } from '../../server/runtime/time'
import { type TestServer, createTestServer, expectError } from '../../test/helpers'

const servers: TestServer[] = []
afterEach(() => {
  for (const s of servers.splice(0)) s.close()
})

/** A server whose searches read 4 entries, then wait until the gate opens; 40 entries ingested. */
async function gated() {
  let open = false
  const waiting: (() => void)[] = []
  const s = await createTestServer({}, {
    search: { chunk: 4, stepMs: 0, step: () => (open ? Promise.resolve() : new Promise<void>((resolve) => waiting.push(resolve))) },
  })
  servers.push(s)
  const entries = Array.from({ length: 40 }, (_, i) => ({ TS: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), Tag: 'web', Data: Buffer.from(`line ${i}`).toString('base64') }))
  expect((await s.call('POST', '/api/ingest/json', { jwt: s.adminJwt, json: entries })).status).toBe(200)
  const launched = await s.call('POST', '/api/searchctrl/launch', { jwt: s.adminJwt, json: { SearchString: 'tag=web' } })
  expect(launched.status).toBe(200)
  return {
    s,
    id: launched.body.SearchID as string,
    openGate() {
      open = true
      for (const resolve of waiting.splice(0)) resolve()
    },
  }
}

/** Whether `p` is still pending after a pause in which any answer the server had ready would have come. */
async function stillPending(p: Promise<unknown>): Promise<boolean> {
  return (await Promise.race([p.then(() => false), Bun.sleep(300).then(() => true)])) as boolean
}

describe('details with wait', () => {
  test('held while the search runs, answered with its end once it finishes', async () => {
    const { s, id, openGate } = await gated()
    const answer = s.call('GET', `/api/searchctrl/${id}/details?wait=5`, { jwt: s.adminJwt })
    expect(await stillPending(answer)).toBe(true)
    openGate()
    const res = await answer
    expect(res.status).toBe(200)
    expect(res.body.Finished).not.toBe(ZERO_TIME)
    expect(res.body.ItemCount).toBe(40)
    // finished: answered at once, as without wait
    const again = await s.call('GET', `/api/searchctrl/${id}/details?wait=5`, { jwt: s.adminJwt })
    expect(again.body).toEqual((await s.call('GET', `/api/searchctrl/${id}/details`, { jwt: s.adminJwt })).body)
  })

  test('a stop ends the wait (once the runner takes its next step); without wait a running search answers at once', async () => {
    const { s, id, openGate } = await gated()
    expect((await s.call('GET', `/api/searchctrl/${id}/details`, { jwt: s.adminJwt })).body.Finished).toBe(ZERO_TIME)
    const answer = s.call('GET', `/api/searchctrl/${id}/details?wait=5`, { jwt: s.adminJwt })
    expect(await stillPending(answer)).toBe(true)
    expect((await s.call('PUT', `/api/searchctrl/${id}/stop`, { jwt: s.adminJwt })).status).toBe(200)
    openGate()
    const res = await answer
    expect(res.status).toBe(200)
    expect(res.body.Finished).not.toBe(ZERO_TIME)
  })

  test('the time up: the running search as it is', async () => {
    const { s, id } = await gated()
    const res = await s.call('GET', `/api/searchctrl/${id}/details?wait=0.05`, { jwt: s.adminJwt })
    expect(res.status).toBe(200)
    expect(res.body.Finished).toBe(ZERO_TIME)
  })

  test('a wait that is not 0 to 5 seconds is refused with 400', async () => {
    const { s, id } = await gated()
    for (const bad of ['-1', '5.5', '60', 'soon', '1e3', '0x1'])
      expectError(await s.call('GET', `/api/searchctrl/${id}/details?wait=${bad}`, { jwt: s.adminJwt }), 400)
  })
})
