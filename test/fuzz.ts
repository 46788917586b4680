// Generated bad input (bench/README.md, "Robustness"): requests derived from the app's own route table and TypeBox
// schemas, sent through app.handle() as anonymous, a user, a token holder and an admin. Two kinds of case:
// - must-refuse: a body, path or query value that breaks the route's schema (a required field missing, a value of
//   the wrong type or out of range); it must get a 4xx;
// - junk: anything else odd (bad JSON, bad UTF-8, bad multipart, extra fields, huge strings and numbers, odd paths,
//   query strings, methods and credentials); it may succeed when it happens to be valid.
// Must-refuse also: a multipart body on a route that takes no upload (415), and a body over the route's limit, with
// its length declared or sent chunked (docs/security.md): such a body is made as it is read, and the server may read no
// more of it than the limit (plus the form framing of uploads), and nothing at all for an anonymous caller of a
// route that needs one.
// For every case: no 5xx, no thrown error or hang, a 4xx has the `{"Error": ...}` body, and a 4xx changed no row
// and no blob file. Used by test/fuzz.test.ts (short run) and test/fuzz-long.sh (long run), with a fixed seed.
import type { TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import fc from 'fast-check'
import { gzipSync } from 'node:zlib'
import { PUBLIC_BODY_LIMIT } from '../server/http/body'
import { CAPABILITY_NAMES, userHolds } from '../server/rules/permissions'
import { MULTIPART_OVERHEAD } from '../server/upload/multipart'
import { MAX_JSON_DEPTH } from '../server/http/json-shape'
import { ADMIN_PASSWORD, blobFiles, type CallResult, createTestServer, storeSnapshotAsync, type TestServer } from './helpers'
import { apiRoutes, type RouteInfo } from './routes'
import { frame, nonReadingClient } from './ws-client'

/** The shippers' protocol routes, which answer refusals in their protocol's shape rather than {"Error"}. */
const PROTOCOL_ROUTE = / \/api\/ingest\/(elastic|splunk)(\/|$)/

/** An Elasticsearch error answer: {"error": {"type", "reason"}, "status"}. */
function protocolShaped(body: any): boolean {
  return typeof body?.error?.type === 'string' && typeof body?.error?.reason === 'string' && typeof body?.status === 'number'
}

export type CallerKind = 'anonymous' | 'user' | 'token' | 'admin'
const CALLERS: CallerKind[] = ['anonymous', 'user', 'token', 'admin']

/** A path parameter: a real id of the fixture (index taken modulo the pool), or a string sent encoded or verbatim. */
type Param = { real: number } | { raw: string; verbatim?: boolean }

export interface FuzzCase {
  /** Which generator made it, for the report and the figures. */
  kind: string
  /** The key of the route it was derived from (`METHOD path`), for the coverage figures. */
  route: string
  mustRefuse: boolean
  caller: CallerKind
  method: string
  /** The route's path pattern, or any path for odd-path cases. */
  path: string
  params: Record<string, Param>
  /** Raw query string without `?`, or ''. */
  query: string
  headers: Record<string, string>
  /** The body; for a huge case, only its head. */
  body?: string | Uint8Array
  /**
   * A body of `bytes` bytes over the route's limit, made as the server reads it (the head `body`, then filler), with
   * its length in Content-Length when `declared`, else without one; the server may read at most `maxRead` bytes.
   */
  huge?: { bytes: number; declared: boolean; maxRead: number }
}

/** Every body limit of the fuzz server: the JSON limit and the upload limits alike, small so huge bodies stay cheap. */
export const FUZZ_LIMIT = 1024 * 1024
/** Bytes a huge body hands out per read. */
const HUGE_CHUNK = 64 * 1024

// ---------------------------------------------------------------------------------------------------------------
// Values

/**
 * Names that must never be stored as a user or group name (server/rules/names.ts): look-alikes of `admin` (another
 * script, fullwidth, another case, confusable letters) and names with control, format or invisible characters.
 */
const ADMIN_LOOKALIKES = ['\u0430dmin', 'Admin', 'ADMIN', '\uff41\uff44\uff4d\uff49\uff4e', 'adrnin', 'admIn', '\u0430\u0501m\u0456n', 'adm\u0456n']
const INVISIBLE_NAMES = ['adm\u0000in', 'admin\u200b', '\u202eadmin', 'ad\u200dmin', 'admin\u3164', 'admin\ufeff', 'adm\u2028in', 'admin\u0007', 'adm\u00adin', 'admin\ufe0f']
const HOSTILE_NAMES = [...ADMIN_LOOKALIKES, ...INVISIBLE_NAMES, 'jose\u0301', 'Jos\u00e9']

const hugeString = fc.integer({ min: 5_000, max: 300_000 }).map((n) => 'é'.repeat(n))
const oddString = fc.oneof(
  { weight: 4, arbitrary: fc.string() },
  { weight: 2, arbitrary: fc.string({ unit: 'binary' }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom('', ' ', '\u0000', '\ud800', '\uffff', '../../etc/passwd', "'; DROP TABLE users; --", '%00', '\u202e', 'null', 'true', '0', '-1', '1e999', 'NaN'),
  },
  { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_NAMES) },
  { weight: 1, arbitrary: hugeString },
)
const oddNumber = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -0, -1, 1.5, 2 ** 31, 2 ** 31 - 1, 2 ** 32, 2 ** 53 + 1, 1e308, -1e308, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER),
)
const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  oddString,
  oddNumber,
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 6 }),
  fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 6 }),
  fc.array(fc.integer({ min: -5, max: 2 ** 31 + 5 }), { maxLength: 2000 }),
)

/** Whether a schema node accepts the string as a path or query value, also after the number and boolean coercion Elysia applies. */
function acceptsString(node: TSchema, s: string): boolean {
  if (Value.Check(node, s as unknown)) return true
  if (s.trim() !== '' && !Number.isNaN(Number(s)) && Value.Check(node, Number(s))) return true
  return (s === 'true' || s === 'false') && Value.Check(node, s === 'true')
}

const VIOLATION_PROBES: unknown[] = [null, 0, -1, 1.5, 'x', '', [], {}, true, 'x'.repeat(70_000), 2 ** 40]
/** A node some value breaks (t.Any breaks on nothing, so a route taking any JSON has no must-refuse body). */
const violatable = (node: TSchema) => VIOLATION_PROBES.some((v) => !Value.Check(node, v))
const stringViolatable = (node: TSchema) => VIOLATION_PROBES.some((v) => typeof v !== 'object' && !acceptsString(node, String(v)))

/** The value as the server sees it after JSON: NaN and ±Infinity become null (which a nullable field accepts). */
const asSent = (v: unknown): unknown => JSON.parse(JSON.stringify(v) ?? 'null')
/** A JSON value the node refuses. */
const violating = (node: TSchema) => fc.oneof(anyJson, fc.constantFrom(...VIOLATION_PROBES)).map(asSent).filter((v) => !Value.Check(node, v))
/** A path or query string the node refuses even after coercion. */
const violatingString = (node: TSchema) =>
  fc
    .oneof(oddString, oddNumber.map(String), fc.constantFrom('abc', '1.5', '0', '-1', 'x'.repeat(65), '1e999', 'NaN', ' '))
    .filter((s) => !acceptsString(node, s))

/** Whether a missing property is filled in (Elysia applies schema defaults), so leaving it out is no violation. */
const hasDefault = (node: TSchema) => JSON.stringify(node).includes('"default"')

type Props = Record<string, TSchema>
const propsOf = (schema: TSchema | undefined): Props => (schema?.properties ?? {}) as Props
const requiredOf = (schema: TSchema | undefined): string[] => (schema?.required ?? []) as string[]

// ---------------------------------------------------------------------------------------------------------------
// Requests

const callerArb = fc.constantFrom(...CALLERS)
/** Path parameter values that are no id of anything. */
const GARBAGE_PARAMS = ['0', '-1', 'abc', '1.5', '99999999999', '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-4fff-bfff-ffffffffffff', ' ', 'null', 'x'.repeat(200)]
const paramArb: fc.Arbitrary<Param> = fc.oneof(
  { weight: 3, arbitrary: fc.nat().map((real) => ({ real })) },
  { weight: 1, arbitrary: fc.constantFrom(...GARBAGE_PARAMS).map((raw) => ({ raw })) },
  { weight: 1, arbitrary: oddString.map((raw) => ({ raw })) },
)
const paramsArb = (route: RouteInfo) => fc.record(Object.fromEntries(route.paramNames.map((n) => [n, paramArb])) as Record<string, fc.Arbitrary<Param>>)

