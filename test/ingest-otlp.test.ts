// OTLP/HTTP logs (POST /api/ingest/otlp/v1/logs) with the OpenTelemetry JS SDK's own exporters, which nobody here
// wrote: @opentelemetry/exporter-logs-otlp-http (JSON) and -proto (protobuf), gzip on and off, against a listening
// test server. What a search then finds is compared with what the test emitted, computed here from the records
// themselves: count, times, tags, sources, the data's bytes, and the OTLP fields the json module reads. Bad input
// (garbage and truncated protobuf, a wrong type, a gzip bomb, too many records, a token without Ingest, a locked
// owner) gets its refusal with nothing stored and the server still serving.
import { afterEach, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { gzipSync } from 'node:zlib'
import { SeverityNumber, TraceFlags, context, trace } from '@opentelemetry/api'
import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { OTLPLogExporter as JsonExporter } from '@opentelemetry/exporter-logs-otlp-http'
import { OTLPLogExporter as ProtoExporter } from '@opentelemetry/exporter-logs-otlp-proto'
import { ProtobufLogsSerializer } from '@opentelemetry/otlp-transformer'
import type { Config } from '../server/runtime/config'
import { decodeOtlpLogs, readExportResponse, readStatus } from '../server/ingest/otlp'
import { protobufMessages } from '../server/ingest/protobuf'
import { type TestServer, blobFiles, createTestServer, expectError, storeSnapshot } from './helpers'

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
  const url = `http://127.0.0.1:${s.app.server!.port}/api/ingest/otlp/v1/logs`
  const user = await s.createUser()
  const token = await tokenOf(s, user.jwt, ['Ingest'])
  return { s, url, user, token }
}

async function tokenOf(s: TestServer, jwt: string, capabilities: string[]): Promise<string> {
  const res = await s.call('POST', '/api/tokens', { jwt, json: { name: `t${Math.random()}`, capabilities } })
  expect(res.status).toBe(200)
  return res.body.token as string
}

const T0 = Date.parse('2026-03-01T10:00:00.000Z')

interface Found {
  TS: string
  Tag: string
  SRC: string
  Data: string
  Enumerated?: { Name: string; ValueStr: string }[]
}

/** What a search finds, through the API: launched, settled, its records downloaded. */
async function search(s: TestServer, jwt: string, query: string, start = T0 - 86_400_000, end = Date.now() + 86_400_000): Promise<Found[]> {
  const launched = await s.call('POST', '/api/searchctrl/launch', { jwt, json: { SearchString: query, SearchStart: new Date(start).toISOString(), SearchEnd: new Date(end).toISOString() } })
  expect({ status: launched.status, text: launched.text }).toMatchObject({ status: 200 })
  await s.searches.settled()
  const got = await s.call('GET', `/api/searchctrl/${launched.body.SearchID}/download/json`, { jwt })
  expect(got.status).toBe(200)
  return got.body as Found[]
}

const entryCount = async (s: TestServer) => Number((await s.rows('SELECT count(*) AS n FROM entries'))[0]!.n)

/** The attributes of the resource the provider sends with: ours, and those the SDK adds (telemetry.sdk.*). */
function providerOf(exporter: JsonExporter | ProtoExporter, attributes: Record<string, string>) {
  const resource = resourceFromAttributes(attributes)
  const provider = new LoggerProvider({ resource, processors: [new BatchLogRecordProcessor({ exporter, maxExportBatchSize: 512, scheduledDelayMillis: 60_000 })] })
  return { provider, resource }
}

const TRACE_ID = '5b8efff798038103d269b633813fc60c'
const SPAN_ID = 'eee19b7ec3c1b174'

/** The records the tests emit: times, severities, string and structured bodies, attributes, a trace context. */
function records(n: number) {
  const spanContext = { traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: TraceFlags.SAMPLED }
  return Array.from({ length: n }, (_, i) => ({
    timestamp: T0 + i * 1000 + 123,
    severityNumber: i % 2 === 0 ? SeverityNumber.INFO : SeverityNumber.ERROR,
    severityText: i % 2 === 0 ? 'INFO' : 'ERROR',
    body: i % 3 === 2 ? { msg: `structured ${i}`, ok: i % 2 === 0, n: i, list: ['a', i] } : `line ${i} of the checkout service`,
    attributes: { 'http.status': 200 + i, 'user.id': `u${i}`, ratio: i / 4, flag: i % 2 === 1 },
    eventName: i === 0 ? 'checkout.start' : undefined,
    context: i % 4 === 0 ? trace.setSpanContext(context.active(), spanContext) : undefined,
  }))
}

