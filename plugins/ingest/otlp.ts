// OTLP/HTTP logs: POST /api/ingest/otlp/v1/logs, where an OpenTelemetry Collector's `otlphttp` exporter with
// `endpoint: https://quarry.example.com/api/ingest/otlp` sends (it appends /v1/logs), and the SDKs' OTLP log exporters
// with that whole URL. Protobuf (application/x-protobuf) or JSON (application/json), gzip or not; each log record one
// entry (server/ingest/otlp.ts), stored through the ingest sink as one batch, durably, before the answer.
// Answers as the OTLP specification says, in the request's encoding: ExportLogsServiceResponse (with partial_success
// when records were rejected), and for refusals a google.rpc.Status (400 undecodable, 413 too many records or too
// large once decompressed, 429 and 503 with Retry-After, 507), whose JSON form also carries the API's `Error`.
import { Elysia } from 'elysia'
import type { Server } from 'bun'
import { Errors } from '../../server/http/errors'
import type { Config } from '../../server/runtime/config'
import { type IngestSink, IngestRefused, type IngestSource, type RefusalReason } from '../../server/ingest/sink'
import { type OtlpEncoding, TooManyRecords, UndecodableRequest, decodeOtlpLogs, exportResponse, statusBody } from '../../server/ingest/otlp'
import { DecompressionRefused, decodeContentEncoding } from '../../server/ingest/snappy'
import { authGuard } from '../auth/guard'
import type { AuthService } from '../auth/service'
import { area } from '../../server/http/openapi'

export const OTLP_SOURCE: IngestSource = { listener: 'http', protocol: 'otlp' }

export interface ShipperIngestDeps {
  auth: AuthService
  clock: () => number
  sink: IngestSink
  config: Pick<Config, 'otlpTagAttribute' | 'otlpDefaultTag' | 'lokiTagLabel' | 'lokiDefaultTag' | 'ingestMaxDecompressedBytes' | 'ingestMaxRecords'>
  /** The client's address (server/http/client-address.ts): each entry's SRC. */
  clientOf: (server: Server<unknown> | null | undefined, request: Request) => string
}

/** The request's encoding by its Content-Type, or undefined for a type the protocol does not have. */
export function encodingOf(request: Request): OtlpEncoding | undefined {
  const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
  return type === 'application/x-protobuf' ? 'protobuf' : type === 'application/json' ? 'json' : undefined
}

/** A refusal made while reading a shipper's body: its status, its reason for the metrics, its message. */
export class ShipperRefusal extends Error {
  constructor(
    readonly status: number,
    readonly reason: RefusalReason,
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message)
  }
}

/** What went wrong decoding or storing, as a ShipperRefusal (counted by the sink for its own refusals); else rethrown. */
export function shipperRefusal(e: unknown, sink: IngestSink, source: IngestSource): ShipperRefusal {
  if (e instanceof ShipperRefusal) return e
  if (e instanceof IngestRefused) return new ShipperRefusal(e.error.status, e.reason, e.error.message, e.retryAfterMs)
  let refusal: ShipperRefusal | undefined
  if (e instanceof UndecodableRequest) refusal = new ShipperRefusal(400, 'invalid', e.message)
  else if (e instanceof TooManyRecords) refusal = new ShipperRefusal(413, 'too-large', e.message)
  else if (e instanceof DecompressionRefused) refusal = new ShipperRefusal(e.reason === 'too-large' ? 413 : 400, e.reason, e.message)
  if (!refusal) throw e
  sink.refused(source, refusal.reason)
  return refusal
}

/** google.rpc.Code of an HTTP refusal (OTLP does not ask clients to read it; it is there for people). */
const RPC_CODES: Record<number, number> = { 400: 3, 413: 8, 429: 8, 503: 14, 507: 8 }

const binary = { schema: { type: 'string', format: 'binary' } }
const both = (description: string) => ({
  description,
  content: {
    'application/json': { schema: { $ref: '#/components/schemas/Error' } },
    'application/x-protobuf': binary,
  },
})