const JSON_TYPES = ['application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'application/vnd.api+json', '', 'application/json; charset=utf-16', 'multipart/form-data']
const jsonHeaders = fc.constantFrom(...JSON_TYPES).map((t): Record<string, string> => (t ? { 'content-type': t } : {}))

/** A body object whose property `key` breaks its schema (or, when required and without default, is missing); other fields random. */
function badBodyObject(schema: TSchema): fc.Arbitrary<unknown> | undefined {
  const props = propsOf(schema)
  const options: fc.Arbitrary<unknown>[] = []
  const others = fc.dictionary(fc.constantFrom(...Object.keys(props), 'Extra', '__proto__', 'constructor'), anyJson, { maxKeys: 4 })
  for (const [key, node] of Object.entries(props)) {
    if (violatable(node)) options.push(fc.tuple(others, violating(node)).map(([o, v]) => ({ ...o, [key]: v })))
    if (requiredOf(schema).includes(key) && !hasDefault(node))
      options.push(
        others.map((o) => {
          const copy = { ...o }
          delete copy[key]
          return copy
        }),
      )
  }
  // the whole body of the wrong type (body.ts refuses a non-object where an object is expected)
  if (violatable(schema))
    options.push(fc.oneof(fc.array(anyJson, { maxLength: 3 }), oddString, oddNumber, fc.constant(null)).map(asSent).filter((v) => !Value.Check(schema, v)))
  return options.length ? fc.oneof(...options) : undefined
}

/** Must-refuse cases of one route: its body, a path parameter or a query parameter breaks the schema. */
function mustRefuseCases(route: RouteInfo): fc.Arbitrary<FuzzCase>[] {
  const base = { mustRefuse: true, method: route.method, path: route.path, route: route.key }
  const out: fc.Arbitrary<FuzzCase>[] = []
  const bad = route.body && !route.upload ? badBodyObject(route.body) : undefined
  if (bad)
    out.push(
      fc.record({ caller: callerArb, params: paramsArb(route), body: bad, ct: fc.constantFrom('application/json', 'text/plain', '') }).map((c): FuzzCase => ({
        ...base,
        kind: 'schema-body',
        caller: c.caller,
        params: c.params,
        query: '',
        headers: c.ct ? { 'content-type': c.ct } : ({} as Record<string, string>),
        body: JSON.stringify(c.body) ?? 'null',
      })),
    )
  for (const [name, node] of Object.entries(propsOf(route.params))) {
    if (!stringViolatable(node)) continue
    out.push(
      // '' and dot segments are no parameter: the URL then names another route (or is normalized away)
      fc.record({ caller: callerArb, params: paramsArb(route), value: violatingString(node).filter((v) => !['', '.', '..'].includes(v)), body: validishBody(route) }).map((c): FuzzCase => ({
        ...base,
        kind: 'schema-param',
        caller: c.caller,
        params: { ...c.params, [name]: { raw: c.value } },
        query: '',
        headers: c.body === undefined ? ({} as Record<string, string>) : { 'content-type': 'application/json' },
        body: c.body,
      })),
    )
  }
  for (const [name, node] of Object.entries(propsOf(route.query))) {
    if (!stringViolatable(node)) continue
    out.push(
      fc.record({ caller: callerArb, params: paramsArb(route), value: violatingString(node), body: validishBody(route) }).map((c): FuzzCase => ({
        ...base,
        kind: 'schema-query',
        caller: c.caller,
        params: c.params,
        query: `${encodeURIComponent(name)}=${encodeLoosely(c.value)}`,
        headers: c.body === undefined ? ({} as Record<string, string>) : { 'content-type': 'application/json' },
        body: c.body,
      })),
    )
  }
  return out
}

/** For routes with a body: a JSON object with some of its fields (values random), so the other checks are reached. */
function validishBody(route: RouteInfo): fc.Arbitrary<string | undefined> {
  if (!route.body || route.upload) return fc.constant(undefined)
  const props = Object.keys(propsOf(route.body))
  return fc.dictionary(fc.constantFrom('Extra', ...props), anyJson, { maxKeys: 4 }).map((o) => JSON.stringify(o))
}

/** encodeURIComponent, except that a lone surrogate (which it refuses) is sent as an invalid UTF-8 byte. */
function encodeLoosely(s: string): string {
  try {
    return encodeURIComponent(s)
  } catch {
    return encodeURIComponent(s.replace(/[\ud800-\udfff]/g, 'x')) + '%ED%A0%80'
  }
}

const BAD_JSON_TEXTS = [
  '{',
  '{"a":',
  '[1,2',
  '{"a":1,}',
  '{a:1}',
  "{'a':1}",
  'nul',
  '{"a":"\\ud800"}',
  '{"a":"\\x"}',
  '\ufeff{}',
  '{"__proto__":{"admin":true}}',
  '{"constructor":{"prototype":{"admin":true}}}',
  '{}{}',
  '{"a":1e999999}',
  '{"a":-}',
  '   ',
  '\u0000',
]
const deepNesting = fc.integer({ min: 1_000, max: 200_000 }).map((n) => '['.repeat(n) + ']'.repeat(n))
const deepObject = fc.integer({ min: 1_000, max: 50_000 }).map((n) => '{"a":'.repeat(n) + '1' + '}'.repeat(n))
/** A JSON value just over, or far over, the bounds of stored JSON (server/http/json-shape.ts): deep, or with too many values. */
const overShape = fc.oneof(
  // one level past the bound at least: a member exactly MAX_JSON_DEPTH deep is kept (seed 1686952052 drew 64)
  fc.integer({ min: MAX_JSON_DEPTH + 1, max: 1_500_000 }).chain((n) => fc.constantFrom('['.repeat(n) + ']'.repeat(n), '{"a":'.repeat(Math.min(n, 300_000)) + '1' + '}'.repeat(Math.min(n, 300_000)))),
  fc.integer({ min: 100_000, max: 150_000 }).map((n) => `[${'0,'.repeat(n)}0]`),
)
/** A body object whose member (one of the route's, or a stored JSON member) holds an over-bound value. */
const deepMember = (props: string[]) =>
  fc.tuple(fc.constantFrom(...props, 'Data', 'Metadata'), overShape).map(([key, value]) => `{${JSON.stringify(key)}:${value}}`)

/** Bytes that are not valid UTF-8, inside a JSON string or alone. */
const badUtf8 = fc.oneof(
  fc.tuple(fc.string(), fc.uint8Array({ min: 0x80, max: 0xff, minLength: 1, maxLength: 32 })).map(([key, bytes]) => {
    const enc = new TextEncoder()
    return Buffer.concat([enc.encode(`{"${key.replace(/["\\]/g, '')}":"`), bytes, enc.encode('"}')])
  }),
  fc.constantFrom(Uint8Array.of(0xc3, 0x28), Uint8Array.of(0xff, 0xfe, 0x7b, 0x7d), Uint8Array.of(0x7b, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x3a, 0x31, 0x7d)),
  fc.uint8Array({ maxLength: 512 }),
)

/** Junk JSON bodies for a route: the schema's fields with random values and extra fields, bad text, bad bytes. */
function jsonJunk(route: RouteInfo): fc.Arbitrary<FuzzCase> {
  const props = Object.keys(propsOf(route.body))
  const fields = fc.dictionary(fc.constantFrom('Extra', 'x', '__proto__', ...props), anyJson, { maxKeys: 6 }).map((o) => JSON.stringify(o))
  const body = fc.oneof(
    { weight: 4, arbitrary: fields },
    { weight: 1, arbitrary: anyJson.map((v) => JSON.stringify(v) ?? '') },
    { weight: 2, arbitrary: fc.constantFrom(...BAD_JSON_TEXTS) },
    { weight: 1, arbitrary: fc.oneof(deepNesting, deepObject, overShape) },
    { weight: 1, arbitrary: deepMember(props) },
    { weight: 2, arbitrary: badUtf8 },
    { weight: 1, arbitrary: fc.string({ unit: 'binary' }) },
  )
  return fc.record({ caller: callerArb, params: paramsArb(route), body, headers: jsonHeaders, query: queryJunk }).map((c) => ({
    kind: typeof c.body === 'string' ? 'json-junk' : 'bad-utf8',
    route: route.key,
    mustRefuse: false,
    method: route.method,
    path: route.path,
    ...c,
  }))
}

/** The shippers' routes that read their body as bytes (server/http/body.ts): protobuf, snappy and gzip junk. */
const SHIPPER_ROUTES = new Set(['POST /api/ingest/otlp/v1/logs', 'POST /api/ingest/loki/api/v1/push'])

/** `n` as a protobuf/snappy varint: the length a snappy block declares first. */
function varint(n: number): number[] {
  const out: number[] = []
  for (; n >= 0x80; n = Math.floor(n / 0x80)) out.push((n & 0x7f) | 0x80)
  out.push(n)
  return out
}

/**
 * Junk for the shippers' binary bodies: random bytes, gzip of random bytes (valid gzip, junk inside), snappy blocks
 * declaring any length up to 4 GiB over junk, each sent as protobuf, JSON, another type or none, with or without a
 * Content-Encoding (some unsupported). Junk that happens to be a valid empty request may succeed.
 */
function shipperJunk(route: RouteInfo): fc.Arbitrary<FuzzCase> {
  const bytes = fc.uint8Array({ maxLength: 2048 })
  const body = fc.oneof(
    bytes,
    bytes.map((b) => new Uint8Array(gzipSync(b))),
    fc.tuple(fc.integer({ min: 0, max: 0xffffffff }), bytes).map(([n, b]) => new Uint8Array([...varint(n), ...b])),
  )
  const type = fc.constantFrom('application/x-protobuf', 'application/json', 'text/plain', '')
  const encoding = fc.constantFrom('', 'gzip', 'deflate', 'br')
  return fc.record({ caller: callerArb, params: paramsArb(route), body, type, encoding }).map((c) => ({
    kind: 'shipper-junk',
    route: route.key,
    mustRefuse: false,
    method: route.method,
    path: route.path,
    caller: c.caller,
    params: c.params,
    query: '',
    headers: { ...(c.type ? { 'content-type': c.type } : {}), ...(c.encoding ? { 'content-encoding': c.encoding } : {}) },
    body: c.body,
  }))
}

// Multipart: broken boundaries, truncated bodies, a missing file part, huge part headers, junk meta fields.
const BOUNDARY = 'fuzz-boundary-7d1'
const part = (name: string, contents: string, extraHeaders = '') =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="f.txt"\r\n${extraHeaders}\r\n${contents}\r\n`
/** A multipart body, and whether it is broken for every upload route (no `file` part, cut short, no form at all). */
type Multipart = { body: string | Uint8Array; broken: boolean }
const ok = (body: string | Uint8Array): Multipart => ({ body, broken: false })
const broken = (body: string | Uint8Array): Multipart => ({ body, broken: true })
const multipartBody: fc.Arbitrary<Multipart> = fc.oneof(
  fc.string().map((s) => ok(part('file', s) + `--${BOUNDARY}--\r\n`)), // well-formed
  fc.string().map((s) => broken(part('other', s) + `--${BOUNDARY}--\r\n`)), // no file part
  fc.string().map((s) => broken(part('file', s))), // no closing boundary
  fc.tuple(fc.string(), fc.nat(60)).map(([s, n]) => broken((part('file', s) + `--${BOUNDARY}--\r\n`).slice(0, n))), // truncated
  fc.integer({ min: 1_000, max: 100_000 }).map((n) => ok(part('file', 'x', `X-Huge: ${'h'.repeat(n)}\r\n`) + `--${BOUNDARY}--\r\n`)),
  anyJson.map((m) => ok(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="meta"\r\n\r\n${JSON.stringify(m)}\r\n` + part('file', 'x') + `--${BOUNDARY}--\r\n`)),
  fc.constantFrom(...BAD_JSON_TEXTS).map((m) => ok(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="meta"\r\n\r\n${m}\r\n` + part('file', 'x') + `--${BOUNDARY}--\r\n`)),
  fc.integer({ min: 65_000, max: 70_000 }).map((n) => ok(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="name"\r\n\r\n${'n'.repeat(n)}\r\n` + part('file', 'x') + `--${BOUNDARY}--\r\n`)),
  fc.nat({ max: 300 }).map((n) => ok(Array.from({ length: n }, (_, i) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\nv\r\n`).join('') + part('file', 'x') + `--${BOUNDARY}--\r\n`)),
  fc.constant(ok(part('file', 'one') + part('file', 'two') + `--${BOUNDARY}--\r\n`)),
  fc.constant(broken(`--${BOUNDARY}\r\nContent-Disposition: form-data\r\n\r\nx\r\n--${BOUNDARY}--\r\n`)), // part without a name
  fc.constant(broken(`--${BOUNDARY}\r\n\r\n\r\n--${BOUNDARY}--\r\n`)),
  fc.constant(broken('')),
  badUtf8.map((b) => ok(Buffer.concat([Buffer.from(part('file', '').slice(0, -2)), b, Buffer.from(`\r\n--${BOUNDARY}--\r\n`)]))),
  fc.uint8Array({ maxLength: 256 }).map((b) => broken(b)), // no boundary in it
)
/** A Content-Type, and whether no multipart body can be read with it (no, empty or another boundary; not form-data). */
const multipartType = fc.oneof(
  fc.constantFrom(`multipart/form-data; boundary=${BOUNDARY}`, `multipart/form-data; boundary="${BOUNDARY}"`).map((type) => ({ type, broken: false })),
  fc
    .constantFrom(
      'multipart/form-data',
      'multipart/form-data; boundary=',
      'multipart/form-data; boundary=other-boundary',
      `multipart/form-data; boundary=${'b'.repeat(100)}`,
      `multipart/mixed; boundary=${BOUNDARY}`,
      'application/octet-stream',
    )
    .map((type) => ({ type, broken: true })),
)
function multipartJunk(route: RouteInfo): fc.Arbitrary<FuzzCase> {
  // On an upload route a broken form must be refused (a cut-short upload stored as complete would lose data).
  // Elsewhere a multipart form is refused whatever it holds (415: only upload routes read forms, docs/security.md).
  return fc.record({ caller: callerArb, params: paramsArb(route), body: multipartBody, type: multipartType, query: queryJunk }).map((c) => {
    const form = c.type.type.startsWith('multipart/form-data')
    const mustRefuse = route.upload ? c.body.broken || c.type.broken : form
    return {
      kind: route.upload ? (mustRefuse ? 'multipart-broken' : 'multipart') : form ? 'multipart-refused' : 'multipart',
      route: route.key,
      mustRefuse,
      method: route.method,
      path: route.path,
      caller: c.caller,
      params: c.params,
      query: c.query,
      headers: { 'content-type': c.type.type },
      body: typeof c.body.body === 'string' ? c.body.body : new Uint8Array(c.body.body),
    }
  })
}

/**
 * Bodies over the route's limit, of every type: JSON, text, forms, multipart with a `file` part that never ends or
 * with a dropped part that never ends; declared or chunked; as every caller. Each must be refused, read no further
 * than the limit allows and, for an anonymous caller of a route that needs one, not read at all.
 */
function hugeJunk(route: RouteInfo): fc.Arbitrary<FuzzCase> {
  const heads = fc.constantFrom(
    { type: 'application/json', head: '{"Name":"' },
    { type: 'text/plain', head: '' },
    { type: 'application/x-www-form-urlencoded', head: 'User=' },
    { type: 'application/octet-stream', head: '' },
    { type: '', head: '[' },
    { type: `multipart/form-data; boundary=${BOUNDARY}`, head: part('file', '').slice(0, -2) },
    { type: `multipart/form-data; boundary=${BOUNDARY}`, head: part('file', 'x') + part('dropped', '').slice(0, -2) },
  )
  const publicRoute = route.permission === undefined
  return fc
    .record({ caller: callerArb, params: paramsArb(route), head: heads, declared: fc.boolean(), over: fc.integer({ min: 1, max: 3 * FUZZ_LIMIT }) })
    .map((c): FuzzCase => {
      const limit = publicRoute ? PUBLIC_BODY_LIMIT : FUZZ_LIMIT
      const maxRead = c.caller === 'anonymous' && !publicRoute ? 0 : limit + MULTIPART_OVERHEAD + 2 * HUGE_CHUNK
      return {
        kind: c.declared ? 'huge-declared' : 'huge-chunked',
        route: route.key,
        mustRefuse: true,
        method: route.method,
        path: route.path,
        caller: c.caller,
        params: c.params,
        query: '',
        headers: c.head.type ? { 'content-type': c.head.type } : {},
        body: c.head.head,
        huge: { bytes: FUZZ_LIMIT + MULTIPART_OVERHEAD + c.over, declared: c.declared, maxRead },
      }
    })
}

const RAW_PARAMS = ['%C3%28', '%FF', '%00', '%2e%2e', '..', '.', '%', '%zz', '%2F', '%E2%82', '%ED%A0%80', '%F4%90%80%80', '1%00', '%20', '+', '*', '%0d%0aX-Injected:%201']
const queryJunk = fc.oneof(
  { weight: 6, arbitrary: fc.constant('') },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      'admin=true',
      'admin=true&admin=false',
      'admin[]=1',
      'admin=%FF',
      '%FF=%FF',
      'bytes=1e999',
      'bytes=-5',
      'bytes=abc',
      'bytes=99999999999999999999',
      '=&=&&',
      '__proto__[admin]=true',
      'constructor=x',
      '%C3%28',
      'a=%00',
    ),
  },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 50_000 }).map((n) => `admin=${'a'.repeat(n)}`) },
  { weight: 2, arbitrary: fc.dictionary(oddString, oddString, { maxKeys: 4 }).map((o) => Object.entries(o).map(([k, v]) => `${encodeLoosely(k)}=${encodeLoosely(v)}`).join('&')) },
)

/** Odd paths: raw percent sequences in parameters, mangled route paths, unknown paths, odd methods. */
function pathJunk(route: RouteInfo): fc.Arbitrary<FuzzCase> {
  const rawParam = fc.oneof(fc.constantFrom(...RAW_PARAMS), fc.integer({ min: 1_000, max: 20_000 }).map((n) => 'z'.repeat(n))).map((raw): Param => ({ raw, verbatim: true }))
  const params = fc.record(Object.fromEntries(route.paramNames.map((n) => [n, fc.oneof(paramArb, rawParam)])) as Record<string, fc.Arbitrary<Param>>)
  const mangle = fc.constantFrom(
    (p: string) => p,
    (p: string) => `${p}/`,
    (p: string) => p.replace('/api/', '/api//'),
    (p: string) => `${p}/..`,
    (p: string) => `${p}/%2e%2e/x`,
    (p: string) => p.toUpperCase(),
    (p: string) => `${p}/extra/segments`,
    (p: string) => p.replace('/api', '/api/%00'),
    (p: string) => `/api/${p.split('/').pop()}`,
  )
  const method = fc.constantFrom(route.method, route.method, 'GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND')
  return fc.record({ caller: callerArb, params, mangle, method, query: queryJunk, body: validishBody(route) }).map((c): FuzzCase => ({
    kind: 'odd-path',
    route: route.key,
    mustRefuse: false,
    method: c.method,
    path: c.mangle(route.path),
    caller: c.caller,
    params: c.params,
    query: c.query,
    headers: c.body === undefined ? ({} as Record<string, string>) : { 'content-type': 'application/json' },
    body: ['GET', 'HEAD'].includes(c.method) ? undefined : c.body,
  }))
}

/** Odd credentials: broken or foreign JWTs, tokens, cookies and auth schemes on top of (or instead of) the caller's. */
const authJunk = (route: RouteInfo) =>
  fc
    .record({
      caller: callerArb,
      params: paramsArb(route),
      header: fc.constantFrom('authorization', 'service-token', 'cookie'),
      value: fc.oneof(
        fc.constantFrom('Bearer ', 'Bearer x.y.z', 'Bearer eyJhbGciOiJub25lIn0.eyJ1aWQiOjF9.', 'Basic YWRtaW46YWRtaW4=', 'bearer', 'token=', 'token=x.y.z', 'Bearer \u00ff'),
        fc.string().map((s) => `Bearer ${s}`),
        fc.integer({ min: 10_000, max: 60_000 }).map((n) => `Bearer ${'a'.repeat(n)}`),
        fc.string({ unit: 'binary-ascii' }),
      ),
      body: validishBody(route),
    })
    .map(
      (c): FuzzCase => ({
        kind: 'odd-auth',
        route: route.key,
        mustRefuse: false,
        method: route.method,
        path: route.path,
        caller: c.caller,
        params: c.params,
        query: '',
        headers: { [c.header]: c.value.replace(/[\r\n]/g, ''), ...(c.body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: c.body,
      }),
    )

/** Replaced by the fixture user's JWT when the request is built, so that a hostile cookie can wrap a real credential. */
const USER_JWT = '{user-jwt}'

/**
 * Hostile `token` cookies (docs/security.md): bad percent-encoding, huge and empty values, quotes, duplicates, a real
 * JWT mangled, and a real JWT sent by cookie with a foreign or missing Origin (a refused cross-site request).
 */
const cookieJunk = (route: RouteInfo) =>
  fc
    .record({
      caller: callerArb,
      params: paramsArb(route),
      cookie: fc.oneof(
        fc.constantFrom(
          'token=%', 'token=%E0%A4%A', 'token=%ZZ', 'token=%C0%AF', 'token=%ED%A0%80', 'token=%00', 'token=""', 'token="', 'token=;token=%',
          'token', ';;;', '=', 'token==', 'token=a; token=b', `token=${USER_JWT}%`, `token=${USER_JWT}%zz`, `token="${USER_JWT}`,
          `token=${USER_JWT}.x`, `token=x; token=${USER_JWT}`, `token=${USER_JWT}`, `a=%; token=${USER_JWT}`,
        ),
        fc.string({ unit: 'binary-ascii' }).map((v) => `token=${v}`),
        fc.string().map((v) => `token=${encodeURIComponent(v)}%`),
        fc.integer({ min: 5_000, max: 60_000 }).map((n) => `token=${'%41'.repeat(n / 3)}`),
        fc.integer({ min: 5_000, max: 60_000 }).map((n) => `token=${'a'.repeat(n)}`),
      ),
      origin: fc.constantFrom(undefined, 'https://evil.example', 'null', 'http://localhost', '%', 'http://localhost.evil.example'),
      site: fc.constantFrom(undefined, 'cross-site', 'same-site', 'same-origin', 'none'),
      body: validishBody(route),
    })
    .map((c): FuzzCase => {
      const headers: Record<string, string> = { cookie: c.cookie.replace(/[\r\n]/g, '') }
      if (c.origin !== undefined) headers.origin = c.origin
      if (c.site !== undefined) headers['sec-fetch-site'] = c.site
      if (c.body !== undefined) headers['content-type'] = 'application/json'
      return { kind: 'odd-cookie', route: route.key, mustRefuse: false, method: route.method, path: route.path, caller: c.caller, params: c.params, query: '', headers, body: c.body }
    })
