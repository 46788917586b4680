// POST /api/ingest/lines: a file of lines as the platform's clients send it (the Go client's Ingest, the TypeScript
// client's ingestMultiLineEntry): a multipart form with `tag`, `source`, `type`, `noparsetimestamp`,
// `assumelocaltimezone` and the `file` part, each non-empty line one entry (LF or CRLF), its time read from the line
// (server/ingest/timestamps.ts), else the time of receipt. The request is stored whole or not at all: any bad field
// or line refuses it with 400 naming the problem (a line longer than QUARRY_INGEST_MAX_LINE by its number, as the
// platform's line reader refuses a token past its bound rather than cutting it), a body past QUARRY_MAX_BODY_SIZE
// with 413, and the sink's bounds (rate, quota, tags, space, busy) as on POST /api/ingest/json.
//
// Memory: the body is streamed (server/upload/multipart.ts) and held only as the lines it holds, at most
// QUARRY_MAX_BODY_SIZE in all; one partial line at a time is at most QUARRY_INGEST_MAX_LINE.
import { Elysia, t } from 'elysia'
import type { Config } from '../../server/runtime/config'
import { Errors } from '../../server/http/errors'
import { nodeNet } from '../../server/runtime/lazy-builtins'
import { TAG_NAME } from '../../engine/parse'
import type { NewEntry } from '../../server/search/entries'
import type { IngestSink, IngestSource } from '../../server/ingest/sink'
import { TimestampFinder } from '../../server/ingest/timestamps'
import { FilePart, MultipartError, UploadTooLargeError, multipartUpload, streamUpload } from '../../server/upload/multipart'
import { area, refusals } from '../../server/http/openapi'
import { authGuard } from '../auth/guard'
import type { AuthService } from '../auth/service'
import { sinkRefusal } from './index'

export const LINES_SOURCE: IngestSource = { listener: 'http', protocol: 'lines' }
/** Timestamp finders of distinct settings (zone, format, flags) kept between requests. */
const FINDERS_KEPT = 64

const Ingested = t.Object({ Count: t.Integer(), Size: t.Integer(), Tags: t.Array(t.String()) })

const LinesForm = t.Object({
  tag: t.String({ description: 'the tag of every entry' }),
  source: t.Optional(t.String({ description: 'the SRC of every entry: an IP address; none by default' })),
  type: t.Optional(t.String({ description: 'empty (or `lines`): a file of lines, the only type taken' })),
  noparsetimestamp: t.Optional(t.String({ description: '`true`: every entry gets the time of receipt' })),
  assumelocaltimezone: t.Optional(t.String({ description: '`true`: zones written in the lines are ignored; every time is read in the server\'s zone (QUARRY_TIMESTAMP_ZONE)' })),
  timestampformat: t.Optional(t.String({ description: 'only this timestamp format is looked for (by the platform\'s name: `RFC3339`, `Apache`...); QUARRY_TIMESTAMP_FORMAT by default' })),
  timezone: t.Optional(t.String({ description: 'the zone of times written without one (IANA name or offset); QUARRY_TIMESTAMP_ZONE by default' })),
  file: FilePart('the lines, LF or CRLF; empty lines are skipped'),
})

/** A line longer than the bound: the request is refused naming it. */
class LineTooLong extends Error {
  constructor(readonly line: number) {
    super(`line ${line}`)
  }
}

/**
 * Splits `stream` into its non-empty lines (without their LF or CRLF) as byte views, counting every line for the
 * line numbers of refusals. A line past `maxLine` bytes throws LineTooLong before more of it is held.
 */