export function otlpPlugin({ auth, clock, sink, config, clientOf }: ShipperIngestDeps) {
  const opts = { tagAttribute: config.otlpTagAttribute, defaultTag: config.otlpDefaultTag, maxRecords: config.ingestMaxRecords }
  return new Elysia({ name: 'quarry-ingest-otlp', detail: area('Ingest') })
    .use(authGuard(auth))
    .post(
      '/api/ingest/otlp/v1/logs',
      async ({ body, request, server, caller, set }) => {
        const encoding = encodingOf(request)
        if (!encoding) {
          sink.refused(OTLP_SOURCE, 'invalid')
          throw Errors.unsupportedMediaType('OTLP logs are sent as application/x-protobuf or application/json')
        }
        const answer = (status: number, payload: Uint8Array | string) => {
          set.status = status
          set.headers['content-type'] = encoding === 'json' ? 'application/json' : 'application/x-protobuf'
          return typeof payload === 'string' ? payload : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength)
        }
        try {
          const bytes = decodeContentEncoding(body as Uint8Array, request.headers.get('content-encoding'), config.ingestMaxDecompressedBytes)
          const decoded = decodeOtlpLogs(bytes, encoding, opts, clock())
          const src = clientOf(server, request)
          for (const e of decoded.entries) e.src = src
          if (decoded.rejected > 0) sink.refused(OTLP_SOURCE, 'invalid', decoded.rejected)
          if (decoded.entries.length > 0) await sink.store(decoded.entries, caller, OTLP_SOURCE)
          const message = decoded.rejected > 0 ? `${decoded.rejected} log records rejected: ${decoded.problems.join('; ')}` : ''
          return answer(200, exportResponse(encoding, decoded.rejected, message))
        } catch (e) {
          const refusal = shipperRefusal(e, sink, OTLP_SOURCE)
          if (refusal.retryAfterMs !== undefined) set.headers['retry-after'] = String(Math.ceil(refusal.retryAfterMs / 1000))
          const code = RPC_CODES[refusal.status] ?? 2
          if (encoding === 'json') return answer(refusal.status, JSON.stringify({ code, message: refusal.message, Error: refusal.message }))
          return answer(refusal.status, statusBody(encoding, code, refusal.message))
        }
      },
      {
        access: { key: 'Ingest', shipper: true },
        detail: {
          summary: 'Ingest OpenTelemetry logs (OTLP/HTTP)',
          description:
            'An OTLP ExportLogsServiceRequest, as `application/x-protobuf` or `application/json` (the OTLP JSON mapping), optionally with `Content-Encoding: gzip`. ' +
            'The Collector\'s `otlphttp` exporter is given `.../api/ingest/otlp` (it appends `/v1/logs`). Each log record becomes an entry whose data is a JSON document ' +
            '(body, severityText, severityNumber, attributes, resource, scope, traceId, spanId), whose time is timeUnixNano (else observedTimeUnixNano, else the time of receipt) ' +
            'and whose tag is the resource attribute QUARRY_OTLP_TAG_ATTRIBUTE (service.name), else QUARRY_OTLP_DEFAULT_TAG. ' +
            'The answer is an ExportLogsServiceResponse in the request\'s encoding, with partialSuccess when some records were rejected (the others are stored); ' +
            'refusals carry a google.rpc.Status in the request\'s encoding (its JSON form also has `Error`).',
          responses: {
            200: { description: 'ExportLogsServiceResponse (protobuf or JSON, as the request)', content: { 'application/json': { schema: { type: 'object' } }, 'application/x-protobuf': binary } },
            400: both('The body is no ExportLogsServiceRequest of its type, or is not valid gzip (google.rpc.Status)'),
            413: both('The body is over QUARRY_MAX_BODY_SIZE, decompresses past QUARRY_INGEST_MAX_DECOMPRESSED, or holds more than QUARRY_INGEST_MAX_RECORDS records, or the owner\'s quota or QUARRY_MAX_TAGS would be passed'),
            429: both('The owner\'s ingest rate is passed (QUARRY_INGEST_RATE); Retry-After says when to retry'),
            503: both('Too much ingest is being stored at once (QUARRY_INGEST_MAX_PENDING); Retry-After says when to retry'),
            507: both('The server\'s disk is nearly full (QUARRY_MIN_FREE_SPACE)'),
          },
        } as Record<string, unknown>,
      },
    )
}
