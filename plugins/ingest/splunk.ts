// Splunk HTTP Event Collector under /api/ingest/splunk, the base URL a HEC client is given: events at
// `/services/collector/event` (also `/services/collector` and `/event/1.0`), lines at `/services/collector/raw` (also
// `/raw/1.0`), and the health check at `/services/collector/health` (also `/health/1.0`), which needs no credential and
// says nothing but that HEC is up. server/ingest/hec.ts says what becomes of each event and line.
// Every answer is Splunk's `{"text", "code"}` with the status Splunk gives it: 0 Success; 2 token required (401);
// 4 invalid token (403: a wrong token, one of a locked owner, or one without Ingest); 5 no data and 6 invalid data
// format (400, with `invalid-event-number` for a bad event: the events before it are stored, as Splunk does);
// 9 server busy (503, and 429 for the ingest rate, both with Retry-After; 507 at the free-space floor).
// The token comes as `Authorization: Splunk <token>` (or the other shipper forms). Splunk also takes it as `?token=`;
// that is not accepted here: a secret in a URL ends up in proxies' and servers' access logs.
import { Elysia, t } from 'elysia'
import { type IngestSink, IngestRefused, type IngestSource } from '../../server/ingest/sink'
import { BodyRefused, readShipperBody } from '../../server/ingest/elastic-hec-body'
import { HEC, type HecAnswer, type HecOptions, HecRefused, parseHecEvents, parseHecRaw } from '../../server/ingest/hec'
import type { NewEntry } from '../../server/search/entries'
import type { Config } from '../../server/runtime/config'
import { ownBody } from '../../server/http/body'
import { JSON_TYPE } from '../../server/http/wire'
import { area } from '../../server/http/openapi'
import { authGuard } from '../auth/guard'
import type { AuthService } from '../auth/service'

const EVENT_SOURCE: IngestSource = { listener: 'http', protocol: 'hec' }
const RAW_SOURCE: IngestSource = { listener: 'http', protocol: 'hec-raw' }
const BASE = '/api/ingest/splunk/services/collector'

const HecBody = t.Object(
  {
    text: t.String({ description: 'Splunk\'s text for the code, or what is wrong' }),
    code: t.Integer({ description: 'Splunk\'s HEC status code: 0 success, 2 token required, 4 invalid token, 5 no data, 6 invalid data format, 8 internal error, 9 server busy, 12 event required, 13 event blank, 17 healthy' }),
    'invalid-event-number': t.Optional(t.Integer({ description: 'the 0-based number of the first bad event; those before it were stored' })),
  },
  { description: 'A HEC answer' },
)

const HEC_ANSWERS = { 200: HecBody, 400: HecBody, 401: HecBody, 403: HecBody, 413: HecBody, 415: HecBody, 429: HecBody, 500: HecBody, 503: HecBody, 507: HecBody }

/** The `/1.0` that HEC clients may append to each path (the only version of the protocol). */
const VersionParams = t.Object({ version: t.Literal('1.0', { description: 'the protocol version: 1.0' }) })

const HecQuery = t.Object({
  channel: t.Optional(t.String({ description: 'the HEC data channel (accepted; no acknowledgements are kept)' })),
  sourcetype: t.Optional(t.String({ description: 'the sourcetype of events that name none (raw: of every line)' })),
  index: t.Optional(t.String({ description: 'the index of events that name none (raw: of every line)' })),
  host: t.Optional(t.String({ description: 'the host of events that name none (raw: of every line); an IP address becomes SRC' })),
  source: t.Optional(t.String({ description: 'accepted and not kept' })),
})

function hecAnswer(status: number, body: HecAnswer, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': JSON_TYPE, ...headers } })
}

/** The HEC answer of a refusal of the catalogue (made before the handler ran, or by the sink), by its status. */
function hecOf(status: number, message: string, request: Request): HecAnswer {
  if (status === 401) return request.headers.has('authorization') || request.headers.has('service-token') ? HEC.invalidToken : HEC.tokenRequired
  if (status === 403) return { text: `${HEC.invalidToken.text}: ${message}`, code: HEC.invalidToken.code }
  if (status === 429 || status === 503 || status === 507) return { text: `${HEC.busy.text}: ${message}`, code: HEC.busy.code }
  if (status >= 500) return HEC.internal
  return { text: message, code: HEC.invalidFormat.code }
}

export interface SplunkDeps {
  auth: AuthService
  clock: () => number
  sink: IngestSink
  config: Pick<Config, 'maxBodyBytes' | 'ingestMaxDecompressedBytes' | 'hecMaxEvents' | 'hecDefaultTag'>
  /** The sender's address (the entries' SRC unless an event's host is an IP address). */
  clientOf: (request: Request) => string
  /** The time found in a raw line (server/ingest/timestamps.ts), undefined when none: the time of receipt is used. */
  timeOf: (line: Uint8Array, receivedAt: number) => number | undefined
}

type Query = typeof HecQuery.static