/** The document an entry of record `r` holds, computed from the record as emitted (server/ingest/otlp.ts names the members). */
function expectedDocument(r: ReturnType<typeof records>[number], resource: Record<string, unknown>, scope: string, scopeVersion: string) {
  const doc: Record<string, unknown> = { body: r.body, severityText: r.severityText, severityNumber: r.severityNumber, attributes: r.attributes, resource, scope, scopeVersion }
  if (r.context) Object.assign(doc, { traceId: TRACE_ID, spanId: SPAN_ID })
  if (r.eventName) doc.eventName = r.eventName
  return doc
}

describe('OTLP/HTTP logs from the OpenTelemetry JS SDK', () => {
  for (const [name, Exporter] of [['JSON (exporter-logs-otlp-http)', JsonExporter], ['protobuf (exporter-logs-otlp-proto)', ProtoExporter]] as const)
    for (const compression of ['none', 'gzip'] as const)
      test(`${name}, compression ${compression}: a search finds every record, with its time, tag, source, bytes and fields`, async () => {
        const { s, url, user, token } = await listening()
        const exporter = new Exporter({ url, headers: { Authorization: `Bearer ${token}` }, compression: compression as never })
        const { provider, resource } = providerOf(exporter, { 'service.name': 'checkout svc/1', 'deployment.environment': 'test' })
        const logger = provider.getLogger('quarry.test', '1.2.3')
        const emitted = records(40)
        for (const r of emitted) logger.emit(r)
        await provider.forceFlush()
        await provider.shutdown()

        // the tag: service.name made a valid tag (blank and slash become '_')
        const found = await search(s, user.jwt, 'tag=checkout_svc_1')
        expect(found.length).toBe(emitted.length)
        expect(await entryCount(s)).toBe(emitted.length)
        const byLine = found.map((f) => ({ ...f, doc: JSON.parse(Buffer.from(f.Data, 'base64').toString()) }))
        const attrs = resource.attributes as Record<string, unknown>
        for (const [i, r] of emitted.entries()) {
          const f = byLine[i]!
          expect(new Date(f.TS).getTime()).toBe(r.timestamp)
          expect(f.Tag).toBe('checkout_svc_1')
          expect(f.SRC).toBe('127.0.0.1')
          expect(f.doc).toEqual(expectedDocument(r, attrs, 'quarry.test', '1.2.3'))
        }
        // bytes: the data stored are the documents' bytes, as /metrics counts them for the protocol
        const bytes = byLine.reduce((n, f) => n + Buffer.from(f.Data, 'base64').byteLength, 0)
        const metrics = (await s.call('GET', '/metrics')).text
        expect(metrics).toContain(`quarry_ingest_entries_total{listener="http",protocol="otlp"} ${emitted.length}`)
        expect(metrics).toContain(`quarry_ingest_bytes_total{listener="http",protocol="otlp"} ${bytes}`)

        // the json module reads the fields
        const read = await search(s, user.jwt, 'tag=checkout_svc_1 json severityText == ERROR attributes."http.status" as status resource."service.name" as svc traceId')
        const errors = emitted.map((r, i) => ({ r, i })).filter(({ r }) => r.severityText === 'ERROR')
        expect(read.map((f) => f.Enumerated)).toEqual(
          errors.map(({ r }) => [
            { Name: 'severityText', ValueStr: 'ERROR' },
            { Name: 'status', ValueStr: String(r.attributes['http.status']) },
            { Name: 'svc', ValueStr: 'checkout svc/1' },
            ...(r.context ? [{ Name: 'traceId', ValueStr: TRACE_ID }] : []),
          ]),
        )
      }, 30_000)

  test('the tag attribute and the default tag are configured; a record without a time gets its observed time, then the time of receipt', async () => {
    const { s, url, user, token } = await listening({ otlpTagAttribute: 'team', otlpDefaultTag: 'nameless' })
    const exporter = new ProtoExporter({ url, headers: { Authorization: `Bearer ${token}` } })
    const { provider } = providerOf(exporter, { 'service.name': 'ignored', team: 'payments' })
    provider.getLogger('a').emit({ body: 'with team', timestamp: T0 })
    await provider.forceFlush()
    await provider.shutdown()
    expect((await search(s, user.jwt, 'tag=payments')).map((f) => Buffer.from(f.Data, 'base64').toString())).toEqual([expect.stringContaining('"with team"')])
    // Without the attribute: the default tag. Times by hand (the SDK always stamps both).
    const json = (record: Record<string, unknown>) => ({ resourceLogs: [{ resource: { attributes: [] }, scopeLogs: [{ logRecords: [record] }] }] })
    const send = (record: Record<string, unknown>) => fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(json(record)) })
    expect((await send({ observedTimeUnixNano: String(BigInt(T0 + 5) * 1_000_000n + 999_999n), body: { stringValue: 'observed' } })).status).toBe(200)
    const before = s.clock.now()
    expect((await send({ timeUnixNano: '0', body: { stringValue: 'received' } })).status).toBe(200)
    const found = await search(s, user.jwt, 'tag=nameless')
    expect(found.map((f) => [Buffer.from(f.Data, 'base64').toString(), new Date(f.TS).getTime()])).toEqual([
      ['{"body":"observed"}', T0 + 5],
      ['{"body":"received"}', before],
    ])
  }, 30_000)
})

