// Elasticsearch bulk ingest under /api/ingest/elastic, the base URL a Beat, Logstash, Vector or an Elasticsearch client
// is given: `POST /_bulk` and `POST /{index}/_bulk` (server/ingest/elastic.ts says what becomes of each document), and
// what those clients ask before they send: `GET /` and `HEAD /` (the version handshake) and `GET /_license`.
// Every answer, refusals included, is in Elasticsearch's shape and carries `X-Elastic-Product: Elasticsearch`, which
// the Elasticsearch clients (8.x and later) require of every answer before they read it.
// The bulk answer has a status per document, so that clients retry only what failed: 201 stored; 400 a bad document
// (not stored, not worth a retry); 429 every good document when the sink refused the batch for the ingest rate or
// because too much is being stored at once (nothing stored; the clients retry those). A request refused whole (not
// NDJSON actions, over a limit, over the quota or the free-space floor) stores nothing.
import { Elysia, t } from 'elysia'
import { type IngestSink, IngestRefused, type IngestSource } from '../../server/ingest/sink'
import { BodyRefused, readShipperBody } from '../../server/ingest/elastic-hec-body'
import { type BulkItem, BulkRefused, parseBulk } from '../../server/ingest/elastic'
import type { Config } from '../../server/runtime/config'
import { ownBody } from '../../server/http/body'
import { JSON_TYPE } from '../../server/http/wire'
import { area, rawAnswer } from '../../server/http/openapi'
import { authGuard } from '../auth/guard'
import type { AuthService } from '../auth/service'

const SOURCE: IngestSource = { listener: 'http', protocol: 'elastic' }
const BASE = '/api/ingest/elastic'

/** The Elasticsearch version announced: the 8.x bulk API is what is served, and 8.x Beats and clients accept it. */
export const ES_VERSION = '8.19.0'

const EsErrorBody = t.Object(
  {
    error: t.Object({
      root_cause: t.Array(t.Object({ type: t.String(), reason: t.String() })),
      type: t.String({ description: 'the kind of error, as Elasticsearch names it' }),
      reason: t.String({ description: 'what is wrong, and which bound when one is passed' }),
    }),
    status: t.Integer(),
  },
  { description: 'A refusal, in Elasticsearch\'s shape' },
)

const BulkItemBody = t.Object({
  _index: t.Optional(t.String()),
  _id: t.Optional(t.String()),
  _version: t.Optional(t.Integer()),
  result: t.Optional(t.Literal('created')),
  _seq_no: t.Optional(t.Integer()),
  status: t.Optional(t.Integer({ description: '201 stored, 400 refused (see error), 429 refused for now: send it again later' })),
  error: t.Optional(t.Object({ type: t.String(), reason: t.String() })),
})

// Every member is optional: `?filter_path=` keeps only some (filterPath).
const BulkAnswer = t.Object({
  took: t.Optional(t.Integer({ description: 'milliseconds' })),
  errors: t.Optional(t.Boolean({ description: 'whether any item failed' })),
  items: t.Optional(t.Array(
    t.Object({
      index: t.Optional(BulkItemBody),
      create: t.Optional(BulkItemBody),
      update: t.Optional(BulkItemBody),
      delete: t.Optional(BulkItemBody),
    }),
  )),
})

const InfoAnswer = t.Object({
  name: t.String(),
  cluster_name: t.String(),
  cluster_uuid: t.String(),
  version: t.Object({
    number: t.String(),
    build_flavor: t.String(),
    build_type: t.String(),
    build_hash: t.String(),
    build_date: t.String(),
    build_snapshot: t.Boolean(),
    lucene_version: t.String(),
    minimum_wire_compatibility_version: t.String(),
    minimum_index_compatibility_version: t.String(),
  }),
  tagline: t.String(),
})

const LicenseAnswer = t.Object({
  license: t.Object({ status: t.String(), uid: t.String(), type: t.String(), issue_date_in_millis: t.Integer(), issued_to: t.String(), issuer: t.String() }),
})

