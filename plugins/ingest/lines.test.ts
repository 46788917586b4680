// POST /api/ingest/lines through the real app: multipart forms as the platform's clients build them, each line's
// time read from the line, and every refusal leaving the store as it was.
import { afterEach, describe, expect, test } from 'bun:test'
import type { Config } from '../../server/runtime/config'
import { type CallResult, type TestServer, createTestServer, expectError, storeSnapshot } from '../../test/helpers'

const servers: TestServer[] = []
afterEach(() => {
  for (const s of servers.splice(0)) s.close()
})

async function server(config: Partial<Config> = {}) {
  const s = await createTestServer(config)
  servers.push(s)
  return s
}

type Part = [name: string, value: string | Uint8Array, filename?: string]

/** A multipart body encoded by the runtime's own FormData (as fetch sends it), parts in the order given. */
async function multipart(parts: Part[]): Promise<{ body: Uint8Array; type: string }> {
  const form = new FormData()
  for (const [name, value, filename] of parts) {
    if (filename !== undefined || value instanceof Uint8Array) form.append(name, new Blob([value]), filename ?? 'line-delimited-file')
    else form.append(name, value)
  }
  const res = new Response(form)
  // (the type first: Bun's Response forgets it once the body is read)
  const type = res.headers.get('content-type')!
  return { body: new Uint8Array(await res.arrayBuffer()), type }
}

async function postLines(s: TestServer, auth: Record<string, string>, parts: Part[]): Promise<CallResult> {
  const { body, type } = await multipart(parts)
  return s.call('POST', '/api/ingest/lines', { body, headers: { ...auth, 'content-type': type } })
}

const bearer = (jwt: string) => ({ authorization: `Bearer ${jwt}` })

interface Row {
  ts: number
  tag: string
  src: string
  data: string
}

async function stored(s: TestServer): Promise<Row[]> {
  const rows = await s.rows('SELECT e.ts AS ts, t.name AS tag, e.src AS src, e.data AS data FROM entries e JOIN ingest_tags t ON t.id = e.tag_id ORDER BY e.id')
  return rows.map((r) => ({ ts: Number(r.ts), tag: String(r.tag), src: String(r.src), data: Buffer.from(r.data as Uint8Array).toString('utf8') }))
}

/** A refusal with `status` whose message names `words`, and nothing changed in the store. */
async function refusedUnchanged(s: TestServer, status: number, words: string[], act: () => Promise<CallResult>, extra: Record<string, unknown> = {}) {
  const before = storeSnapshot(s)
  const res = await act()
  expectError(res, status, extra)
  for (const w of words) expect(res.body.Error).toContain(w)
  expect(storeSnapshot(s)).toEqual(before)
  return res
}

const at = (iso: string) => Date.parse(iso)

const NGINX = '203.0.113.9 - - [27/Nov/2026:10:15:32 +0100] "GET /index.html HTTP/1.1" 200 612 "-" "curl/8.5.0"'
const SYSLOG = 'Nov 27 08:00:01 web01 CRON[99]: (root) CMD (run-parts /etc/cron.hourly)'
const DPKG = '2026-11-26 23:59:59 status installed libc6:amd64 2.36-9+deb12u4'
const PLAIN = 'a line without any time in it'
const JSON_LINE = '{"level":"warn","time":"2026-11-25T01:02:03.456Z","msg":"héllo 赤ちゃん"}'