/** Routes that store a JSON member as sent, and the member. */
const STORED_JSON: Record<string, string> = {
  'POST /api/dashboards': 'Data',
  'PUT /api/dashboards/:id': 'Data',
  'POST /api/library': 'Metadata',
  'PUT /api/library/:id': 'Metadata',
  'POST /api/searchctrl/launch': 'Metadata',
}
/** Routes whose body may carry a whole stored JSON value. */
const STORED_BODY = new Set(['PUT /api/users/:id/preferences', 'PATCH /api/searchctrl/:id/save'])
/** Routes that store names, and the name fields. */
const NAMED: Record<string, string[]> = {
  'POST /api/users': ['User', 'Name', 'Email'],
  'PUT /api/users/:id': ['User', 'Name', 'Email'],
  'POST /api/groups': ['Name', 'Desc'],
  'PUT /api/groups/:gid': ['Name'],
}

/**
 * Must-refuse cases for stored content: a stored JSON member over the bounds (whatever the caller, a 4xx), and
 * a look-alike of `admin` or a name with an invisible character in a name field.
 */
function contentCases(route: RouteInfo): fc.Arbitrary<FuzzCase>[] {
  const base = { mustRefuse: true, method: route.method, path: route.path, route: route.key, query: '', headers: { 'content-type': 'application/json' } }
  const out: fc.Arbitrary<FuzzCase>[] = []
  const member = STORED_JSON[route.key]
  if (member || STORED_BODY.has(route.key)) {
    const body = member ? overShape.map((v) => `{"SearchString":"tag=x","Name":"n",${JSON.stringify(member)}:${v}}`) : overShape
    out.push(fc.record({ caller: callerArb, params: paramsArb(route), body }).map((c): FuzzCase => ({ ...base, kind: 'deep-json', ...c })))
  }
  const fields = NAMED[route.key]
  if (fields) {
    const valid = { User: 'fuzzname', Pass: 'password-fuzz', Name: 'fuzz', Email: 'fuzz@example.com', Admin: false }
    // a user name must not pass for `admin` nor hold an invisible character; other names only the latter
    const hostile = fc.tuple(fc.constantFrom(...fields), fc.constantFrom(...ADMIN_LOOKALIKES, ...INVISIBLE_NAMES)).filter(([f, n]) => f === 'User' || INVISIBLE_NAMES.includes(n))
    out.push(
      fc.record({ caller: callerArb, params: paramsArb(route), hostile }).map((c): FuzzCase => ({
        ...base,
        kind: 'hostile-name',
        caller: c.caller,
        params: c.params,
        body: JSON.stringify({ ...valid, [c.hostile[0]]: c.hostile[0] === 'Email' ? `x${c.hostile[1]}@example.com` : c.hostile[1] }),
      })),
    )
  }
  return out
}

