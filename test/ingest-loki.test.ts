// Loki push (POST /api/ingest/loki/api/v1/push) with winston-loki, a Loki client nobody here wrote, in its JSON mode
// and its protobuf + snappy mode, against a listening test server; then a search finds exactly what was logged:
// count, times, tags, sources, bytes (the lines as logged). Bad input (garbage and truncated protobuf, no snappy, a
// snappy and a gzip bomb, a wrong type, bad labels, a partly bad batch, too many entries, a token without Ingest, a
// locked owner) gets its refusal, with nothing stored where the whole request is refused, and the server serving.
import { afterEach, describe, expect, test } from 'bun:test'
import { createRequire } from 'node:module'
import { gzipSync } from 'node:zlib'
import winston from 'winston'
import LokiTransport from 'winston-loki'
import type { Config } from '../server/runtime/config'
import { parseLabels } from '../server/ingest/loki'
import { type TestServer, blobFiles, createTestServer, expectError, storeSnapshot } from './helpers'

const require = createRequire(import.meta.url)
/** winston-loki's own protobuf code (protobufjs static module of logproto) and the snappy it compresses with. */
const { logproto } = require('winston-loki/src/proto') as { logproto: { PushRequest: { encode(m: unknown): { finish(): Uint8Array } } } }
const snappy = require('snappy') as { compressSync(b: Uint8Array): Buffer }

const servers: TestServer[] = []
afterEach(async () => {
  for (const s of servers.splice(0)) {
    if (s.app.server) await s.app.stop(true)
    await s.close()
  }
})

async function listening(config: Partial<Config> = {}) {
  const s = await createTestServer(config)
  servers.push(s)
  s.app.listen({ hostname: '127.0.0.1', port: 0 })
  const base = `http://127.0.0.1:${s.app.server!.port}/api/ingest`
  const user = await s.createUser()
  const token = await tokenOf(s, user.jwt, ['Ingest'])
  return { s, base, url: `${base}/loki/api/v1/push`, user, token }
}

async function tokenOf(s: TestServer, jwt: string, capabilities: string[]): Promise<string> {
  const res = await s.call('POST', '/api/tokens', { jwt, json: { name: `t${Math.random()}`, capabilities } })
  expect(res.status).toBe(200)
  return res.body.token as string
}

const T0 = Date.parse('2026-04-02T08:00:00.000Z')

interface Found {
  TS: string
  Tag: string
  SRC: string
  Data: string
}

async function search(s: TestServer, jwt: string, query: string): Promise<Found[]> {
  const json = { SearchString: query, SearchStart: new Date(T0 - 86_400_000).toISOString(), SearchEnd: new Date(Date.now() + 86_400_000).toISOString() }
  const launched = await s.call('POST', '/api/searchctrl/launch', { jwt, json })
  expect({ status: launched.status, text: launched.text }).toMatchObject({ status: 200 })
  await s.searches.settled()
  const got = await s.call('GET', `/api/searchctrl/${launched.body.SearchID}/download/json`, { jwt })
  expect(got.status).toBe(200)
  return got.body as Found[]
}

const entryCount = async (s: TestServer) => Number((await s.rows('SELECT count(*) AS n FROM entries'))[0]!.n)
const text = (f: Found) => Buffer.from(f.Data, 'base64').toString()