/** An ExportLogsServiceRequest of `n` records, as the SDK's own serializer writes it (protobuf). */
function protobufRequest(n: number, body = 'x'): Uint8Array {
  const resource = resourceFromAttributes({ 'service.name': 'bad' })
  const logs = Array.from({ length: n }, (_, i) => ({
    hrTime: [Math.floor(T0 / 1000) + i, 0],
    hrTimeObserved: [Math.floor(T0 / 1000) + i, 0],
    severityNumber: SeverityNumber.INFO,
    severityText: 'INFO',
    body,
    attributes: {},
    droppedAttributesCount: 0,
    resource,
    instrumentationScope: { name: 's' },
    spanContext: undefined,
  }))
  return ProtobufLogsSerializer.serializeRequest(logs as never)!
}

describe('OTLP refusals', () => {
  async function refusedUnchanged(s: TestServer, act: () => Promise<Response>) {
    const before = { store: storeSnapshot(s), blobs: blobFiles(s) }
    const res = await act()
    expect({ store: storeSnapshot(s), blobs: blobFiles(s) }).toEqual(before)
    return res
  }
  const post = (url: string, token: string, body: Uint8Array | string, headers: Record<string, string>) =>
    fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, ...headers }, body })

  test('undecodable bodies get 400 with a google.rpc.Status in the request\'s encoding, nothing stored; the server then takes good ones', async () => {
    const { s, url, user, token } = await listening()
    const good = protobufRequest(3)
    const cases: [string, Uint8Array | string, Record<string, string>][] = [
      ['garbage protobuf', new Uint8Array([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]), {}],
      ['truncated protobuf', good.subarray(0, good.byteLength - 5), {}],
      ['bad gzip', new Uint8Array([0x1f, 0x8b, 1, 2, 3]), { 'content-encoding': 'gzip' }],
    ]
    for (const [what, body, headers] of cases) {
      const res = await refusedUnchanged(s, () => post(url, token, body, { 'content-type': 'application/x-protobuf', ...headers }))
      expect({ what, status: res.status, type: res.headers.get('content-type') }).toEqual({ what, status: 400, type: 'application/x-protobuf' })
      const status = readStatus(new Uint8Array(await res.arrayBuffer()))
      expect(status.code).toBe(3)
      expect(status.message.length).toBeGreaterThan(10)
    }
    for (const body of ['{"resourceLogs": [', '[]', '{"resourceLogs": 5}']) {
      const res = await refusedUnchanged(s, () => post(url, token, body, { 'content-type': 'application/json' }))
      expect(res.status).toBe(400)
      const status = (await res.json()) as Record<string, unknown>
      expect(status).toEqual({ code: 3, message: expect.any(String), Error: status.message })
    }
    // a wrong type: 415, nothing read as OTLP
    const wrong = await refusedUnchanged(s, () => post(url, token, good, { 'content-type': 'text/plain' }))
    expect(wrong.status).toBe(415)
    expect(((await wrong.json()) as { Error: string }).Error).toContain('application/x-protobuf')
    expect(await entryCount(s)).toBe(0)
    const ok = await post(url, token, good, { 'content-type': 'application/x-protobuf' })
    expect(ok.status).toBe(200)
    expect(readExportResponse(new Uint8Array(await ok.arrayBuffer()))).toEqual({})
    expect((await search(s, user.jwt, 'tag=bad')).length).toBe(3)
  })

  test('a partly bad JSON request stores the good records and answers partialSuccess with the count and the reason', async () => {
    const { s, url, user, token } = await listening()
    const record = (extra: Record<string, unknown>) => ({ timeUnixNano: String(BigInt(T0) * 1_000_000n), body: { stringValue: 'ok' }, ...extra })
    const body = {
      resourceLogs: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'partly' } }] },
          scopeLogs: [{ logRecords: [record({}), record({ traceId: 'abc' }), record({ timeUnixNano: 'soon' }), record({ body: { intValue: '9007199254740993' } })] }],
        },
      ],
    }
    const res = await post(url, token, JSON.stringify(body), { 'content-type': 'application/json' })
    expect(res.status).toBe(200)
    const answer = (await res.json()) as { partialSuccess: { rejectedLogRecords: string; errorMessage: string } }
    expect(answer.partialSuccess.rejectedLogRecords).toBe('2')
    expect(answer.partialSuccess.errorMessage).toContain('traceId')
    expect(answer.partialSuccess.errorMessage).toContain('timeUnixNano')
    // int64 past 2^53 is kept exact, as its decimal text
    expect((await search(s, user.jwt, 'tag=partly')).map((f) => Buffer.from(f.Data, 'base64').toString())).toEqual([
      '{"body":"ok","resource":{"service.name":"partly"}}',
      '{"body":"9007199254740993","resource":{"service.name":"partly"}}',
    ])
    const metrics = (await s.call('GET', '/metrics')).text
    expect(metrics).toContain('quarry_ingest_refusals_total{listener="http",protocol="otlp",reason="invalid"} 2')
  })

  test('a gzip bomb, too many records, a body over the limit: 413 with the variable named, nothing stored', async () => {
    const { s, url, token } = await listening({ ingestMaxDecompressedBytes: 1 << 20, ingestMaxRecords: 100, maxBodyBytes: 256 << 10 })
    const bomb = gzipSync(Buffer.alloc(64 << 20))
    expect(bomb.byteLength).toBeLessThan(256 << 10)
    const cases: [string, Uint8Array, Record<string, string>][] = [
      ['QUARRY_INGEST_MAX_DECOMPRESSED', bomb, { 'content-encoding': 'gzip' }],
      ['QUARRY_INGEST_MAX_RECORDS', protobufRequest(101), {}],
      ['QUARRY_INGEST_MAX_RECORDS', protobufRequest(101, ''), { 'content-encoding': 'gzip' }],
    ]
    for (const [variable, body, headers] of cases) {
      const sent = headers['content-encoding'] && body !== bomb ? gzipSync(body) : body
      const res = await refusedUnchanged(s, () => post(url, token, sent, { 'content-type': 'application/x-protobuf', ...headers }))
      expect(res.status).toBe(413)
      expect(readStatus(new Uint8Array(await res.arrayBuffer())).message).toContain(variable)
    }
    const big = await refusedUnchanged(s, () => post(url, token, new Uint8Array(300 << 10), { 'content-type': 'application/x-protobuf' }))
    expect(big.status).toBe(413)
    expect((await post(url, token, protobufRequest(100), { 'content-type': 'application/x-protobuf' })).status).toBe(200)
    expect(await entryCount(s)).toBe(100)
  })

  test('a token without Ingest (403), no credential (401), a locked owner (401): nothing stored', async () => {
    const { s, url, user } = await listening()
    const reader = await tokenOf(s, user.jwt, ['Search'])
    const body = protobufRequest(2)
    const type = { 'content-type': 'application/x-protobuf' }
    expect((await refusedUnchanged(s, () => post(url, reader, body, type))).status).toBe(403)
    expect((await refusedUnchanged(s, () => fetch(url, { method: 'POST', headers: type, body }))).status).toBe(401)
    const other = await s.createUser()
    const ingestToken = await tokenOf(s, other.jwt, ['Ingest'])
    expect((await s.call('PUT', `/api/users/${other.uid}/lock`, { jwt: s.adminJwt })).status).toBe(200)
    const locked = await refusedUnchanged(s, () => post(url, ingestToken, body, type))
    expect(locked.status).toBe(401)
    expect(await entryCount(s)).toBe(0)
  })

  test('past the ingest rate: 429 with Retry-After and a google.rpc.Status naming QUARRY_INGEST_RATE', async () => {
    const { s, url, token } = await listening({ ingestRateBytes: 1024 })
    expect((await post(url, token, protobufRequest(50, 'x'.repeat(100)), { 'content-type': 'application/x-protobuf' })).status).toBe(200)
    const res = await refusedUnchanged(s, () => post(url, token, protobufRequest(1), { 'content-type': 'application/x-protobuf' }))
    expect(res.status).toBe(429)
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(readStatus(new Uint8Array(await res.arrayBuffer())).message).toContain('QUARRY_INGEST_RATE')
  })
})