const ES_REFUSALS = { 400: EsErrorBody, 401: EsErrorBody, 403: EsErrorBody, 413: EsErrorBody, 415: EsErrorBody, 500: EsErrorBody, 503: EsErrorBody, 507: EsErrorBody }

const HEADERS = { 'content-type': JSON_TYPE, 'x-elastic-product': 'Elasticsearch' }

function esAnswer(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...HEADERS, ...headers } })
}

/** An Elasticsearch error answer. */
function esError(status: number, type: string, reason: string, headers: Record<string, string> = {}): Response {
  return esAnswer(status, { error: { root_cause: [{ type, reason }], type, reason }, status }, headers)
}

/** The Elasticsearch error type of a refusal of the catalogue, by its status. */
const ERROR_TYPES: Record<number, string> = {
  401: 'security_exception',
  403: 'security_exception',
  413: 'illegal_argument_exception',
  429: 'es_rejected_execution_exception',
  503: 'es_rejected_execution_exception',
  507: 'cluster_block_exception',
}

export interface ElasticDeps {
  auth: AuthService
  clock: () => number
  sink: IngestSink
  config: Pick<Config, 'maxBodyBytes' | 'ingestMaxDecompressedBytes' | 'esMaxDocs'>
  /** The sender's address (the entries' SRC). */
  clientOf: (request: Request) => string
}