async function readLines(stream: ReadableStream<Uint8Array>, maxLine: number): Promise<Uint8Array[]> {
  const lines: Uint8Array[] = []
  /** The start of the current line, in earlier chunks. */
  let partial: Uint8Array[] = []
  let partialBytes = 0
  let number = 0
  /** Takes `bytes[from, to)` as the next line (its CR dropped): one view made per line, none for an empty one. */
  const take = (bytes: Uint8Array, from: number, to: number) => {
    number++
    const end = to > from && bytes[to - 1] === 13 ? to - 1 : to
    if (end - from > maxLine) throw new LineTooLong(number)
    if (end > from) lines.push(bytes.subarray(from, end))
  }
  for await (const chunk of stream) {
    let from = 0
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, from)) {
      if (partial.length > 0) {
        if (partialBytes + nl - from > maxLine + 1) throw new LineTooLong(number + 1)
        const line = Buffer.concat([...partial, chunk.subarray(from, nl)])
        take(line, 0, line.byteLength)
        partial = []
        partialBytes = 0
      } else take(chunk, from, nl)
      from = nl + 1
    }
    if (from < chunk.byteLength) {
      const rest = chunk.subarray(from)
      partialBytes += rest.byteLength
      // one byte of room for the CR of a CRLF that has not arrived yet
      if (partialBytes > maxLine + 1) throw new LineTooLong(number + 1)
      partial.push(rest)
    }
  }
  if (partial.length > 0) {
    const line = Buffer.concat(partial)
    take(line, 0, line.byteLength)
  }
  return lines
}

/** Longest first line that can name a boundary: `--`, 70 characters (RFC 2046), CRLF. */
const BOUNDARY_LINE = 74

/**
 * `request`, or for a body without a Content-Type whose first line is a multipart boundary, the same request
 * declaring that form. The TypeScript client's Node build sends its `form-data` body through node-fetch, which Bun
 * replaces by its own fetch: that one streams the form but drops the type the form-data object would have set.
 * At most BOUNDARY_LINE bytes are read ahead; they are given back to the stream unchanged.
 */
async function declaringForm(request: Request): Promise<Request> {
  if (request.headers.get('content-type') || !request.body) return request
  const reader = request.body.getReader()
  const head: Uint8Array[] = []
  let size = 0
  while (size < BOUNDARY_LINE) {
    let next: Awaited<ReturnType<typeof reader.read>>
    try {
      next = await reader.read()
    } catch {
      throw new MultipartError('the request body broke off')
    }
    if (next.done) break
    head.push(next.value)
    size += next.value.byteLength
    if (next.value.indexOf(10) !== -1) break
  }
  const first = Buffer.concat(head)
  const eol = first.indexOf('\r\n')
  const line = eol > 2 && eol <= BOUNDARY_LINE - 2 ? first.subarray(0, eol).toString('latin1') : ''
  const boundary = /^--([0-9A-Za-z'()+_,\-./:=?]{1,70})$/.exec(line)?.[1]
  let replayed = false
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!replayed) {
        replayed = true
        if (first.byteLength > 0) return controller.enqueue(first)
      }
      const next = await reader.read()
      if (next.done) controller.close()
      else controller.enqueue(next.value)
    },
    cancel: (reason) => reader.cancel(reason),
  })
  const headers = new Headers(request.headers)
  if (boundary !== undefined) headers.set('content-type', `multipart/form-data; boundary=${boundary}`)
  return new Request(request.url, { method: request.method, headers, body, duplex: 'half' } as RequestInit)
}

export interface LinesIngestDeps {
  auth: AuthService
  clock: () => number
  sink: IngestSink
  config: Pick<Config, 'maxBodyBytes' | 'ingestMaxLineBytes' | 'timestampZone' | 'timestampFormat'>
}