describe('OTLP answers through the documented API (in-process)', () => {
  test('the JSON answers match the OpenAPI document', async () => {
    const s = await createTestServer()
    servers.push(s)
    const u = await s.createUser()
    const res = await s.call('POST', '/api/ingest/otlp/v1/logs', { jwt: u.jwt, json: { resourceLogs: [] } })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({})
    expectError(await s.call('POST', '/api/ingest/otlp/v1/logs', { jwt: u.jwt, body: 'x', headers: { 'content-type': 'text/plain' } }), 415)
    const bad = await s.call('POST', '/api/ingest/otlp/v1/logs', { jwt: u.jwt, body: '{', headers: { 'content-type': 'application/json' } })
    expect(bad.status).toBe(400)
    const pb = await s.call('POST', '/api/ingest/otlp/v1/logs', { jwt: u.jwt, body: protobufRequest(1), headers: { 'content-type': 'application/x-protobuf' } })
    expect(pb.status).toBe(200)
  })
})

describe('64-bit values, exactly', () => {
  const opts = { tagAttribute: 'service.name', defaultTag: 'otlp', maxRecords: 10 }
  /** A one-record request, protobuf-encoded by protobufjs from its JSON-like form (64-bit values as decimal text). */
  const request = (record: Record<string, unknown>) => {
    const { ExportLogsServiceRequest } = protobufMessages()
    return ExportLogsServiceRequest.encode(ExportLogsServiceRequest.fromObject({ resourceLogs: [{ scopeLogs: [{ logRecords: [record] }] }] })).finish()
  }
  const decoded = (record: Record<string, unknown>) => decodeOtlpLogs(request(record), 'protobuf', opts, 42).entries[0]!

  test('any nanosecond time up to 2^64 becomes its millisecond, rounded down, in protobuf and in JSON', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 2n ** 64n - 1n }), (ns) => {
        const ms = Number(ns / 1_000_000n) || 42
        expect(decoded({ timeUnixNano: ns.toString() }).ts).toBe(ms)
        const json = JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ timeUnixNano: ns.toString() }] }] }] })
        expect(decodeOtlpLogs(Buffer.from(json), 'json', opts, 42).entries[0]!.ts).toBe(ms)
      }),
      { numRuns: 500 },
    )
  })

  test('any int64 value is kept exact, in protobuf and in JSON: a number from -2^53 to below 2^53, its decimal text past it', () => {
    fc.assert(
      fc.property(fc.oneof(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.constantFrom(2n ** 53n, 2n ** 53n - 1n, -(2n ** 53n), -(2n ** 53n) - 1n, 2n ** 63n - 1n, -(2n ** 63n), 0n)), (v) => {
        const exact = v >= -(2n ** 53n) && v < 2n ** 53n
        const body = JSON.parse(Buffer.from(decoded({ body: { intValue: v.toString() } }).data).toString()).body
        expect(body).toEqual(exact ? Number(v) : v.toString())
        const json = JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: { intValue: v.toString() } }] }] }] })
        expect(JSON.parse(Buffer.from(decodeOtlpLogs(Buffer.from(json), 'json', opts, 42).entries[0]!.data).toString()).body).toEqual(exact ? Number(v) : v.toString())
      }),
      { numRuns: 500 },
    )
  })
})