/** Every case generator over every route of the table: must-refuse ones and junk, the junk weighted by kind. */
/**
 * One case per route (its path, auth or cookie junk) and one must-refuse case per route that has any, drawn
 * from the seed: the fixed part of a run that makes its coverage certain.
 */
export function coverageCases(routes: RouteInfo[], seed: number): FuzzCase[] {
  const arbitraries = [
    ...routes.map((r) => fc.oneof(pathJunk(r), authJunk(r), cookieJunk(r))),
    ...routes.map(mustRefuseCases).filter((cases) => cases.length).map((cases) => fc.oneof(...cases)),
  ]
  return fc.sample(fc.tuple(...arbitraries), { seed, numRuns: 1 })[0]!
}

export function caseArbitrary(routes: RouteInfo[]): fc.Arbitrary<FuzzCase> {
  const refuse = [...routes.flatMap(mustRefuseCases), ...routes.flatMap(contentCases)]
  const writes = routes.filter((r) => r.method !== 'GET' && r.method !== 'HEAD') // neither takes a body
  const junk = [
    ...routes.map(pathJunk),
    ...routes.map(authJunk),
    ...routes.map(cookieJunk),
    ...writes.map(jsonJunk),
    // upload routes are few but take the riskiest bodies: weighted up
    ...routes.filter((r) => r.upload).flatMap((r) => Array.from({ length: 6 }, () => multipartJunk(r))),
    ...writes.filter((r) => !r.upload).map(multipartJunk),
    ...writes.map(hugeJunk),
    // the shippers' binary bodies: few routes, the most decoding: weighted up
    ...routes.filter((r) => SHIPPER_ROUTES.has(r.key)).flatMap((r) => Array.from({ length: 10 }, () => shipperJunk(r))),
  ]
  return fc.oneof({ weight: 1, arbitrary: fc.oneof(...refuse) }, { weight: 1, arbitrary: fc.oneof(...junk) })
}

// ---------------------------------------------------------------------------------------------------------------
// The fixture: callers and real items to aim at

interface Item {
  /** What fills path parameters: ids, GUIDs, ThingUUIDs. */
  ids: string[]
  /** Whether the item is still there (a junk request that happened to be valid may have deleted it). */
  alive(): Promise<boolean>
}

interface World {
  s: TestServer
  /** The regular user who owns the items; the token is theirs too. */
  user: { uid: number; jwt: string }
  adminJwt: string
  token: string
}

