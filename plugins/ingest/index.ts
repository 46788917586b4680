// Ingest into the embedded engine: POST /api/ingest/json with an array of {"TS", "Tag", "SRC", "Data"} entries (PUT
// the same, answering the count alone, as the TypeScript client reads it).
// A batch is stored whole or not at all: one bad entry refuses the batch with 400 naming its index; a batch past the
// user's ingest rate is refused with 429 (Retry-After), past the free-space floor with 507, past the user's storage
// quota (entries count toward it: server/store/quota.ts) or the store's number of distinct tags with 413.
import { Elysia, type Static, t } from 'elysia'
import { Errors } from '../../server/http/errors'
import { nodeNet } from '../../server/runtime/lazy-builtins'
import { TAG_NAME } from '../../engine/parse'
import type { NewEntry } from '../../server/search/entries'
import { type IngestSink, IngestRefused, type IngestSource } from '../../server/ingest/sink'
import { parseTime } from '../../server/runtime/time'
import { authGuard } from '../auth/guard'
import type { AuthService, Caller } from '../auth/service'
import { area, refusals } from '../../server/http/openapi'

// No Transform in the schema (SRC's null is read as '' by the handler): Elysia then only checks the body, where a
// Transform had TypeBox decode (walk and copy) every entry, a fifth of the route's time (bench/README.md, ingest).
const Entry = t.Object({
  TS: t.Optional(t.Union([t.String(), t.Null()])),
  Tag: t.String(),
  SRC: t.Optional(t.Union([t.String(), t.Null()])),
  Data: t.String(),
})

const Batch = t.Array(Entry)

const JSON_SOURCE: IngestSource = { listener: 'http', protocol: 'json' }

const Ingested = t.Object({ Count: t.Integer(), Size: t.Integer(), Tags: t.Array(t.String()) })

const fromBase64 = (Uint8Array as unknown as { fromBase64(s: string): Uint8Array }).fromBase64

/**
 * The bytes of standard padded base64, or undefined when `s` is not that, in linear time with a small constant.
 * Uint8Array.fromBase64 refuses characters outside the alphabet and padding anywhere but at the end, and decodes
 * about 8 times as fast as Buffer.from(s, 'base64') (which skips what it does not know, hence the check it needed);
 * it also skips ASCII whitespace, which the wire format does not allow: a whole number of 4-character groups that
 * decodes to fewer bytes than its length says held some. (The one regular expression for base64,
 * `^(?:[A-Za-z0-9+/]{4})*(?:...)?$`, took JSC 1.7 s per MiB on the event loop and answered false past about 8 MiB.)
 */
export function decodeBase64(s: string): Uint8Array | undefined {
  if (s.length % 4 !== 0) return undefined
  let out: Uint8Array
  try {
    out = fromBase64(s)
  } catch {
    return undefined
  }
  const pad = s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0
  return out.byteLength === (s.length / 4) * 3 - pad ? out : undefined
}

export interface IngestDeps {
  auth: AuthService
  clock: () => number
  sink: IngestSink
}

/** A refusal of the sink as the catalogue's error, with Retry-After where waiting helps. */
export function sinkRefusal(e: unknown, set: { headers: Record<string, string | number> }): unknown {
  if (!(e instanceof IngestRefused)) return e
  if (e.retryAfterMs !== undefined) set.headers['retry-after'] = String(Math.ceil(e.retryAfterMs / 1000))
  return e.error
}

export function ingestPlugin({ auth, clock, sink }: IngestDeps) {
  /** Checks and stores a batch (all or nothing); answers what was stored. */
  async function storeBatch(body: Static<typeof Batch>, caller: Caller, set: { headers: Record<string, string | number> }) {
    const now = clock()
    const batch: NewEntry[] = new Array(body.length)
    const tags = new Set<string>()
    let size = 0
    // The tag and source checked last: entries of a batch mostly share them, and each is checked once per run.
    let goodTag: string | undefined
    let goodSrc = ''
    for (let i = 0; i < body.length; i++) {
      const e = body[i]!
      const ts = parseTime(e.TS)
      if (ts === undefined) throw refused(`entry ${i}: TS is not an RFC 3339 time`)
      if (e.Tag !== goodTag) {
        if (!TAG_NAME.test(e.Tag)) throw refused(`entry ${i}: Tag must be 1 to 128 letters, digits, '.', '_' or '-'`)
        goodTag = e.Tag
        tags.add(e.Tag)
      }
      const src = e.SRC ?? ''
      if (src !== goodSrc && src !== '') {
        if (nodeNet().isIP(src) === 0) throw refused(`entry ${i}: SRC is not an IP address`)
        goodSrc = src
      }
      const data = decodeBase64(e.Data)
      if (data === undefined) throw refused(`entry ${i}: Data is not base64`)
      size += data.byteLength
      batch[i] = { ts: ts || now, tag: e.Tag, src, data }
    }
    try {
      await sink.store(batch, caller, JSON_SOURCE)
    } catch (e) {
      throw sinkRefusal(e, set)
    }
    return { Count: batch.length, Size: size, Tags: [...tags].sort() }
  }

  const description =
    'An array of entries `{TS, Tag, SRC, Data}` (Data base64); all are stored or none. Entries count toward the caller\'s storage quota (413 past it, or past the number of distinct tags); 429 with Retry-After past the ingest rate; 503 with Retry-After while too much ingest is being stored at once; 507 when the server\'s disk is nearly full.'
  return new Elysia({ name: 'quarry-ingest', detail: area('Ingest') })
    .use(authGuard(auth))
    .post('/api/ingest/json', ({ body, caller, set }) => storeBatch(body, caller, set), {
      access: { key: 'Ingest', shipper: true },
      body: Batch,
      response: { 200: Ingested, ...refusals(429, 503, 507) },
      detail: { summary: 'Ingest entries for searching', description },
    })
    // The TypeScript client's ingestJSONEntries sends the same batch with PUT and reads the answer as the number of
    // entries stored; POST keeps the Go client's IngestResponse.
    .put('/api/ingest/json', async ({ body, caller, set }) => Response.json((await storeBatch(body, caller, set)).Count), {
      access: { key: 'Ingest', shipper: true },
      body: Batch,
      response: { 200: t.Integer(), ...refusals(429, 503, 507) },
      detail: { summary: 'Ingest entries, answering how many were stored', description },
    })

  function refused(message: string) {
    sink.refused(JSON_SOURCE, 'invalid')
    return Errors.badRequest(message)
  }
}
