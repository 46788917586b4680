// Ingest tags across two replicas (server/search/tags.ts): each keeps the tags in memory, yet a tag created on one
// resolves at once on the other, the other's full listing learns it through the cluster event, and the bound on
// distinct tags (QUARRY_MAX_TAGS) holds for batches sent to both replicas at the same moment.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { REQ } from '../../plugins/ws/protocol'
import { type Cluster, type Replica, startCluster } from './harness'

const MAX_TAGS = 20
let cluster: Cluster
let A: Replica, B: Replica
let admin: string

beforeAll(async () => {
  cluster = await startCluster({ replicas: 2, env: { QUARRY_MAX_TAGS: String(MAX_TAGS) } })
  ;[A, B] = cluster.replicas as [Replica, Replica]
  admin = await cluster.login('admin', cluster.adminPassword, A)
}, 60_000)
afterAll(() => cluster?.stop(), 30_000)

const T0 = Date.parse('2026-01-01T00:00:00Z')
const b64 = (text: string) => Buffer.from(text).toString('base64')
const entry = (tag: string, at: number, text = `${tag} entry`) => ({ TS: new Date(at).toISOString(), Tag: tag, Data: b64(text) })

async function searchOn(r: Replica, query: string, from: number, to: number) {
  const launched = await r.call('POST', '/api/searchctrl/launch', {
    jwt: admin,
    json: { SearchString: query, SearchStart: new Date(from).toISOString(), SearchEnd: new Date(to).toISOString() },
  })
  expect(launched.status).toBe(200)
  const id = launched.body.SearchID as string
  const end = Date.now() + 20_000
  while ((await r.call('GET', `/api/searchctrl/${id}/details`, { jwt: admin })).body.Finished === '0001-01-01T00:00:00Z' && Date.now() < end) await Bun.sleep(50)
  return id
}

async function results(r: Replica, id: string) {
  const got = await r.call('GET', `/api/searchctrl/${id}/download/json`, { jwt: admin })
  expect(got.status).toBe(200)
  return (got.body as { Tag: string; Data: string }[]).map((e) => `${e.Tag}:${Buffer.from(e.Data, 'base64')}`)
}

/** The Tags answer of a search on `r`, over its WebSocket. */
async function searchTags(r: Replica, id: string): Promise<Record<string, number>> {
  const ws = new WebSocket(`${r.url.replace(/^http/, 'ws')}/api/ws/search`, admin)
  const queue: any[] = []
  ws.onmessage = (e) => queue.push(JSON.parse(String(e.data)))
  await new Promise((resolve) => (ws.onopen = resolve))
  const ask = async (m: unknown) => {
    ws.send(JSON.stringify(m))
    const end = Date.now() + 10_000
    while (queue.length === 0 && Date.now() < end) await Bun.sleep(20)
    return queue.shift()
  }
  try {
    const attached = await ask({ type: 'attach', data: { ID: id } })
    const answer = await ask({ type: attached.data.Subproto, data: { ID: REQ.SEARCH_TAGS } })
    return answer.data.Tags
  } finally {
    ws.close()
  }
}

describe('cluster: ingest tags', () => {
  test('a tag created on A resolves at once on B (by name and by number), and B\'s full listing learns it from the cluster event', async () => {
    // B has read the tag table at its start; both tags are created afterwards, on A.
    const ingested = await A.call('POST', '/api/ingest/json', { jwt: admin, json: [entry('fresh', T0), entry('elsewhere', T0 - 3_600_000)] })
    expect(ingested.status).toBe(200)
    // At once on B: by name (tag=fresh) and by number (tag=*: the row carries only the tag's number).
    expect(await results(B, await searchOn(B, 'tag=fresh', T0 - 1000, T0 + 1000))).toEqual(['fresh:fresh entry'])
    const all = await searchOn(B, 'tag=*', T0 - 1000, T0 + 1000)
    expect(await results(B, all)).toEqual(['fresh:fresh entry'])
    // 'elsewhere' lies outside every search B ran: B knows it only from A's event, within moments.
    let tags = await searchTags(B, all)
    const end = Date.now() + 5000
    while (!('elsewhere' in tags) && Date.now() < end) {
      await Bun.sleep(100)
      tags = await searchTags(B, all)
    }
    expect(Object.keys(tags).sort()).toEqual(['elsewhere', 'fresh'])
    expect(tags).toEqual(await searchTags(A, await searchOn(A, 'tag=*', T0 - 1000, T0 + 1000)))
  }, 60_000)

  test('batches of new tags sent to both replicas at once never take the store past QUARRY_MAX_TAGS', async () => {
    const held = async () => Number((await cluster.rows('SELECT count(*) AS n FROM ingest_tags'))[0]!.n)
    const before = await held()
    // 40 batches of one new tag each (with 500 entries, so that each transaction lasts a while), half on each replica,
    // all at once: only those that fit may pass.
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 ? A : B).call('POST', '/api/ingest/json', { jwt: admin, json: Array.from({ length: 500 }, (_, k) => entry(`race${i}`, T0 + k)) }),
      ),
    )
    const accepted = answers.filter((r) => r.status === 200).length
    for (const r of answers.filter((r) => r.status !== 200)) {
      expect(r.status).toBe(413)
      expect(r.body.Error).toContain('QUARRY_MAX_TAGS')
    }
    expect(accepted).toBe(MAX_TAGS - before)
    expect(await held()).toBe(MAX_TAGS)
  }, 60_000)
})