const okAs = async (s: TestServer, path: string, headers: Record<string, string>) => (await s.call('GET', path, { headers })).status === 200
const bearer = (jwt: string) => ({ authorization: `Bearer ${jwt}` })
const UPLOAD = (meta?: unknown) => ({
  body: (meta === undefined ? '' : `--${BOUNDARY}\r\nContent-Disposition: form-data; name="meta"\r\n\r\n${JSON.stringify(meta)}\r\n`) + part('file', 'fuzz contents') + `--${BOUNDARY}--\r\n`,
  headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
})
async function must(res: Promise<CallResult>, what: string): Promise<CallResult> {
  const r = await res
  if (r.status !== 200) throw new Error(`fuzz fixture: ${what} failed: ${r.status} ${r.text}`)
  return r
}

/**
 * The items whose ids fill path parameters, one maker per area, each owned by (or naming) the fixture's user so
 * that validation on an existing item is reached. An area with items of its own (dashboards, searches, ...)
 * adds a maker here; areas without one still get the other areas' ids and garbage.
 */
const ITEM_MAKERS: Record<string, (w: World) => Promise<Item>> = {
  user: async (w) => ({ ids: [String(w.user.uid), '1'], alive: () => okAs(w.s, `/api/users/${w.user.uid}`, bearer(w.adminJwt)) }),
  group: async (w) => {
    const gid = (await must(w.s.call('POST', '/api/groups', { jwt: w.adminJwt, json: { Name: `fuzz-${crypto.randomUUID()}` } }), 'group')).body as number
    await must(w.s.call('POST', `/api/users/${w.user.uid}/group`, { jwt: w.adminJwt, json: { GIDs: [gid] } }), 'membership')
    return { ids: [String(gid)], alive: () => okAs(w.s, `/api/groups/${gid}`, bearer(w.adminJwt)) }
  },
  resource: async (w) => {
    const guid = (await must(w.s.call('POST', '/api/resources', { jwt: w.user.jwt, json: { ResourceName: 'fuzz' } }), 'resource')).body.GUID as string
    await must(w.s.call('PUT', `/api/resources/${guid}/raw`, { jwt: w.user.jwt, ...UPLOAD() }), 'resource upload')
    return { ids: [guid], alive: () => okAs(w.s, `/api/resources/${guid}`, bearer(w.adminJwt)) }
  },
  file: async (w) => {
    const f = (await must(w.s.call('POST', '/api/files', { jwt: w.user.jwt, ...UPLOAD({ Name: 'fuzz' }) }), 'file')).body
    return { ids: [f.GUID, f.ThingUUID], alive: () => okAs(w.s, `/api/files/${f.GUID}/details`, bearer(w.user.jwt)) }
  },
  token: async (w) => {
    const id = (await must(w.s.call('POST', '/api/tokens', { jwt: w.user.jwt, json: { name: 'fuzz-target', capabilities: ['DashboardRead'] } }), 'token')).body.id
    return { ids: [id], alive: () => okAs(w.s, `/api/tokens/${id}`, bearer(w.user.jwt)) }
  },
  dashboard: async (w) => {
    const id = (await must(w.s.call('POST', '/api/dashboards', { jwt: w.user.jwt, json: { Name: 'fuzz', Data: { tiles: [] } } }), 'dashboard')).body as number
    const guid = (await must(w.s.call('GET', `/api/dashboards/${id}`, { jwt: w.user.jwt }), 'dashboard read')).body.GUID as string
    return { ids: [String(id), guid], alive: () => okAs(w.s, `/api/dashboards/${id}`, bearer(w.user.jwt)) }
  },
  library: async (w) => {
    const e = (await must(w.s.call('POST', '/api/library', { jwt: w.user.jwt, json: { Name: 'fuzz', Query: 'tag=fuzz' } }), 'library entry')).body
    return { ids: [e.ThingUUID, e.GUID], alive: () => okAs(w.s, `/api/library/${e.ThingUUID}`, bearer(w.user.jwt)) }
  },
  notification: async (w) => {
    const id = String((await must(w.s.call('POST', '/api/notifications/targeted/self', { jwt: w.user.jwt, json: { Msg: 'fuzz' } }), 'notification')).body)
    const alive = async () => {
      const res = await w.s.call('GET', '/api/notifications', { jwt: w.user.jwt })
      return res.status === 200 && id in res.body
    }
    return { ids: [id], alive }
  },
  search: async (w) => {
    // one launched search, and one saved (SAVED once it is dormant) with a result to download
    await must(w.s.call('POST', '/api/ingest/json', { jwt: w.adminJwt, json: [{ TS: '2000-01-01T00:00:00Z', Tag: 'fuzz', Data: 'ZnV6eg==' }] }), 'ingest')
    const launch = async () => (await must(w.s.call('POST', '/api/searchctrl/launch', { jwt: w.user.jwt, json: { SearchString: 'tag=*' } }), 'search')).body.SearchID as string
    const launched = await launch()
    const saved = await launch()
    await must(w.s.call('PATCH', `/api/searchctrl/${saved}/save`, { jwt: w.user.jwt }), 'search save')
    await w.s.searches.settled()
    const alive = async () => (await okAs(w.s, `/api/searchctrl/${launched}`, bearer(w.user.jwt))) && okAs(w.s, `/api/searchctrl/${saved}`, bearer(w.user.jwt))
    return { ids: [launched, saved], alive }
  },
}

export interface FuzzFixture {
  s: TestServer
  routes: RouteInfo[]
  /** Re-creates callers and items that valid junk requests locked, deleted or logged out. */
  heal(): Promise<void>
  request(c: FuzzCase): Request
  /** How many body bytes the server read of a request made by request() for a huge case. */
  pulled(req: Request): number
  /** Real ids for path parameters. */
  ids(): string[]
}

export async function fuzzFixture(): Promise<FuzzFixture> {
  const s = await createTestServer({
    loginMaxFailures: 1000,
    maxBodyBytes: FUZZ_LIMIT,
    maxFileBytes: FUZZ_LIMIT,
    maxResourceBytes: FUZZ_LIMIT,
    maxImportBytes: FUZZ_LIMIT,
    // the fixture's user sends the notification the fuzz targets; valid junk must not use up its count on a long run
    notificationsPerUser: 1_000_000,
  })
  const w: World = { s, user: { uid: 0, jwt: '' }, adminJwt: s.adminJwt, token: '' }
  const items = new Map<string, Item>()

  let users = 0
  async function newUser() {
    const name = `fuzzer${++users}`
    const json = { User: name, Pass: `password-${name}`, Name: name, Email: `${name}@example.com`, Admin: false }
    const uid = (await must(s.call('POST', '/api/users', { jwt: w.adminJwt, json }), 'user')).body as number
    w.user = { uid, jwt: await s.login(name, json.Pass) }
    items.clear()
  }
  async function newToken() {
    w.token = (await must(s.call('POST', '/api/tokens', { jwt: w.user.jwt, json: { name: 'fuzz', capabilities: CAPABILITY_NAMES.filter((c) => userHolds({ admin: false }, c)) } }), 'token')).body.token
  }

  async function heal() {
    // The test server keeps every log line; the fuzzer's can be as long as its URLs, so let them go.
    s.logs.length = 0
    // The admin (UID 1) may have been renamed, demoted, locked or given a new password by a valid junk request.
    if (!(await okAs(s, '/api/info/whoami', bearer(w.adminJwt)))) {
      await s.store.users.update(1, { username: 'admin', admin: true, locked: false })
      await s.store.users.setPasswordHash(1, await s.auth.hashPassword(ADMIN_PASSWORD))
      w.adminJwt = await s.login('admin', ADMIN_PASSWORD)
    }
    if (!(await okAs(s, '/api/info/whoami', bearer(w.user.jwt)))) await newUser()
    if (!(await okAs(s, '/api/info/whoami', { 'service-token': w.token }))) await newToken()
    for (const [area, make] of Object.entries(ITEM_MAKERS)) {
      const item = items.get(area)
      if (!item || !(await item.alive())) items.set(area, await make(w))
    }
  }

  await newUser()
  await newToken()
  await heal()

  const ids = () => [...items.values()].flatMap((i) => i.ids)
  const pulledOf = new WeakMap<Request, () => number>()

  /** The body of a huge case: its head, then filler, made only as it is read (nothing is buffered ahead). */
  function hugeBody(head: string | Uint8Array | undefined, bytes: number) {
    const first = typeof head === 'string' ? new TextEncoder().encode(head) : (head ?? new Uint8Array(0))
    let pulled = 0
    const stream = new ReadableStream<Uint8Array>(
      {
        pull(ctl) {
          if (pulled >= bytes) return ctl.close()
          const chunk = pulled === 0 && first.byteLength > 0 ? first : new Uint8Array(Math.min(HUGE_CHUNK, bytes - pulled)).fill(97)
          pulled += chunk.byteLength
          ctl.enqueue(chunk)
        },
      },
      { highWaterMark: 0 },
    )
    return { stream, pulled: () => pulled }
  }

  function request(c: FuzzCase): Request {
    const pool = ids()
    const path = c.path.replace(/:(\w+)/g, (_, name: string) => {
      const p = c.params[name]
      if (!p) return 'missing'
      if ('real' in p) return pool[p.real % pool.length]!
      return p.verbatim ? p.raw : encodeLoosely(p.raw)
    })
    const headers = new Headers()
    if (c.caller === 'user') headers.set('authorization', `Bearer ${w.user.jwt}`)
    if (c.caller === 'admin') headers.set('authorization', `Bearer ${w.adminJwt}`)
    if (c.caller === 'token') headers.set('service-token', w.token)
    for (const [k, raw] of Object.entries(c.headers)) {
      const v = raw.replaceAll(USER_JWT, w.user.jwt)
      try {
        headers.set(k, v)
      } catch {
        headers.set(k, v.replace(/[^\x20-\x7e]/g, '?')) // a value no HTTP client could send as is
      }
    }
    const url = `http://localhost${path}${c.query ? `?${c.query}` : ''}`
    const hasBody = c.body !== undefined && c.method !== 'GET' && c.method !== 'HEAD'
    if (c.huge && hasBody) {
      const body = hugeBody(c.body, c.huge.bytes)
      if (c.huge.declared) headers.set('content-length', String(c.huge.bytes))
      const req = new Request(url, { method: c.method, headers, body: body.stream })
      pulledOf.set(req, body.pulled)
      return req
    }
    return new Request(url, { method: c.method, headers, body: hasBody ? c.body : undefined })
  }

  const pulled = (req: Request) => pulledOf.get(req)?.() ?? 0

  // WebSocket routes (method WS, reached by an upgrade) are fuzzed by their own tests (plugins/ws/ws.test.ts).
  return { s, routes: apiRoutes(s.app).filter((r) => r.path.startsWith('/api') && r.method !== 'WS'), heal, request, pulled, ids }
}