export function elasticPlugin({ auth, clock, sink, config, clientOf }: ElasticDeps) {
  const limits = { maxBytes: config.maxBodyBytes, maxInflatedBytes: config.ingestMaxDecompressedBytes }
  const clusterUuid = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('base64url')
  const started = new Date(clock()).toISOString()
  const info = {
    name: 'quarry',
    cluster_name: 'quarry',
    cluster_uuid: clusterUuid,
    version: {
      number: ES_VERSION,
      build_flavor: 'default',
      build_type: 'quarry',
      build_hash: 'quarry',
      build_date: started,
      build_snapshot: false,
      lucene_version: '9.12.2',
      minimum_wire_compatibility_version: '7.17.0',
      minimum_index_compatibility_version: '7.0.0',
    },
    tagline: 'You Know, for Search',
  }
  const license = { license: { status: 'active', uid: clusterUuid, type: 'basic', issue_date_in_millis: Date.parse(started), issued_to: 'quarry', issuer: 'quarry' } }

  const bulk = async (request: Request, caller: Parameters<IngestSink['store']>[1], pathIndex: string | undefined): Promise<Response> => {
    const started = performance.now()
    let body: Uint8Array
    try {
      body = await readShipperBody(request, limits)
    } catch (e) {
      if (!(e instanceof BodyRefused)) throw e
      sink.refused(SOURCE, e.reason)
      return esError(e.status, e.status === 413 ? 'illegal_argument_exception' : 'parse_exception', e.message)
    }
    const filter = filterPath(new URL(request.url).searchParams.get('filter_path'))
    let parsed: ReturnType<typeof parseBulk>
    try {
      parsed = parseBulk(body, { pathIndex, now: clock(), src: clientOf(request), maxDocs: config.esMaxDocs, ids: filter.has('_id') })
    } catch (e) {
      if (!(e instanceof BulkRefused)) throw e
      sink.refused(SOURCE, e.status === 413 ? 'too-large' : 'invalid')
      return esError(e.status, e.type, e.message)
    }
    if (parsed.items.length === 0) {
      sink.refused(SOURCE, 'invalid')
      return esError(400, 'action_request_validation_exception', 'Validation Failed: 1: no requests added;')
    }
    const bad = parsed.items.length - parsed.entries.length
    if (bad > 0) sink.refused(SOURCE, 'invalid', bad)
    const headers: Record<string, string> = {}
    if (parsed.entries.length > 0) {
      try {
        await sink.store(parsed.entries, caller, SOURCE)
      } catch (e) {
        if (!(e instanceof IngestRefused)) throw e
        if (e.reason !== 'rate' && e.reason !== 'busy') return esError(e.error.status, ERROR_TYPES[e.error.status] ?? 'illegal_argument_exception', e.message)
        // Retryable: each good document is answered 429, which the clients send again; the bad ones stay 400.
        for (const i of parsed.itemOf) {
          const item = parsed.items[i]!
          item.status = 429
          item.error = { type: 'es_rejected_execution_exception', reason: e.message }
        }
        if (e.retryAfterMs !== undefined) headers['retry-after'] = String(Math.ceil(e.retryAfterMs / 1000))
      }
    }
    const errors = parsed.items.some((i) => i.status !== 201)
    const members = [
      filter.has('took') ? `"took":${Math.round(performance.now() - started)}` : '',
      filter.has('errors') ? `"errors":${errors}` : '',
      filter.has('items') ? `"items":${bulkItemsJson(parsed.items, filter)}` : '',
    ]
    return new Response(`{${members.filter(Boolean).join(',')}}`, { status: 200, headers: { ...HEADERS, ...headers } })
  }

  const bulkDetail = (summary: string, description: string) => ({
    access: { key: 'Ingest', shipper: true } as const,
    parse: ownBody(),
    response: ES_REFUSALS,
    detail: { summary, description, ...rawAnswer(BulkAnswer) },
  })

  return new Elysia({ name: 'quarry-ingest-elastic', prefix: BASE, detail: area('Ingest') })
    .use(authGuard(auth))
    .mapResponse(({ response, set }) => {
      // Refusals made before a handler ran (401, 403, 413 of the body gate) come as the catalogue's {"Error"}: put
      // them in Elasticsearch's shape, and count the credentials refused.
      if (response instanceof Response || response === null || typeof response !== 'object' || !('Error' in response)) return
      const status = typeof set.status === 'number' ? set.status : 500
      if (status === 401 || status === 403) sink.refused(SOURCE, 'auth')
      const headers: Record<string, string> = {}
      for (const [k, v] of Object.entries(set.headers)) if (k !== 'content-type' && v !== undefined) headers[k] = String(v)
      return esError(status, ERROR_TYPES[status] ?? (status >= 500 ? 'exception' : 'illegal_argument_exception'), String((response as { Error: unknown }).Error), headers)
    })
    .get('', () => esAnswer(200, info), {
      access: { key: 'Ingest', shipper: true },
      response: ES_REFUSALS,
      detail: {
        summary: 'Elasticsearch version handshake',
        description: `What Elasticsearch clients and Beats ask first: the version of the bulk API served (${ES_VERSION}). HEAD answers the same without a body (the clients' ping).`,
        ...rawAnswer(InfoAnswer),
      },
    })
    .head('', () => new Response(null, { status: 200, headers: HEADERS }), {
      access: { key: 'Ingest', shipper: true },
      response: ES_REFUSALS,
      detail: { summary: 'Elasticsearch ping', description: 'The clients\' ping: 200 without a body.' },
    })
    .get('/_license', () => esAnswer(200, license), {
      access: { key: 'Ingest', shipper: true },
      response: ES_REFUSALS,
      detail: { summary: 'Elasticsearch license', description: 'What Logstash and Beats check before they send: a basic license, active.', ...rawAnswer(LicenseAnswer) },
    })
    .post('/_bulk', ({ request, caller }) => bulk(request, caller, undefined), bulkDetail('Elasticsearch bulk ingest', BULK_DESCRIPTION))
    .post('/:index/_bulk', ({ request, caller, params }) => bulk(request, caller, params.index), {
      ...bulkDetail('Elasticsearch bulk ingest into an index', `${BULK_DESCRIPTION} Actions that name no \`_index\` take the path's.`),
      params: t.Object({ index: t.String({ description: 'the index (tag) of actions that name none' }) }),
    })
}

const BULK_DESCRIPTION =
  'NDJSON action and document lines as Elasticsearch takes them (gzip with `Content-Encoding: gzip`). Each document of an `index` or `create` action is one entry: data = the document line, tag = its index made a valid tag, time = its `@timestamp` (a date or epoch milliseconds), else receipt. `update` and `delete` are answered 400 per item (entries are never changed). Good documents are stored, bad ones answered 400 per item; 429 per item when the ingest rate or the server\'s back-pressure refuses the batch (nothing stored; send those again). `?filter_path=` keeps only the members named, in the forms shippers send (`errors,items.*.error,items.*.status`). Not actions at all, over `QUARRY_ES_MAX_DOCS`, over the body or inflated size, the quota or the free-space floor: refused whole, nothing stored.'