export function splunkPlugin({ auth, clock, sink, config, clientOf, timeOf }: SplunkDeps) {
  const limits = { maxBytes: config.maxBodyBytes, maxInflatedBytes: config.ingestMaxDecompressedBytes }
  const optionsOf = (request: Request, query: Query): HecOptions => ({
    sourcetype: query.sourcetype || undefined,
    index: query.index || undefined,
    host: query.host || undefined,
    defaultTag: config.hecDefaultTag,
    now: clock(),
    src: clientOf(request),
    maxEvents: config.hecMaxEvents,
  })

  /** Reads and parses the body, stores what it yields; answers the HEC answer. */
  const ingest = async (source: IngestSource, request: Request, caller: Parameters<IngestSink['store']>[1], parse: (body: Uint8Array) => { entries: NewEntry[]; bad?: HecAnswer }): Promise<Response> => {
    let parsed: { entries: NewEntry[]; bad?: HecAnswer }
    try {
      parsed = parse(await readShipperBody(request, limits))
    } catch (e) {
      if (e instanceof BodyRefused) {
        sink.refused(source, e.reason)
        return hecAnswer(e.status, { text: e.message, code: HEC.invalidFormat.code })
      }
      if (e instanceof HecRefused) {
        sink.refused(source, e.status === 413 ? 'too-large' : 'invalid')
        return hecAnswer(e.status, e.answer)
      }
      throw e
    }
    if (parsed.entries.length > 0) {
      try {
        await sink.store(parsed.entries, caller, source)
      } catch (e) {
        if (!(e instanceof IngestRefused)) throw e
        const headers: Record<string, string> = e.retryAfterMs === undefined ? {} : { 'retry-after': String(Math.ceil(e.retryAfterMs / 1000)) }
        return hecAnswer(e.error.status, hecOf(e.error.status, e.message, request), headers)
      }
    }
    if (parsed.bad) {
      sink.refused(source, 'invalid')
      return hecAnswer(400, parsed.bad)
    }
    return hecAnswer(200, HEC.success)
  }

  const events = ({ request, caller, query }: { request: Request; caller: Parameters<IngestSink['store']>[1]; query: Query }) =>
    ingest(EVENT_SOURCE, request, caller, (body) => parseHecEvents(body, optionsOf(request, query)))
  const raw = ({ request, caller, query }: { request: Request; caller: Parameters<IngestSink['store']>[1]; query: Query }) =>
    ingest(RAW_SOURCE, request, caller, (body) => ({ entries: parseHecRaw(body, { ...optionsOf(request, query), timeOf }) }))

  const eventRoute = (summary: string) => ({
    access: { key: 'Ingest', shipper: true } as const,
    parse: ownBody(),
    query: HecQuery,
    response: HEC_ANSWERS,
    detail: { summary, description: EVENT_DESCRIPTION },
  })
  const rawRoute = (summary: string) => ({
    access: { key: 'Ingest', shipper: true } as const,
    parse: ownBody(),
    query: HecQuery,
    response: HEC_ANSWERS,
    detail: { summary, description: RAW_DESCRIPTION },
  })
  const healthRoute = {
    response: { 200: HecBody, 400: HecBody, 500: HecBody, 503: HecBody },
    detail: { summary: 'Splunk HEC health check', description: 'Public: `{"text":"HEC is healthy","code":17}`, nothing more.' },
  }
  const health = () => hecAnswer(200, HEC.healthy)

  return new Elysia({ name: 'quarry-ingest-splunk', prefix: BASE, detail: area('Ingest') })
    .use(authGuard(auth))
    .mapResponse(({ response, set, request }) => {
      // Refusals made before a handler ran (401, 403, 413 of the body gate, 400 of the query) come as the catalogue's
      // {"Error"}: put them in HEC's shape, and count the credentials refused.
      if (response instanceof Response || response === null || typeof response !== 'object' || !('Error' in response)) return
      const status = typeof set.status === 'number' ? set.status : 500
      if (status === 401 || status === 403) sink.refused(new URL(request.url).pathname.includes('/raw') ? RAW_SOURCE : EVENT_SOURCE, 'auth')
      const answer = hecOf(status, String((response as { Error: unknown }).Error), request)
      const headers: Record<string, string> = {}
      for (const [k, v] of Object.entries(set.headers)) if (k !== 'content-type' && v !== undefined) headers[k] = String(v)
      // Splunk answers an invalid token 403 (the catalogue says 401: no valid credential).
      return hecAnswer(status === 401 && answer.code === HEC.invalidToken.code ? 403 : status, answer, headers)
    })
    .post('', events, eventRoute('Splunk HEC events'))
    .post('/event', events, eventRoute('Splunk HEC events'))
    .post('/event/:version', events, { ...eventRoute('Splunk HEC events'), params: VersionParams })
    .post('/raw', raw, rawRoute('Splunk HEC raw lines'))
    .post('/raw/:version', raw, { ...rawRoute('Splunk HEC raw lines'), params: VersionParams })
    .get('/health', health, healthRoute)
    .get('/health/:version', health, { ...healthRoute, params: VersionParams })
}

const EVENT_DESCRIPTION =
  'JSON event objects one after another (not an array), gzip with `Content-Encoding: gzip`. Each event is one entry: data = `event` (a string as is, else its JSON), time = `time` (epoch seconds), else receipt, tag = `sourcetype`, else `index`, else `QUARRY_HEC_DEFAULT_TAG`; SRC = `host` when it is an IP address, else the sender\'s. Query parameters give what events name none of. The first bad event ends the request as in Splunk: those before it are stored, the answer (400, code 6, 12 or 13) names its number. `Authorization: Splunk <token>`; `?token=` is not accepted (secrets in URLs reach access logs).'
const RAW_DESCRIPTION =
  'Lines (LF or CRLF; empty lines skipped), one entry each, gzip with `Content-Encoding: gzip`: time found in the line, else receipt; tag = `?sourcetype=`, else `?index=`, else `QUARRY_HEC_DEFAULT_TAG`; SRC = `?host=` when it is an IP address, else the sender\'s. All lines are stored or none.'
