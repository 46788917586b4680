import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { blobFiles, createTestServer, expectError, type TestServer } from '../../test/helpers'

/** One sample of the text format: its metric name, labels and value. */
interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

/**
 * A strict parser of the Prometheus text exposition format 0.0.4: every line is a HELP, a TYPE or a sample; every
 * sample belongs to a family declared by TYPE before it (histogram samples by their _bucket/_sum/_count suffixes);
 * label values are escaped as the format says; no series appears twice; histogram buckets are cumulative and end
 * in le="+Inf" equal to _count. Throws on the first violation, naming the line.
 */
function parseExposition(text: string): { types: Map<string, string>; samples: Sample[] } {
  const types = new Map<string, string>()
  const samples: Sample[] = []
  const seen = new Set<string>()
  const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*'
  const sampleLine = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)(?: (-?\\d+))?$`)
  expect(text.endsWith('\n')).toBe(true)
  for (const [i, line] of text.split('\n').entries()) {
    const fail = (why: string) => {
      throw new Error(`line ${i + 1}: ${why}: ${line}`)
    }
    if (line === '') continue
    let m
    if ((m = new RegExp(`^# HELP (${NAME}) (.*)$`).exec(line))) continue
    if ((m = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`).exec(line))) {
      if (types.has(m[1]!)) fail('family typed twice')
      types.set(m[1]!, m[2]!)
      continue
    }
    if (line.startsWith('#')) fail('unknown comment')
    m = sampleLine.exec(line)
    if (!m) fail('not a sample')
    const [, name, rawLabels, rawValue] = m!
    const family = [name!, name!.replace(/_(bucket|sum|count)$/, '')].find((f) => types.has(f))
    if (!family) fail('sample of an undeclared family')
    if (family !== name && !['histogram', 'summary'].includes(types.get(family!)!)) fail('suffix on a non-histogram')
    const labels: Record<string, string> = {}
    if (rawLabels !== undefined && rawLabels !== '') {
      const label = new RegExp(`^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\\\\n]|\\\\[\\\\"n])*)"(,|$)`)
      let rest = rawLabels
      while (rest !== '') {
        const l = label.exec(rest)
        if (!l) fail('malformed label')
        if (l![1]! in labels) fail('label twice')
        labels[l![1]!] = l![2]!.replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c))
        rest = rest.slice(l![0].length)
      }
    }
    if (!/^([-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?|[-+]?inf|nan)$/i.test(rawValue!)) fail('malformed value')
    // Prometheus reads values with Go's strconv.ParseFloat: NaN and Inf in any letter case (prom-client writes Nan)
    const v = rawValue!.toLowerCase()
    const value = v === '+inf' || v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v === 'nan' ? NaN : Number(rawValue)
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`
    if (seen.has(key)) fail('series twice')
    seen.add(key)
    samples.push({ name: name!, labels, value })
  }
  // histograms: cumulative buckets ending in +Inf = _count
  for (const [family, type] of types) {
    if (type !== 'histogram') continue
    const series = new Map<string, Sample[]>()
    for (const s of samples.filter((s) => s.name === `${family}_bucket`)) {
      const { le, ...rest } = s.labels
      const k = JSON.stringify(Object.entries(rest).sort())
      series.set(k, [...(series.get(k) ?? []), s])
    }
    for (const [k, buckets] of series) {
      for (let j = 1; j < buckets.length; j++) expect(buckets[j]!.value).toBeGreaterThanOrEqual(buckets[j - 1]!.value)
      expect(buckets.at(-1)!.labels.le).toBe('+Inf')
      const count = samples.find((s) => s.name === `${family}_count` && JSON.stringify(Object.entries(s.labels).sort()) === k)
      expect(count?.value).toBe(buckets.at(-1)!.value)
    }
  }
  return { types, samples }
}

const value = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0)

const afterResponses = () => new Promise((r) => setTimeout(r, 5)) // the request hooks run after the answer is sent

async function scrape(s: TestServer, headers: Record<string, string> = {}) {
  await afterResponses()
  const res = await s.call('GET', '/metrics', { headers })
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toContain('text/plain; version=0.0.4')
  return parseExposition(res.text)
}