/**
 * The items of the bulk answer as JSON text, written out rather than built as objects and serialised: at a thousand
 * documents a request, building and serialising the objects cost as much as parsing the documents.
 */
const ITEM_MEMBERS = ['_index', '_id', '_version', 'result', '_seq_no', 'status', 'error'] as const
const ALL = new Set<string>(['took', 'errors', 'items', ...ITEM_MEMBERS])

/**
 * What `?filter_path=` keeps of the bulk answer, as Elasticsearch reads it for the forms shippers send (Beats and
 * Logstash: `errors,items.*.error,items.*.status`): `took`, `errors`, `items`, `items.*.<member>`, `items.*.*`.
 * Any other form keeps everything (a client asking for more than it reads loses nothing).
 */
export function filterPath(raw: string | null): Set<string> {
  if (raw === null || raw.trim() === '') return ALL
  const keep = new Set<string>()
  for (const part of raw.split(',').map((p) => p.trim())) {
    const m = /^items\.\*\.(\*|[_a-z]+)$/.exec(part)
    if (part === 'took' || part === 'errors') keep.add(part)
    else if (part === 'items' || part === 'items.*' || m?.[1] === '*') for (const k of ['items', ...ITEM_MEMBERS]) keep.add(k)
    else if (m && (ITEM_MEMBERS as readonly string[]).includes(m[1]!)) keep.add('items').add(m[1]!)
    else return ALL
  }
  return keep
}

function bulkItemsJson(items: BulkItem[], keep: Set<string>): string {
  const quoted = new Map<string, string>()
  const q = (s: string) => {
    let v = quoted.get(s)
    if (v === undefined) quoted.set(s, (v = JSON.stringify(s)))
    return v
  }
  const parts: string[] = []
  let seq = 0
  const all = ITEM_MEMBERS.every((m) => keep.has(m))
  // A created item's text varies only with its index, id and sequence number: without those it is made once per action.
  const same = !keep.has('_index') && !keep.has('_id') && !keep.has('_seq_no')
  const created = new Map<string, string>()
  for (const item of items) {
    if (all) {
      const head = `{"${item.action}":{"_index":${q(item.index)},"_id":${JSON.stringify(item.id)},`
      parts.push(
        item.error
          ? `${head}"status":${item.status},"error":${JSON.stringify(item.error)}}}`
          : `${head}"_version":1,"result":"created","_seq_no":${seq++},"status":201}}`,
      )
      continue
    }
    if (same && !item.error) {
      const key = `${item.action} ${item.status}`
      let text = created.get(key)
      if (text === undefined) {
        const members = [keep.has('_version') ? '"_version":1' : '', keep.has('result') ? '"result":"created"' : '', keep.has('status') ? `"status":${item.status}` : '']
        created.set(key, (text = `{"${item.action}":{${members.filter(Boolean).join(',')}}}`))
      }
      parts.push(text)
      seq++
      continue
    }
    const members: string[] = []
    if (keep.has('_index')) members.push(`"_index":${q(item.index)}`)
    if (keep.has('_id')) members.push(`"_id":${JSON.stringify(item.id)}`)
    if (!item.error) {
      if (keep.has('_version')) members.push('"_version":1')
      if (keep.has('result')) members.push('"result":"created"')
      if (keep.has('_seq_no')) members.push(`"_seq_no":${seq}`)
      seq++
    }
    if (keep.has('status')) members.push(`"status":${item.status}`)
    if (item.error && keep.has('error')) members.push(`"error":${JSON.stringify(item.error)}`)
    // Elasticsearch leaves out an item that keeps no member; an empty object keeps the items in request order
    parts.push(`{"${item.action}":{${members.join(',')}}}`)
  }
  return `[${parts.join(',')}]`
}