describe('Loki push from winston-loki', () => {
  for (const json of [true, false])
    test(`${json ? 'JSON' : 'protobuf + snappy'}: a search finds every line, with its time, tag (job), source and bytes`, async () => {
      const { s, base, user, token } = await listening()
      const errors: unknown[] = []
      const transport = new LokiTransport({
        host: base,
        basicAuth: `shipper:${token}`,
        json,
        labels: { job: 'shop', host: 'web-1' },
        replaceTimestamp: false,
        batching: true,
        interval: 0.1,
        gracefulShutdown: false,
        format: winston.format.printf((info) => String(info.message)),
        onConnectionError: (e: unknown) => errors.push(e),
      })
      // winston-loki falls back to JSON when it cannot load snappy: the protobuf run must really be protobuf
      expect((transport as unknown as { batcher: { contentType: string } }).batcher.contentType).toBe(json ? 'application/json' : 'application/x-protobuf')
      const logger = winston.createLogger({ transports: [transport] })
      const lines = Array.from({ length: 120 }, (_, i) => ({
        level: ['info', 'warn', 'error'][i % 3]!,
        message: `GET /cart/${i} ${200 + (i % 5)} ${'é'.repeat(i % 4)}${' pad'.repeat(i % 7)}`,
        timestamp: new Date(T0 + i * 1500 + (i % 1000)).toISOString(),
      }))
      for (const l of lines) logger.log(l)
      await transport.flush()
      await transport.close()
      expect(errors).toEqual([])

      const found = await search(s, user.jwt, 'tag=shop')
      expect(found.map((f) => ({ TS: new Date(f.TS).getTime(), Tag: f.Tag, SRC: f.SRC, line: text(f) }))).toEqual(
        lines.map((l) => ({ TS: Date.parse(l.timestamp), Tag: 'shop', SRC: '127.0.0.1', line: l.message })),
      )
      expect(await entryCount(s)).toBe(lines.length)
      const bytes = lines.reduce((n, l) => n + Buffer.byteLength(l.message), 0)
      const metrics = (await s.call('GET', '/metrics')).text
      expect(metrics).toContain(`quarry_ingest_entries_total{listener="http",protocol="loki"} ${lines.length}`)
      expect(metrics).toContain(`quarry_ingest_bytes_total{listener="http",protocol="loki"} ${bytes}`)
      // the lines are read as lines: a regex over them
      expect((await search(s, user.jwt, 'tag=shop grep "/cart/7 "')).map(text)).toEqual([lines[7]!.message])
    }, 30_000)

  test('the tag label and the default tag are configured; a label value that is no tag is made one', async () => {
    const { s, url, user, token } = await listening({ lokiTagLabel: 'app', lokiDefaultTag: 'unlabelled' })
    const push = {
      streams: [
        { stream: { app: 'billing api', job: 'ignored' }, values: [[String(T0 * 1e6), 'one']] },
        { stream: { job: 'x' }, values: [[`${T0 + 1}000000`, 'two', { trace_id: 'abc' }]] },
      ],
    }
    const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(push) })
    expect(res.status).toBe(204)
    expect((await search(s, user.jwt, 'tag=billing_api')).map(text)).toEqual(['one'])
    expect((await search(s, user.jwt, 'tag=unlabelled')).map((f) => [text(f), new Date(f.TS).getTime()])).toEqual([['two', T0 + 1]])
  })
})

