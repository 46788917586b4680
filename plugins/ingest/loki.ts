// Loki push: POST /api/ingest/loki/api/v1/push, the URL Promtail's and Alloy's `clients`/`endpoint` url is given
// (`https://quarry.example.com/api/ingest/loki/api/v1/push`). JSON (application/json), or protobuf PushRequest
// compressed with snappy (application/x-protobuf, as Promtail and Alloy send it); Content-Encoding gzip or deflate
// also, as Loki takes them. Each line one entry (server/ingest/loki.ts), stored through the ingest sink as one batch,
// durably, before the answer: 204 as Loki answers. Entries that cannot be stored are left out and the others stored;
// then the answer is 400 naming what was left out (as Loki does: a shipper does not retry a 400, and what was
// stored must not come twice). Other refusals: 400 (undecodable), 413, 415, 429 and 503 with Retry-After, 507.
import { Elysia } from 'elysia'
import { Errors } from '../../server/http/errors'
import type { IngestSource } from '../../server/ingest/sink'
import { decodeLokiPush } from '../../server/ingest/loki'
import { decodeContentEncoding, snappyUncompress } from '../../server/ingest/snappy'
import { authGuard } from '../auth/guard'
import { area } from '../../server/http/openapi'
import { type ShipperIngestDeps, encodingOf, shipperRefusal } from './otlp'

const refusal = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } })

export const LOKI_SOURCE: IngestSource = { listener: 'http', protocol: 'loki' }

export function lokiPlugin({ auth, clock, sink, config, clientOf }: ShipperIngestDeps) {
  const opts = { tagLabel: config.lokiTagLabel, defaultTag: config.lokiDefaultTag, maxRecords: config.ingestMaxRecords }
  return new Elysia({ name: 'quarry-ingest-loki', detail: area('Ingest') })
    .use(authGuard(auth))
    .post(
      '/api/ingest/loki/api/v1/push',
      async ({ body, request, server, caller, set }) => {
        const encoding = encodingOf(request)
        if (!encoding) {
          sink.refused(LOKI_SOURCE, 'invalid')
          throw Errors.unsupportedMediaType('Loki pushes are sent as application/x-protobuf (snappy-compressed) or application/json')
        }
        let message: string | undefined
        try {
          const max = config.ingestMaxDecompressedBytes
          let bytes = decodeContentEncoding(body as Uint8Array, request.headers.get('content-encoding'), max)
          if (encoding === 'protobuf') bytes = snappyUncompress(bytes, max)
          const decoded = decodeLokiPush(bytes, encoding, opts, clock())
          const src = clientOf(server, request)
          for (const e of decoded.entries) e.src = src
          if (decoded.rejected > 0) sink.refused(LOKI_SOURCE, 'invalid', decoded.rejected)
          if (decoded.entries.length > 0) await sink.store(decoded.entries, caller, LOKI_SOURCE)
          if (decoded.rejected > 0)
            message = `${decoded.rejected} entries rejected, ${decoded.entries.length} stored: ${decoded.problems.join('; ')}`
        } catch (e) {
          const refusal = shipperRefusal(e, sink, LOKI_SOURCE)
          if (refusal.retryAfterMs !== undefined) set.headers['retry-after'] = String(Math.ceil(refusal.retryAfterMs / 1000))
          set.status = refusal.status
          return { Error: refusal.message }
        }
        if (message !== undefined) {
          set.status = 400
          return { Error: message }
        }
        set.status = 204
        return undefined
      },
      {
        access: { key: 'Ingest', shipper: true },
        detail: {
          summary: 'Ingest Loki pushes (Promtail, Alloy, Loki clients)',
          description:
            'A Loki push request: JSON `{"streams": [{"stream": {labels}, "values": [["<ns>", "<line>"], ...]}]}`, or a protobuf PushRequest compressed with snappy ' +
            '(`application/x-protobuf`, as Promtail and Alloy send it); `Content-Encoding: gzip` also. Each line becomes an entry whose data is the line, whose time is its ' +
            'timestamp and whose tag is the label QUARRY_LOKI_TAG_LABEL (job), else QUARRY_LOKI_DEFAULT_TAG; other labels and structured metadata are not kept. ' +
            '204 when every entry was stored; 400 naming the entries left out when some could not be (the others are stored, as Loki does).',
          responses: {
            204: { description: 'Every entry was stored' },
            400: refusal('The body is no push request of its type, or some entries were left out (named; the others were stored)'),
            413: refusal('The body is over QUARRY_MAX_BODY_SIZE, decompresses past QUARRY_INGEST_MAX_DECOMPRESSED, or holds more than QUARRY_INGEST_MAX_RECORDS entries, or the owner\'s quota or QUARRY_MAX_TAGS would be passed'),
            429: refusal('The owner\'s ingest rate is passed (QUARRY_INGEST_RATE); Retry-After says when to retry'),
            503: refusal('Too much ingest is being stored at once (QUARRY_INGEST_MAX_PENDING); Retry-After says when to retry'),
            507: refusal('The server\'s disk is nearly full (QUARRY_MIN_FREE_SPACE)'),
          },
        } as Record<string, unknown>,
      },
    )
}