// ---------------------------------------------------------------------------------------------------------------
// The run

export interface FuzzStats {
  requests: number
  byKind: Record<string, number>
  byStatus: Record<string, number>
  /** Cases per route key, and must-refuse cases per route key. */
  byRoute: Record<string, number>
  mustRefuseByRoute: Record<string, number>
  refusedChecked: number
}

/** The seed of a run: QUARRY_FUZZ_SEED when set, else a fresh one (printed with any failure). */
export function fuzzSeed(): number {
  const raw = process.env.QUARRY_FUZZ_SEED
  return raw ? Number(raw) : Math.floor(Math.random() * 2 ** 31)
}

const HANG_MS = 15_000
const HEAL_EVERY = 100

function describeCase(c: FuzzCase, req: Request): string {
  const body = c.body === undefined ? '' : typeof c.body === 'string' ? c.body.slice(0, 300) : `bytes ${Buffer.from(c.body.subarray(0, 120)).toString('hex')}`
  return `[${c.kind}${c.mustRefuse ? ', must refuse' : ''}] ${c.caller}: ${req.method} ${req.url.slice(0, 300)} headers ${JSON.stringify(Object.fromEntries(req.headers)).slice(0, 300)} body ${JSON.stringify(body)}${c.huge ? ` then filler: ${JSON.stringify(c.huge)}` : ''}`
}

/** What entered and left a list of strings (blob files, a table's rows as JSON), each shown up to 300 characters. */
export function listChanges(before: readonly string[], after: readonly string[], what: string): string {
  const had = new Set(before)
  const has = new Set(after)
  const show = (items: string[]) => items.slice(0, 5).map((i) => i.slice(0, 300)).join(', ') + (items.length > 5 ? `, and ${items.length - 5} more` : '')
  const added = after.filter((i) => !had.has(i))
  const removed = before.filter((i) => !has.has(i))
  const parts = []
  if (added.length > 0) parts.push(`${added.length} ${what}(s) appeared: ${show(added)}`)
  if (removed.length > 0) parts.push(`${removed.length} ${what}(s) disappeared: ${show(removed)}`)
  return parts.join('; ') || `${what}s in another order or count`
}

/** Which rows of which tables a change of the store added or removed. */
export function storeChanges(before: Record<string, unknown[]>, after: Record<string, unknown[]>): string {
  const rows = (t: Record<string, unknown[]>, name: string) => (t[name] ?? []).map((r) => JSON.stringify(r))
  const changed = [...new Set([...Object.keys(before), ...Object.keys(after)])]
    .filter((name) => JSON.stringify(before[name]) !== JSON.stringify(after[name]))
    .map((name) => `table ${name}: ${listChanges(rows(before, name), rows(after, name), 'row')}`)
  return changed.join('; ')
}