describe('GET /metrics without QUARRY_METRICS_TOKEN', () => {
  let s: TestServer
  beforeAll(async () => {
    s = await createTestServer()
  })
  afterAll(() => s.close())

  test('is public, parses strictly, and has every family the operator needs', async () => {
    const { types, samples } = await scrape(s)
    for (const [name, type] of [
      ['quarry_http_requests_total', 'counter'],
      ['quarry_http_request_duration_seconds', 'histogram'],
      ['quarry_http_requests_in_flight', 'gauge'],
      ['quarry_sessions_live', 'gauge'],
      ['quarry_searches', 'gauge'],
      ['quarry_blob_bytes_total', 'counter'],
      ['quarry_blob_errors_total', 'counter'],
      ['quarry_store_query_duration_seconds', 'histogram'],
      ['nodejs_eventloop_lag_seconds', 'gauge'],
      ['process_resident_memory_bytes', 'gauge'],
      ['process_cpu_seconds_total', 'counter'],
    ])
      expect([name, types.get(name!)]).toEqual([name, type])
    expect(value(samples, 'process_resident_memory_bytes')).toBeGreaterThan(0)
    // the helper logged the admin in: one live session
    expect(value(samples, 'quarry_sessions_live')).toBeGreaterThanOrEqual(1)
  })

  test('counters move: requests by route template (never the raw path), method and status; sessions; blob bytes', async () => {
    const before = (await scrape(s)).samples
    const user = await s.createUser()
    for (let i = 0; i < 3; i++) expect((await s.call('GET', `/api/users/${user.uid}`, { jwt: s.adminJwt })).status).toBe(200)
    expect((await s.call('GET', '/api/users/987654', { jwt: s.adminJwt })).status).toBe(404)
    expect((await s.call('GET', '/no/such/route/12345')).status).toBe(404)
    const boundary = 'metrics-test-boundary'
    const put = await s.call('POST', '/api/files', {
      jwt: user.jwt,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: `--${boundary}\r\nContent-Disposition: form-data; name="meta"\r\n\r\n{"Name":"m"}\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\n${'x'.repeat(1000)}\r\n--${boundary}--\r\n`,
    })
    expect(put.status).toBe(200)
    const { samples } = await scrape(s)
    const delta = (name: string, labels: Record<string, string> = {}) => value(samples, name, labels) - value(before, name, labels)
    expect(delta('quarry_http_requests_total', { method: 'GET', route: '/api/users/:id', status: '200' })).toBe(3)
    expect(delta('quarry_http_requests_total', { method: 'GET', route: '/api/users/:id', status: '404' })).toBe(1)
    expect(delta('quarry_http_requests_total', { route: 'unmatched', status: '404' })).toBe(1)
    expect(delta('quarry_http_request_duration_seconds_count', { method: 'GET', route: '/api/users/:id' })).toBe(4)
    // no label value is a raw path with an id in it
    const routes = new Set(samples.filter((x) => x.name === 'quarry_http_requests_total').map((x) => x.labels.route))
    for (const r of routes) expect(r!).not.toMatch(/\d{3,}/)
    // the new user's login is one more live session
    expect(delta('quarry_sessions_live')).toBe(1)
    expect(delta('quarry_store_query_duration_seconds_count')).toBeGreaterThan(0)
    expect(delta('quarry_blob_bytes_total', { direction: 'in' })).toBe(1000)
    expect(delta('quarry_http_requests_total', { method: 'POST', route: '/api/files', status: '200' })).toBe(1)
    // nothing is in flight between requests but the scrape itself
    expect(value(samples, 'quarry_http_requests_in_flight')).toBe(1)
  })

  test('a segment written from ingested entries counts its blob\'s bytes in', async () => {
    // the tag first (a batch naming a tag the store does not know yet goes through the rows, which make it)
    expect((await s.call('POST', '/api/ingest/json', { jwt: s.adminJwt, json: [{ Tag: 'metrics-sealed', Data: 'eA==' }] })).status).toBe(200)
    await s.entries.compact({ all: true })
    const before = (await scrape(s)).samples
    const files = new Set(blobFiles(s))
    // 200 kB of data: on SQLite past SEALED_INGEST_BYTES, so the batch is written as a segment at once; on PostgreSQL
    // as rows, which the compaction seals. Either way through putBytes.
    const entries = Array.from({ length: 200 }, (_, i) => ({ TS: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), Tag: 'metrics-sealed', Data: Buffer.from(`${i} ${'z'.repeat(1000)}`).toString('base64') }))
    expect((await s.call('POST', '/api/ingest/json', { jwt: s.adminJwt, json: entries })).status).toBe(200)
    const appeared = () => blobFiles(s).filter((f) => !files.has(f) && f.includes('segments'))
    if (appeared().length === 0) await s.entries.compact({ all: true }) // rows (PostgreSQL): sealed now
    const written = appeared()
    expect(written.length).toBeGreaterThan(0)
    const { samples } = await scrape(s)
    const sizes = written.reduce((n, f) => n + statSync(join(s.dir, 'blobs', f)).size, 0)
    expect(value(samples, 'quarry_blob_bytes_total', { direction: 'in' }) - value(before, 'quarry_blob_bytes_total', { direction: 'in' })).toBe(sizes)
  })
})