describe('Loki refusals', () => {
  async function refusedUnchanged(s: TestServer, act: () => Promise<Response>) {
    const before = { store: storeSnapshot(s), blobs: blobFiles(s) }
    const res = await act()
    expect({ store: storeSnapshot(s), blobs: blobFiles(s) }).toEqual(before)
    return res
  }
  const post = (url: string, token: string, body: Uint8Array | string, headers: Record<string, string>) =>
    fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, ...headers }, body })
  const pbPush = (streams: { labels: string; entries: { timestamp: { seconds: number; nanos: number }; line: string }[] }[]) => logproto.PushRequest.encode({ streams }).finish()
  const entries = (n: number, line = 'x') => Array.from({ length: n }, (_, i) => ({ timestamp: { seconds: T0 / 1000 + i, nanos: 0 }, line }))
  const PB = { 'content-type': 'application/x-protobuf' }
  const JSON_TYPE = { 'content-type': 'application/json' }

  test('undecodable bodies: 400 with the reason, nothing stored; then a good push is taken', async () => {
    const { s, url, user, token } = await listening()
    const good = pbPush([{ labels: '{job="ok"}', entries: entries(3) }])
    const cases: [string, Uint8Array | string, Record<string, string>, string][] = [
      ['garbage protobuf', snappy.compressSync(new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2])), PB, 'PushRequest'],
      ['truncated protobuf', snappy.compressSync(good.subarray(0, good.byteLength - 3)), PB, 'PushRequest'],
      ['protobuf without snappy', good, PB, 'snappy'],
      ['truncated snappy', snappy.compressSync(good).subarray(0, 10), PB, 'snappy'],
      ['bad JSON', '{"streams": [', JSON_TYPE, 'JSON'],
      ['no streams', '{"lines": []}', JSON_TYPE, 'streams'],
      ['bad gzip', new Uint8Array([0x1f, 0x8b, 0, 1]), { ...JSON_TYPE, 'content-encoding': 'gzip' }, 'gzip'],
    ]
    for (const [what, body, headers, word] of cases) {
      const res = await refusedUnchanged(s, () => post(url, token, body, headers))
      const answer = (await res.json()) as { Error: string }
      expect({ what, status: res.status, word: answer.Error.includes(word) }).toEqual({ what, status: 400, word: true })
    }
    const wrong = await refusedUnchanged(s, () => post(url, token, '{"streams": []}', { 'content-type': 'text/plain' }))
    expect(wrong.status).toBe(415)
    expect((await post(url, token, snappy.compressSync(good), PB)).status).toBe(204)
    expect((await search(s, user.jwt, 'tag=ok')).length).toBe(3)
  })

  test('a snappy bomb (declared or real) and a gzip bomb: 413 naming QUARRY_INGEST_MAX_DECOMPRESSED, nothing stored', async () => {
    const { s, url, token } = await listening({ ingestMaxDecompressedBytes: 1 << 20, maxBodyBytes: 512 << 10 })
    // a declared length of 2 GiB with nothing behind it: refused before anything is allocated
    const declared = new Uint8Array([0x80, 0x80, 0x80, 0x80, 0x08, 0x00, 0x01])
    const real = snappy.compressSync(new Uint8Array(4 << 20))
    expect(real.byteLength).toBeLessThan(512 << 10)
    const gzipBomb = gzipSync(Buffer.alloc(64 << 20, '{'))
    for (const [body, headers] of [[declared, PB], [real, PB], [gzipBomb, { ...JSON_TYPE, 'content-encoding': 'gzip' }]] as const) {
      const res = await refusedUnchanged(s, () => post(url, token, body, headers))
      expect(res.status).toBe(413)
      expect(((await res.json()) as { Error: string }).Error).toContain('QUARRY_INGEST_MAX_DECOMPRESSED')
    }
    const metrics = (await s.call('GET', '/metrics')).text
    expect(metrics).toContain('quarry_ingest_refusals_total{listener="http",protocol="loki",reason="too-large"} 3')
  })

  test('too many entries: 413 naming QUARRY_INGEST_MAX_RECORDS, in protobuf and JSON; at the bound it passes', async () => {
    const { s, url, token } = await listening({ ingestMaxRecords: 50 })
    const over = await refusedUnchanged(s, () => post(url, token, snappy.compressSync(pbPush([{ labels: '{job="a"}', entries: entries(30) }, { labels: '{job="b"}', entries: entries(21, '') }])), PB))
    expect(over.status).toBe(413)
    expect(((await over.json()) as { Error: string }).Error).toContain('QUARRY_INGEST_MAX_RECORDS')
    const values = Array.from({ length: 51 }, (_, i) => [String((T0 + i) * 1e6), 'l'])
    const overJson = await refusedUnchanged(s, () => post(url, token, JSON.stringify({ streams: [{ stream: { job: 'a' }, values }] }), JSON_TYPE))
    expect(overJson.status).toBe(413)
    expect((await post(url, token, JSON.stringify({ streams: [{ stream: { job: 'a' }, values: values.slice(1) }] }), JSON_TYPE)).status).toBe(204)
    expect(await entryCount(s)).toBe(50)
  })

  test('a partly bad push stores the good entries and answers 400 naming the others, as Loki does', async () => {
    const { s, url, user, token } = await listening()
    const json = {
      streams: [
        { stream: { job: 'mixed' }, values: [[String(T0 * 1e6), 'good 1'], ['soon', 'bad time'], [String((T0 + 1) * 1e6), 5], [String((T0 + 2) * 1e6), 'good 2']] },
        { stream: 'job=mixed', values: [[String(T0 * 1e6), 'bad stream']] },
      ],
    }
    const res = await post(url, token, JSON.stringify(json), JSON_TYPE)
    expect(res.status).toBe(400)
    const message = ((await res.json()) as { Error: string }).Error
    expect(message).toContain('3 entries rejected, 2 stored')
    expect(message).toContain('timestamp')
    expect((await search(s, user.jwt, 'tag=mixed')).map(text)).toEqual(['good 1', 'good 2'])
    // protobuf: a stream whose labels do not parse is left out, the others stored
    const pb = pbPush([{ labels: '{job="fine"}', entries: entries(2) }, { labels: 'job=broken', entries: entries(4) }])
    const partly = await post(url, token, snappy.compressSync(pb), PB)
    expect(partly.status).toBe(400)
    expect(((await partly.json()) as { Error: string }).Error).toContain('4 entries rejected, 2 stored')
    expect((await search(s, user.jwt, 'tag=fine')).length).toBe(2)
    const metrics = (await s.call('GET', '/metrics')).text
    expect(metrics).toContain('quarry_ingest_refusals_total{listener="http",protocol="loki",reason="invalid"} 7')
  })

  test('a token without Ingest (403), no credential (401), a locked owner\'s token sent as Basic (401): nothing stored', async () => {
    const { s, url, user } = await listening()
    const body = snappy.compressSync(pbPush([{ labels: '{job="a"}', entries: entries(2) }]))
    const reader = await tokenOf(s, user.jwt, ['Search'])
    expect((await refusedUnchanged(s, () => post(url, reader, body, PB))).status).toBe(403)
    expect((await refusedUnchanged(s, () => fetch(url, { method: 'POST', headers: PB, body }))).status).toBe(401)
    const other = await s.createUser()
    const token = await tokenOf(s, other.jwt, ['Ingest'])
    expect((await s.call('PUT', `/api/users/${other.uid}/lock`, { jwt: s.adminJwt })).status).toBe(200)
    const basic = `Basic ${Buffer.from(`any:${token}`).toString('base64')}`
    expect((await refusedUnchanged(s, () => fetch(url, { method: 'POST', headers: { ...PB, authorization: basic }, body }))).status).toBe(401)
    expect(await entryCount(s)).toBe(0)
  })

  test('the answers through the documented API (in-process): 204, 400, 415', async () => {
    const s = await createTestServer()
    servers.push(s)
    const u = await s.createUser()
    const ok = await s.call('POST', '/api/ingest/loki/api/v1/push', { jwt: u.jwt, json: { streams: [{ stream: { job: 'a' }, values: [[String(T0 * 1e6), 'x']] }] } })
    expect(ok.status).toBe(204)
    expectError(await s.call('POST', '/api/ingest/loki/api/v1/push', { jwt: u.jwt, json: { streams: 5 } }), 400)
    expectError(await s.call('POST', '/api/ingest/loki/api/v1/push', { jwt: u.jwt, body: 'x', headers: { 'content-type': 'text/plain' } }), 415)
  })
})

describe('Loki label sets', () => {
  test('Prometheus label text with escapes parses to its values; broken text is refused', () => {
    expect([...parseLabels('{job="a", host="h\\"1\\\\", empty="", multi="x\\ny"}')]).toEqual([
      ['job', 'a'],
      ['host', 'h"1\\'],
      ['empty', ''],
      ['multi', 'x\ny'],
    ])
    expect([...parseLabels('{}')]).toEqual([])
    expect([...parseLabels(' {level="info",job="shop"} ')]).toEqual([
      ['level', 'info'],
      ['job', 'shop'],
    ])
    for (const bad of ['', 'job="a"', '{job=a}', '{job="a"', '{1job="a"}', '{job="a" host="b"}', '{job="a"} x', '{job="\\q"}'])
      expect(() => parseLabels(bad)).toThrow('do not parse')
  })
})