/** Sends `runs` generated cases; throws (with the seed and the offending request) at the first broken rule. */
export async function runFuzz(f: FuzzFixture, runs: number, seed: number): Promise<FuzzStats> {
  const stats: FuzzStats = { requests: 0, byKind: {}, byStatus: {}, byRoute: {}, mustRefuseByRoute: {}, refusedChecked: 0 }
  // The store's snapshot is taken again only when its change mark moved (TestStore.changes: SQLite's
  // total_changes(), PostgreSQL's current transaction snapshot), so a request that wrote nothing costs no snapshot.
  let cached: { at: string; snapshot: string; tables: Record<string, unknown[]> } = { at: '', snapshot: '', tables: {} }
  const snapshot = async () => {
    const at = await f.s.testStore.changes()
    if (at !== cached.at) {
      const tables = await storeSnapshotAsync(f.s)
      cached = { at, snapshot: JSON.stringify(tables), tables }
    }
    return cached
  }
  const check = async (c: FuzzCase) => {
    if (stats.requests % HEAL_EVERY === 0) await f.heal()
    const req = f.request(c)
    // searches run and are saved in the background: what an earlier accepted request started ends first
    await f.s.searches.settled()
    const before = await snapshot()
    const blobsBefore = blobFiles(f.s)
    let timer: ReturnType<typeof setTimeout> | undefined
    let res: CallResult
    try {
      res = await Promise.race([
        f.s.handle(req),
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${HANG_MS} ms`)), HANG_MS))),
      ])
    } catch (e) {
      throw new Error(`the app threw or hung: ${(e as Error).message}\n  ${describeCase(c, req)}`)
    } finally {
      clearTimeout(timer)
    }
    stats.requests++
    stats.byKind[c.kind] = (stats.byKind[c.kind] ?? 0) + 1
    stats.byRoute[c.route] = (stats.byRoute[c.route] ?? 0) + 1
    if (c.mustRefuse) stats.mustRefuseByRoute[c.route] = (stats.mustRefuseByRoute[c.route] ?? 0) + 1
    const bucket = `${Math.floor(res.status / 100)}xx`
    stats.byStatus[bucket] = (stats.byStatus[bucket] ?? 0) + 1
    const problem = (what: string) => new Error(`${what}: ${res.status} ${res.text.slice(0, 300)}\n  ${describeCase(c, req)}`)
    if (res.status >= 500) throw problem('a 5xx')
    if (c.mustRefuse && (res.status < 400 || res.status >= 500)) throw problem('a request that breaks the schema was not refused')
    if (c.huge && f.pulled(req) > c.huge.maxRead) throw problem(`the server read ${f.pulled(req)} bytes of a huge body (at most ${c.huge.maxRead} allowed)`)
    if (res.status >= 400) {
      // the one refusal of another shape is the login's, as docs/api.md "Logging in and sessions" gives it:
      // {"LoginStatus": false, "Reason": ...}; OTLP's to a protobuf request, a protobuf google.rpc.Status as its
      // specification says, whose message (the reason) reads as text inside the bytes; and the other shippers' protocol
      // routes answer in their protocol's shape (plugins/ingest/elastic.ts and splunk.ts)
      const otlpStatus = res.headers.get('content-type') === 'application/x-protobuf' && /[\x20-\x7e]{10,}/.test(res.text)
      const wellFormed =
        typeof res.body?.Error === 'string' ||
        (res.body?.LoginStatus === false && typeof res.body?.Reason === 'string') ||
        otlpStatus ||
        (PROTOCOL_ROUTE.test(c.route) && (protocolShaped(res.body) || (typeof res.body?.text === 'string' && typeof res.body?.code === 'number')))
      if (req.method !== 'HEAD' && !wellFormed) throw problem('a refusal without an {"Error": ...} body')
      stats.refusedChecked++
      const after = await snapshot()
      // Splunk HEC stores the events before the first bad one and names that one (plugins/ingest/splunk.ts)
      const storedBefore = PROTOCOL_ROUTE.test(c.route) && (res.body?.['invalid-event-number'] ?? 0) > 0
      if (after.snapshot !== before.snapshot && !storedBefore) throw problem(`a refused request changed the store: ${storeChanges(before.tables, after.tables)}`)
      const blobsAfter = blobFiles(f.s)
      if (JSON.stringify(blobsAfter) !== JSON.stringify(blobsBefore))
        throw problem(`a refused request changed the blob files: ${listChanges(blobsBefore, blobsAfter, 'blob')}`)
    }
  }
  // Every route is aimed at and every route with a body schema gets a must-refuse body, whatever the seed: a
  // random draw alone misses a route now and then (a GET route without parameters has 3 cases among ~800).
  const prelude = coverageCases(f.routes, seed).slice(0, runs)
  for (const c of prelude) {
    try {
      await check(c)
    } catch (e) {
      throw new Error(`fuzz run failed in its coverage cases; reproduce with QUARRY_FUZZ_SEED=${seed} QUARRY_FUZZ_RUNS=${runs}\n${(e as Error).message}`)
    }
  }
  try {
    const property = fc.asyncProperty(caseArbitrary(f.routes), check)
    if (runs > prelude.length) await fc.assert(property, { seed, numRuns: runs - prelude.length, endOnFailure: true })
  } catch (e) {
    const cause = (e as Error).cause instanceof Error ? `\n${((e as Error).cause as Error).message}` : ''
    throw new Error(`fuzz run failed; reproduce with QUARRY_FUZZ_SEED=${seed} QUARRY_FUZZ_RUNS=${runs}${cause}\n${(e as Error).message}`)
  }
  return stats
}

// ---------------------------------------------------------------------------------------------------------------
// Tag floods: generated ingest batches of many distinct tags (the attack that filled the tag table), sent by a user
// and through a token to a server with a small bound on distinct tags (QUARRY_MAX_TAGS). A model of the known tags
// predicts every answer: 400 for a batch with an invalid tag name, 413 naming the bound for one whose new tags would
// pass it, 200 otherwise. Refusals change nothing; the store never holds more tags than the bound; searches still
// resolve the tags that exist.

/** The bound of the tag-flood server: small, so that a short flood reaches it. */
export const TAG_FLOOD_LIMIT = 32

export interface TagFloodCase {
  caller: 'user' | 'token'
  tags: string[]
}

const FLOOD_POOL = ['web', 'db', 'auth', 'dns.query', 'fw-drop']
const VALID_TAG = /^[A-Za-z0-9._-]{1,128}$/
const FLOOD_TIME = '2000-01-01T00:00:00Z'

const poolTag = fc.constantFrom(...FLOOD_POOL)
const freshTag = fc.stringMatching(/^[A-Za-z0-9._-]{1,24}$/)
const invalidTag = fc.constantFrom('', 'x'.repeat(129), 'a b', 'tag/x', 'tag,x', '*', 'é', 'a\u0000b', '\ud800')

export function tagFloodArbitrary(): fc.Arbitrary<TagFloodCase> {
  return fc.record({
    caller: fc.constantFrom('user' as const, 'token' as const),
    tags: fc.oneof(
      // batches of the pool alone keep being accepted once the bound is reached
      { weight: 2, arbitrary: fc.array(poolTag, { minLength: 1, maxLength: 20 }) },
      // the flood: many fresh names
      { weight: 5, arbitrary: fc.array(fc.oneof(poolTag, freshTag, freshTag), { minLength: 1, maxLength: 60 }) },
      // and now and then a name no tag may have among them
      { weight: 1, arbitrary: fc.array(fc.oneof(poolTag, freshTag, invalidTag), { minLength: 1, maxLength: 60 }) },
    ),
  })
}

export interface TagFloodStats {
  accepted: number
  refusedForTags: number
  refusedInvalid: number
  tags: number
}

/** Sends `runs` generated tag floods; throws (with the seed and the batch) at the first broken rule. */
export async function runTagFlood(runs: number, seed: number): Promise<TagFloodStats> {
  const s = await createTestServer({ maxTags: TAG_FLOOD_LIMIT })
  try {
    const user = await s.createUser()
    const made = await must(s.call('POST', '/api/tokens', { jwt: user.jwt, json: { name: 'flood', capabilities: ['Ingest'] } }), 'token')
    const auth = (c: TagFloodCase) => (c.caller === 'user' ? { jwt: user.jwt } : { headers: { 'Service-Token': made.body.token as string } })
    const known = new Set<string>()
    const stats: TagFloodStats = { accepted: 0, refusedForTags: 0, refusedInvalid: 0, tags: 0 }
    const tagCount = async () => Number((await s.rows('SELECT count(*) AS n FROM ingest_tags'))[0]!.n)
    const flood = async (c: TagFloodCase) => {
      const fresh = new Set(c.tags.filter((t) => !known.has(t)))
      const expected = c.tags.some((t) => !VALID_TAG.test(t)) ? 400 : known.size + fresh.size > TAG_FLOOD_LIMIT ? 413 : 200
      const before = JSON.stringify(await storeSnapshotAsync(s))
      const res = await s.call('POST', '/api/ingest/json', { ...auth(c), json: c.tags.map((Tag) => ({ TS: FLOOD_TIME, Tag, Data: '' })) })
      const problem = (what: string) => new Error(`${what}: ${res.status} ${res.text.slice(0, 300)}; batch ${JSON.stringify(c).slice(0, 600)}`)
      if (res.status !== expected) throw problem(`expected ${expected} (${known.size} known tags, ${fresh.size} new)`)
      if (res.status === 413 && !(String(res.body?.Error).includes('QUARRY_MAX_TAGS') && String(res.body?.Error).includes(String(TAG_FLOOD_LIMIT))))
        throw problem('a refusal that does not name the bound')
      if (res.status === 200) {
        for (const t of c.tags) known.add(t)
        stats.accepted++
      } else {
        if (typeof res.body?.Error !== 'string') throw problem('a refusal without an {"Error": ...} body')
        if (JSON.stringify(await storeSnapshotAsync(s)) !== before) throw problem('a refused batch changed the store')
        if (res.status === 413) stats.refusedForTags++
        else stats.refusedInvalid++
      }
      const held = await tagCount()
      if (held !== known.size || held > TAG_FLOOD_LIMIT) throw problem(`the store holds ${held} tags, the model ${known.size}, the bound ${TAG_FLOOD_LIMIT}`)
    }
    try {
      await fc.assert(fc.asyncProperty(tagFloodArbitrary(), flood), { seed, numRuns: runs, endOnFailure: true })
    } catch (e) {
      const cause = (e as Error).cause instanceof Error ? `\n${((e as Error).cause as Error).message}` : ''
      throw new Error(`tag flood failed; reproduce with QUARRY_FUZZ_SEED=${seed}${cause}\n${(e as Error).message}`)
    }
    // The tags that exist still resolve: a search of every one the model knows finds one entry per accepted use.
    const launched = await must(s.call('POST', '/api/searchctrl/launch', { jwt: user.jwt, json: { SearchString: `tag=${[...known].join(',')}`, SearchStart: '1999-01-01T00:00:00Z', SearchEnd: '2001-01-01T00:00:00Z' } }), 'search')
    await s.searches.settled()
    const found = await must(s.call('GET', `/api/searchctrl/${launched.body.SearchID}/download/json`, { jwt: user.jwt }), 'results')
    const named = new Set((found.body as { Tag: string }[]).map((r) => r.Tag))
    if ([...known].some((t) => !named.has(t))) throw new Error(`a search after the flood missed tags: ${[...known].filter((t) => !named.has(t)).join(', ')}`)
    stats.tags = known.size
    return stats
  } finally {
    s.close()
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Socket floods: generated junk on the two WebSocket routes, through a listening server over real TCP. Each round
// is one of: a socket that reads and gets an answer to every message and stays open; a socket that never reads
// and floods (cut by the server once it is too far behind, with its memory bounded); more sockets at once than the
// user may hold (refused past the count). After every round another request is answered promptly and the store
// holds what it held.

/** Sockets one user may hold on the flood server (its QUARRY_WS_PER_USER). */
export const FLOOD_SOCKETS_PER_USER = 4
/**
 * Messages of an unread flood of non-objects past which the server must have cut the socket: their error answers
 * (about 60 bytes each, 24 MB in all) are more than fit under its marks and in the kernel's socket buffers (a few
 * MiB on loopback). Other floods may be answered whole by the kernel's buffers, or need no answer (PONG).
 */
const FLOOD_MUST_CUT = 400_000
/** Another request during the floods is answered within this (generous: a loaded 2-core machine). */
const FLOOD_ANSWER_MS = 10_000
/**
 * How far the memory of this process (the server's and the flooding clients') may stay grown after a round, once its
 * garbage is collected. (The peak during a round, garbage included, is reported.)
 */
export const FLOOD_MEMORY_MIB = 160

type SocketPath = '/api/ws/search' | '/api/ws/stats'
type FloodRound =
  | { kind: 'read'; path: SocketPath; caller: 'user' | 'token'; messages: (string | Uint8Array)[] }
  /** `total` messages: `messages` over and over. */
  | { kind: 'unread'; path: SocketPath; messages: string[]; total: number; mustCut: boolean }
  | { kind: 'many'; paths: SocketPath[] }

/** A message that is no JSON object: a JSON value of another kind, or text that is mostly not JSON. */
function nonObjectJunk(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.jsonValue({ maxDepth: 2 }).filter((v) => typeof v !== 'object' || v === null || Array.isArray(v)).map((v) => JSON.stringify(v)),
    fc.string({ maxLength: 64 }).filter((t) => !t.trimStart().startsWith('{')),
  )
}

/**
 * One message a client may send that asks for nothing the server keeps: a JSON value that is not an object, text
 * that is mostly not JSON, an object of no known shape, a request of a known type with junk data (parse, attach,
 * PONG, a subprotocol the socket does not have), a stats subscription to junk. Never a launch (`search`).
 */
function socketJunk(): fc.Arbitrary<string> {
  const notLaunch = (o: Record<string, unknown>) => o.type !== 'search'
  return fc.oneof(
    nonObjectJunk(),
    fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }).filter(notLaunch).map((o) => JSON.stringify(o)),
    fc.record({ type: fc.constantFrom('parse', 'attach', 'PONG', 'search1', 'nope'), data: fc.jsonValue({ maxDepth: 2 }) }).map((o) => JSON.stringify(o)),
    fc.record({ Subs: fc.array(fc.oneof(fc.constantFrom('ping', 'sysDesc', 'nope'), fc.jsonValue({ maxDepth: 1 })), { maxLength: 4 }) }).map((o) => JSON.stringify(o)),
  )
}

function floodRound(): fc.Arbitrary<FloodRound> {
  const path = fc.constantFrom<SocketPath>('/api/ws/search', '/api/ws/stats')
  return fc.oneof(
    {
      weight: 5,
      arbitrary: fc.record({
        kind: fc.constant('read' as const),
        path,
        caller: fc.constantFrom<'user' | 'token'>('user', 'token'),
        messages: fc.array(fc.oneof({ weight: 9, arbitrary: socketJunk() }, { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }) }), { minLength: 1, maxLength: 40 }),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('unread' as const),
        path,
        messages: fc.array(socketJunk(), { minLength: 1, maxLength: 8 }),
        total: fc.integer({ min: 1, max: 50_000 }),
        mustCut: fc.constant(false),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('unread' as const),
        path,
        messages: fc.array(nonObjectJunk(), { minLength: 1, maxLength: 8 }),
        total: fc.constant(FLOOD_MUST_CUT),
        mustCut: fc.constant(true),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('many' as const), paths: fc.array(path, { minLength: FLOOD_SOCKETS_PER_USER + 1, maxLength: FLOOD_SOCKETS_PER_USER * 3 }) }) },
  )
}

export interface FloodFixture {
  s: TestServer
  port: number
  jwt: string
  token: string
  close(): Promise<void>
}

/** A listening server of its own for the floods, with a user and an API token holding Search and Stats. */
export async function floodFixture(): Promise<FloodFixture> {
  const s = await createTestServer({ wsPerUser: FLOOD_SOCKETS_PER_USER })
  s.app.listen({ hostname: '127.0.0.1', port: 0 })
  const port = s.app.server!.port!
  const user = await s.createUser()
  const token = (await must(s.call('POST', '/api/tokens', { jwt: user.jwt, json: { name: 'flood', capabilities: ['Search', 'Stats'] } }), 'token')).body.token as string
  return { s, port, jwt: user.jwt, token, close: async () => (await s.app.stop(true), s.close()) }
}

export interface FloodStats {
  rounds: number
  byKind: Record<string, number>
  cut: number
  refused: number
  /** Growth of this process's memory: the most after a round (garbage collected), and the peak within one. */
  retainedMiB: number
  peakMiB: number
}

/** A socket of a client that reads: its answers, its end. */
async function readingSocket(url: string, headers: Record<string, string>) {
  const ws = new WebSocket(url, { headers } as unknown as string[])
  const answers: unknown[] = []
  let end: number | undefined
  const closed = new Promise<void>((resolve) => ws.addEventListener('close', () => resolve()))
  ws.onmessage = (e) => {
    try {
      answers.push(JSON.parse(String(e.data)))
    } catch {
      answers.push(String(e.data))
    }
  }
  ws.addEventListener('close', (e) => void (end = e.code))
  const opened = await new Promise<boolean>((resolve) => {
    ws.onopen = () => resolve(true)
    ws.onerror = () => resolve(false)
  })
  return { ws, answers, opened, closed, end: () => end }
}

export async function runSocketFloods(f: FloodFixture, runs: number, seed: number): Promise<FloodStats> {
  const stats: FloodStats = { rounds: 0, byKind: {}, cut: 0, refused: 0, retainedMiB: 0, peakMiB: 0 }
  const base = `ws://127.0.0.1:${f.port}`
  const cuts = () => f.s.logs.filter((l) => l.includes('websocket closed: ')).length
  Bun.gc(true)
  const memoryBefore = process.memoryUsage().rss
  let peak = memoryBefore
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 25)
  const storeBefore = JSON.stringify(await storeSnapshotAsync(f.s))

  const answeredPromptly = async (what: string) => {
    const started = Date.now()
    const res = await fetch(`http://127.0.0.1:${f.port}/api/info/whoami`, { headers: { authorization: `Bearer ${f.jwt}` } })
    if (res.status !== 200) throw new Error(`${what}: a request meanwhile got ${res.status}`)
    if (Date.now() - started > FLOOD_ANSWER_MS) throw new Error(`${what}: a request meanwhile waited ${Date.now() - started} ms`)
  }
  /** Waits until the server counts none of the user's sockets (so the next round starts with all of them free). */
  const allClosed = async () => {
    for (let i = 0; i < 100; i++) {
      const probes = []
      for (let k = 0; k < FLOOD_SOCKETS_PER_USER; k++) probes.push(await readingSocket(`${base}/api/ws/stats`, { authorization: `Bearer ${f.jwt}` }))
      const open = probes.filter((p) => p.opened && p.ws.readyState === WebSocket.OPEN).length
      for (const p of probes) p.ws.close()
      await Promise.all(probes.map((p) => (p.opened ? p.closed : undefined)))
      if (open === FLOOD_SOCKETS_PER_USER) return
      await Bun.sleep(25)
    }
    throw new Error('the sockets of earlier rounds still count after several seconds')
  }

  const round = async (r: FloodRound) => {
    const what = `socket flood round ${stats.rounds} (${r.kind}: ${JSON.stringify(r).slice(0, 300)})`
    stats.rounds++
    stats.byKind[r.kind] = (stats.byKind[r.kind] ?? 0) + 1
    if (r.kind === 'read') {
      const headers: Record<string, string> = r.caller === 'user' ? { authorization: `Bearer ${f.jwt}` } : { 'service-token': f.token }
      const c = await readingSocket(`${base}${r.path}`, headers)
      if (!c.opened) throw new Error(`${what}: the socket did not open`)
      for (const m of r.messages) c.ws.send(m)
      // every message is answered, but for a keep-alive (PONG) on the search socket
      const due = r.messages.filter((m) => typeof m !== 'string' || !m.includes('PONG')).length
      for (let i = 0; i < 400 && c.answers.length < due && c.end() === undefined; i++) await Bun.sleep(25)
      if (c.end() !== undefined) throw new Error(`${what}: the server closed a socket that read its answers (${c.end()})`)
      if (c.answers.length < due) throw new Error(`${what}: ${c.answers.length} answers to ${due} messages`)
      const shapeless = c.answers.find((a) => typeof a !== 'object' || a === null || Array.isArray(a))
      if (shapeless !== undefined) throw new Error(`${what}: an answer that is not a JSON object: ${JSON.stringify(shapeless)}`)
      c.ws.close()
    } else if (r.kind === 'unread') {
      const before = cuts()
      const { sock } = await nonReadingClient(f.port, f.jwt, r.path)
      const frames = r.messages.map(frame)
      sock.write(Buffer.concat(Array.from({ length: r.total }, (_, i) => frames[i % frames.length]!)))
      if (r.mustCut) {
        for (let i = 0; i < 400 && cuts() === before; i++) await Bun.sleep(25)
        if (cuts() === before) throw new Error(`${what}: a socket that sent ${r.total} messages and read nothing was not cut`)
        stats.cut++
      }
      await answeredPromptly(what)
      sock.destroy()
    } else {
      const sockets = await Promise.all(r.paths.map((p) => readingSocket(`${base}${p}`, { authorization: `Bearer ${f.jwt}` })))
      await Bun.sleep(100)
      const open = sockets.filter((c) => c.opened && c.ws.readyState === WebSocket.OPEN)
      if (open.length > FLOOD_SOCKETS_PER_USER) throw new Error(`${what}: ${open.length} sockets open, at most ${FLOOD_SOCKETS_PER_USER} allowed`)
      const closedByServer = sockets.filter((c) => c.opened && c.end() !== undefined && c.end() !== 1013)
      if (closedByServer.length > 0) throw new Error(`${what}: a socket past the count closed with ${closedByServer[0]!.end()} instead of 1013`)
      stats.refused += sockets.length - open.length
      for (const c of sockets) c.ws.close()
    }
    await answeredPromptly(what)
    await allClosed()
    Bun.gc(true)
    const retained = Math.round((process.memoryUsage().rss - memoryBefore) / 2 ** 20)
    stats.retainedMiB = Math.max(stats.retainedMiB, retained)
    if (retained > FLOOD_MEMORY_MIB) throw new Error(`${what}: the process stays ${retained} MiB larger (at most ${FLOOD_MEMORY_MIB})`)
  }

  try {
    await fc.assert(fc.asyncProperty(floodRound(), round), { seed, numRuns: runs, endOnFailure: true })
    // the rounds ran searches of nobody (parse only) and changed nothing kept
    await f.s.searches.settled()
    const storeAfter = await storeSnapshotAsync(f.s)
    if (JSON.stringify(storeAfter) !== storeBefore) throw new Error(`the socket floods changed the store: ${storeChanges(JSON.parse(storeBefore), storeAfter)}`)
  } catch (e) {
    const cause = (e as Error).cause instanceof Error ? `\n${((e as Error).cause as Error).message}` : ''
    throw new Error(`socket floods failed; reproduce with QUARRY_FUZZ_SEED=${seed}${cause}\n${(e as Error).message}`)
  } finally {
    clearInterval(sampler)
  }
  stats.peakMiB = Math.round((peak - memoryBefore) / 2 ** 20)
  return stats
}