test('searches by state: launched, backgrounded, saved, and gone once deleted', async () => {
  const s = await createTestServer()
  try {
    const launch = async () => {
      const res = await s.call('POST', '/api/searchctrl/launch', { jwt: s.adminJwt, json: { SearchString: 'tag=web' } })
      expect(res.status).toBe(200)
      return res.body.SearchID as string
    }
    const [a, b, c] = [await launch(), await launch(), await launch()]
    await s.searches.settled()
    expect((await s.call('PATCH', `/api/searchctrl/${b}/background`, { jwt: s.adminJwt })).status).toBe(200)
    expect((await s.call('PATCH', `/api/searchctrl/${c}/save`, { jwt: s.adminJwt })).status).toBe(200)
    await s.searches.settled()
    const states = (samples: Sample[]) =>
      Object.fromEntries(samples.filter((x) => x.name === 'quarry_searches' && x.value > 0).map((x) => [`${x.labels.state}/${x.labels.running}`, x.value]))
    const before = states((await scrape(s)).samples)
    expect(Object.values(before).reduce((n, v) => n + v, 0)).toBe(3)
    // a saved search is `saving` until its results are moved to the blob store while a client is attached
    const { 'saved/false': saved = 0, 'saving/false': saving = 0, ...rest } = before
    expect(saved + saving).toBe(1)
    expect(rest).toEqual({ 'active/false': 1, 'backgrounded/false': 1 })
    expect((await s.call('DELETE', `/api/searchctrl/${a}`, { jwt: s.adminJwt })).status).toBe(200)
    await s.searches.settled()
    const after = states((await scrape(s)).samples)
    expect(after['backgrounded/false']).toBe(1)
    expect(after['active/false']).toBeUndefined()
  } finally {
    s.close()
  }
})

describe('GET /metrics with QUARRY_METRICS_TOKEN', () => {
  const token = 'metrics-token-0123456789'
  let s: TestServer
  beforeAll(async () => {
    s = await createTestServer({ metricsToken: token })
  })
  afterAll(() => s.close())

  test('answers only a Bearer with that token; 401 with an Error body otherwise, nothing exposed', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token-0123456789', `Bearer ${token}x`, `Basic ${btoa(`x:${token}`)}`, token, `Bearer ${s.adminJwt}`]) {
      const res = await s.call('GET', '/metrics', { headers: authorization ? { authorization } : {} })
      expectError(res, 401)
      expect(res.text).not.toContain('quarry_')
      expect(res.headers.get('www-authenticate')).toContain('Bearer')
    }
    const { samples } = await scrape(s, { authorization: `Bearer ${token}` })
    expect(value(samples, 'quarry_http_requests_total', { route: '/metrics', status: '401' })).toBe(6)
  })
})
