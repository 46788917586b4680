// What the shippers' tests read back: every entry a search finds, as plain values to compare with what was sent.
import { expect } from 'bun:test'
import type { TestServer } from './helpers'

export interface Found {
  ts: number
  tag: string
  src: string
  data: string
}

/** Every entry a search of `query` finds in a wide time range, in the order of the search. */
export async function search(s: TestServer, jwt: string, query = 'tag=*'): Promise<Found[]> {
  const launched = await s.call('POST', '/api/searchctrl/launch', {
    jwt,
    json: { SearchString: query, SearchStart: '2000-01-01T00:00:00Z', SearchEnd: '2100-01-01T00:00:00Z' },
  })
  expect(launched.status).toBe(200)
  await s.searches.settled()
  const got = await s.call('GET', `/api/searchctrl/${launched.body.SearchID}/download/json`, { jwt })
  expect(got.status).toBe(200)
  return (got.body as { TS: string; Tag: string; SRC: string; Data: string }[]).map((r) => ({
    ts: Date.parse(r.TS),
    tag: r.Tag,
    src: r.SRC,
    data: Buffer.from(r.Data, 'base64').toString(),
  }))
}

export const byData = (a: Found, b: Found) => (a.data < b.data ? -1 : a.data > b.data ? 1 : 0)
export const entryCount = async (s: TestServer) => Number((await s.rows('SELECT count(*) AS n FROM entries'))[0]!.n)