describe('POST /api/ingest/lines', () => {
  test('each non-empty line (LF or CRLF) is one entry, its time read from the line, else the time of receipt', async () => {
    const s = await server()
    const u = await s.createUser()
    s.clock.advance(at('2026-11-27T12:00:00Z') - s.clock.now())
    const receipt = s.clock.now()
    const file = `${NGINX}\r\n${SYSLOG}\n\n${DPKG}\r\n\r\n${PLAIN}\n${JSON_LINE}` // no final newline
    const res = await postLines(s, bearer(u.jwt), [['tag', 'web'], ['source', '192.0.2.7'], ['file', file, 'access.log']])
    expect(res.status).toBe(200)
    const lines = [NGINX, SYSLOG, DPKG, PLAIN, JSON_LINE]
    expect(res.body).toEqual({ Count: 5, Size: lines.reduce((n, l) => n + Buffer.byteLength(l), 0), Tags: ['web'] })
    expect(await stored(s)).toEqual([
      { ts: at('2026-11-27T09:15:32Z'), tag: 'web', src: '192.0.2.7', data: NGINX },
      { ts: at('2026-11-27T08:00:01Z'), tag: 'web', src: '192.0.2.7', data: SYSLOG },
      { ts: at('2026-11-26T23:59:59Z'), tag: 'web', src: '192.0.2.7', data: DPKG },
      { ts: receipt, tag: 'web', src: '192.0.2.7', data: PLAIN },
      { ts: at('2026-11-25T01:02:03.456Z'), tag: 'web', src: '192.0.2.7', data: JSON_LINE },
    ])
  })

  test('fields after the file part (the Node client\'s order), an API token as a shipper sends it', async () => {
    const s = await server()
    const u = await s.createUser()
    const token = (await s.call('POST', '/api/tokens', { jwt: u.jwt, json: { name: 'lines', capabilities: ['Ingest'] } })).body.token as string
    const receipt = s.clock.now()
    const basic = `Basic ${Buffer.from(`quarry:${token}`).toString('base64')}`
    const res = await postLines(s, { authorization: basic }, [['file', `${NGINX}\n${DPKG}\n`, 'doesnt-matter.txt'], ['tag', 'custom-test'], ['noparsetimestamp', 'true']])
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ Count: 2, Size: Buffer.byteLength(NGINX) + Buffer.byteLength(DPKG), Tags: ['custom-test'] })
    expect((await stored(s)).map((r) => [r.ts, r.tag, r.src])).toEqual([
      [receipt, 'custom-test', ''],
      [receipt, 'custom-test', ''],
    ])
  })

  test('a form-data body without its Content-Type (the Node client under Bun\'s fetch) is read by its boundary line', async () => {
    const s = await server()
    const u = await s.createUser()
    // the npm form-data package, as the TypeScript client's Node build encodes the form
    const FormDataPackage = require('form-data') as new () => { append(name: string, value: string, opts?: { filename: string }): void; getBuffer(): Buffer }
    const fd = new FormDataPackage()
    fd.append('tag', 'custom-test')
    fd.append('file', 'This is\na file\nwith three lines\n', { filename: 'doesnt-matter.txt' })
    const res = await s.call('POST', '/api/ingest/lines', { jwt: u.jwt, body: new Uint8Array(fd.getBuffer()) })
    expect(res.body).toEqual({ Count: 3, Size: 29, Tags: ['custom-test'] })
    expect((await stored(s)).map((r) => r.data)).toEqual(['This is', 'a file', 'with three lines'])
    // without a boundary line it is no form
    await refusedUnchanged(s, 400, ['multipart'], () => s.call('POST', '/api/ingest/lines', { jwt: u.jwt, body: 'just\nlines\n' }))
  })

  test('zones: QUARRY_TIMESTAMP_ZONE for times without one; assumelocaltimezone reads every time in it; timezone and timestampformat fields', async () => {
    const s = await server({ timestampZone: 'America/New_York' })
    const u = await s.createUser()
    const file = `${DPKG}\n${NGINX}\n`
    expect((await postLines(s, bearer(u.jwt), [['tag', 'a'], ['file', file]])).status).toBe(200)
    expect((await postLines(s, bearer(u.jwt), [['tag', 'b'], ['assumelocaltimezone', 'true'], ['file', file]])).status).toBe(200)
    expect((await postLines(s, bearer(u.jwt), [['tag', 'c'], ['timezone', '+05:30'], ['file', file]])).status).toBe(200)
    const receipt = s.clock.now()
    expect((await postLines(s, bearer(u.jwt), [['tag', 'd'], ['timestampformat', 'DPKG'], ['file', file]])).status).toBe(200)
    expect((await stored(s)).map((r) => [r.tag, new Date(r.ts).toISOString()])).toEqual([
      ['a', '2026-11-27T04:59:59.000Z'], // New York is UTC-5 in November
      ['a', '2026-11-27T09:15:32.000Z'],
      ['b', '2026-11-27T04:59:59.000Z'],
      ['b', '2026-11-27T15:15:32.000Z'], // +0100 ignored: 10:15:32 in New York
      ['c', '2026-11-26T18:29:59.000Z'],
      ['c', '2026-11-27T09:15:32.000Z'],
      ['d', '2026-11-27T04:59:59.000Z'],
      ['d', new Date(receipt).toISOString()], // the nginx line holds no DPKG time
    ])
  })

  test('a line over QUARRY_INGEST_MAX_LINE refuses the request, naming the line, even when it arrives in pieces; nothing is stored', async () => {
    const s = await server({ ingestMaxLineBytes: 1000 })
    const u = await s.createUser()
    const long = 'x'.repeat(300_000) // several body chunks
    const res = await refusedUnchanged(s, 400, ['line 3', 'QUARRY_INGEST_MAX_LINE'], () =>
      postLines(s, bearer(u.jwt), [['tag', 'web'], ['file', `${NGINX}\n\n${long}\n${DPKG}\n`]]),
    )
    expect(res.body.Error).toContain('1000')
    // exactly the bound is taken, with its CR
    const exact = 'y'.repeat(1000)
    expect((await postLines(s, bearer(u.jwt), [['tag', 'web'], ['file', `${exact}\r\n${exact}`]])).body).toEqual({ Count: 2, Size: 2000, Tags: ['web'] })
    await refusedUnchanged(s, 400, ['line 1'], () => postLines(s, bearer(u.jwt), [['tag', 'web'], ['file', `${exact}z\r\n`]]))
    const text = (await s.call('GET', '/metrics')).text
    expect(text).toContain('quarry_ingest_entries_total{listener="http",protocol="lines"} 2')
    expect(text).toContain('quarry_ingest_refusals_total{listener="http",protocol="lines",reason="too-large"} 2')
  })

  test('a body over QUARRY_MAX_BODY_SIZE is 413, declared or streamed; nothing is stored', async () => {
    const s = await server({ maxBodyBytes: 64 * 1024 })
    const u = await s.createUser()
    const big = `${NGINX}\n`.repeat(2000) // ~200 KiB, past the limit and its multipart allowance
    await refusedUnchanged(s, 413, ['65536'], () => postLines(s, bearer(u.jwt), [['tag', 'web'], ['file', big]]))
    // without a Content-Length: counted while it streams
    const { body, type } = await multipart([['tag', 'web'], ['file', big]])
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < body.byteLength; i += 16_384) c.enqueue(body.slice(i, i + 16_384))
        c.close()
      },
    })
    const before = storeSnapshot(s)
    const res = await s.handle(new Request('http://localhost/api/ingest/lines', { method: 'POST', body: stream, headers: { ...bearer(u.jwt), 'content-type': type } }))
    expectError(res, 413)
    expect(storeSnapshot(s)).toEqual(before)
    expect((await postLines(s, bearer(u.jwt), [['tag', 'web'], ['file', `${NGINX}\n`.repeat(100)]])).body.Count).toBe(100)
  })

  test('bad fields and forms are refused with 400 naming the problem; nothing is stored', async () => {
    const s = await server()
    const u = await s.createUser()
    const file: Part = ['file', `${NGINX}\n`]
    const cases: [Part[], string][] = [
      [[file], 'tag'],
      [[['tag', 'bad tag!'], file], 'tag'],
      [[['tag', 'web'], ['source', 'not-an-ip'], file], 'source'],
      [[['tag', 'web'], ['type', 'reimport'], file], 'reimport'],
      [[['tag', 'web'], ['noparsetimestamp', 'maybe'], file], 'noparsetimestamp'],
      [[['tag', 'web'], ['assumelocaltimezone', 'yes'], file], 'assumelocaltimezone'],
      [[['tag', 'web'], ['timezone', 'Mars/Olympus'], file], 'Mars/Olympus'],
      [[['tag', 'web'], ['timestampformat', 'Stardate'], file], 'Stardate'],
      [[['tag', 'web']], 'file'],
    ]
    for (const [parts, word] of cases) await refusedUnchanged(s, 400, [word], () => postLines(s, bearer(u.jwt), parts))
    await refusedUnchanged(s, 400, ['multipart'], () => s.call('POST', '/api/ingest/lines', { jwt: u.jwt, json: [{ Tag: 'web', Data: '' }] }))
    // a body that breaks off mid-form
    const { body, type } = await multipart([['tag', 'web'], file])
    await refusedUnchanged(s, 400, [], () => s.call('POST', '/api/ingest/lines', { body: body.subarray(0, body.byteLength - 20), headers: { ...bearer(u.jwt), 'content-type': type } }))
    const text = (await s.call('GET', '/metrics')).text
    expect(text).toContain('quarry_ingest_refusals_total{listener="http",protocol="lines",reason="invalid"} 11')
  })

  test('no credentials is 401 and a token without Ingest 403, before the body is read; an empty file stores nothing', async () => {
    const s = await server()
    const u = await s.createUser()
    const reader = (await s.call('POST', '/api/tokens', { jwt: u.jwt, json: { name: 'r', capabilities: ['AttachSearch'] } })).body.token as string
    await refusedUnchanged(s, 401, [], () => postLines(s, {}, [['tag', 'web'], ['file', `${NGINX}\n`]]))
    await refusedUnchanged(s, 403, [], () => postLines(s, { authorization: `Bearer ${reader}` }, [['tag', 'web'], ['file', `${NGINX}\n`]]), { Cap: 'Ingest' })
    expect((await postLines(s, bearer(u.jwt), [['tag', 'web'], ['file', '\n\r\n\n']])).body).toEqual({ Count: 0, Size: 0, Tags: [] })
    expect(await stored(s)).toEqual([])
  })

  test('the sink\'s bounds apply: past the user\'s quota the whole file is refused (413)', async () => {
    const s = await server({ userQuotaBytes: 4096 })
    const u = await s.createUser()
    const file = `${NGINX}\n`.repeat(60) // 60 entries of ~100 bytes plus 16 + tag each: past 4 KiB
    await refusedUnchanged(s, 413, ['QUARRY_USER_QUOTA'], () => postLines(s, bearer(u.jwt), [['tag', 'web'], ['file', file]]))
    expect((await postLines(s, bearer(u.jwt), [['tag', 'web'], ['file', `${NGINX}\n`.repeat(10)]])).body.Count).toBe(10)
  })
})