export function linesIngestPlugin({ auth, clock, sink, config }: LinesIngestDeps) {
  /**
   * The finders asked for, by their four settings (built once each: an IANA zone's formatter is not free; `quarry
   * ingest` names its zone in every request). At most FINDERS_KEPT: past that the map starts again (bounded whatever
   * the callers send).
   */
  const finders = new Map<string, TimestampFinder>()
  const finderFor = (fields: Record<string, string>): TimestampFinder => {
    const ignore = flag(fields, 'noparsetimestamp')
    const ignoreZones = flag(fields, 'assumelocaltimezone')
    const zone = fields.timezone?.trim() || undefined
    const format = fields.timestampformat?.trim() || undefined
    const build = () => {
      try {
        return new TimestampFinder({ zone: zone ?? config.timestampZone, format: format ?? config.timestampFormat, ignore, ignoreZones })
      } catch (e) {
        throw refused(`${zone !== undefined && format === undefined ? 'timezone' : 'timestampformat'}: ${(e as Error).message}`)
      }
    }
    const key = JSON.stringify([ignore, ignoreZones, zone ?? null, format ?? null])
    let finder = finders.get(key)
    if (!finder) {
      finder = build()
      if (finders.size >= FINDERS_KEPT) finders.clear()
      finders.set(key, finder)
    }
    return finder
  }

  function flag(fields: Record<string, string>, name: string): boolean {
    const v = (fields[name] ?? '').trim().toLowerCase()
    if (v === '' || v === 'false' || v === '0') return false
    if (v === 'true' || v === '1') return true
    throw refused(`${name} must be true or false`)
  }

  function refused(message: string) {
    sink.refused(LINES_SOURCE, 'invalid')
    return Errors.badRequest(message)
  }

  return new Elysia({ name: 'quarry-ingest-lines', detail: area('Ingest') })
    .use(authGuard(auth))
    .post(
      '/api/ingest/lines',
      async ({ request, caller, set }) => {
        const now = clock()
        let form: Awaited<ReturnType<typeof streamUpload<Uint8Array[]>>>
        try {
          form = await streamUpload(await declaringForm(request), (stream) => readLines(stream, config.ingestMaxLineBytes), async () => {}, { maxBytes: config.maxBodyBytes })
        } catch (e) {
          if (e instanceof UploadTooLargeError) {
            sink.refused(LINES_SOURCE, 'too-large')
            throw Errors.tooLarge(config.maxBodyBytes)
          }
          if (e instanceof LineTooLong) {
            sink.refused(LINES_SOURCE, 'too-large')
            throw Errors.badRequest(`line ${e.line} is longer than ${config.ingestMaxLineBytes} bytes (QUARRY_INGEST_MAX_LINE); nothing was stored`)
          }
          if (e instanceof MultipartError) throw refused(e.message)
          throw e
        }
        const { fields, result: lines } = form
        const tag = fields.tag ?? ''
        if (!TAG_NAME.test(tag)) throw refused(`tag must be 1 to 128 letters, digits, '.', '_' or '-'`)
        const src = (fields.source ?? '').trim()
        if (src !== '' && nodeNet().isIP(src) === 0) throw refused('source is not an IP address')
        const type = (fields.type ?? '').trim().toLowerCase()
        if (type !== '' && type !== 'lines') throw refused(`type ${JSON.stringify(fields.type!.slice(0, 64))} is not taken: only a file of lines (type empty)`)
        const finder = finderFor(fields)
        const batch: NewEntry[] = new Array(lines.length)
        let size = 0
        for (let i = 0; i < lines.length; i++) {
          const data = lines[i]!
          size += data.byteLength
          batch[i] = { ts: finder.find(data, now) ?? now, tag, src, data }
        }
        if (batch.length > 0) {
          try {
            await sink.store(batch, caller, LINES_SOURCE)
          } catch (e) {
            throw sinkRefusal(e, set)
          }
        }
        return { Count: batch.length, Size: size, Tags: batch.length > 0 ? [tag] : [] }
      },
      {
        access: { key: 'Ingest', shipper: true },
        parse: multipartUpload(LinesForm),
        response: { 200: Ingested, ...refusals(413, 429, 503, 507) },
        detail: {
          summary: 'Ingest a file of lines',
          description:
            'Multipart: `tag`, optional `source` (an IP), `noparsetimestamp`, `assumelocaltimezone`, `timestampformat`, `timezone`, and the `file` part: each non-empty line (LF or CRLF) is one entry, its time the first timestamp found in the line (docs/shippers.md "Timestamps"), else the time of receipt. All lines are stored or none: 400 for a bad field or a line longer than QUARRY_INGEST_MAX_LINE (naming it), 413 past QUARRY_MAX_BODY_SIZE or the caller\'s storage quota, and the bounds of POST /api/ingest/json.',
        },
      },
    )
}
