// Ingest into the embedded engine: POST /api/ingest/json with an array of {"TS", "Tag", "SRC", "Data"} entries.
// A batch is stored whole or not at all: one bad entry refuses the batch with 400 naming its index.
import { Elysia, t } from 'elysia'
import { Errors } from '../../server/errors'
import { nodeNet } from '../../server/lazy-builtins'
import { TAG_NAME } from '../../server/search/query'
import type { NewEntry } from '../../server/search/entries'
import type { Store } from '../../server/store'
import { parseTime } from '../../server/time'
import { OptionalText } from '../../server/wire'
import { authGuard } from '../auth/guard'
import type { AuthService } from '../auth/service'
import { area } from '../../server/openapi'

const Entry = t.Object({
  TS: t.Optional(t.Union([t.String(), t.Null()])),
  Tag: t.String(),
  SRC: OptionalText(t.String()),
  Data: t.String(),
})

const Ingested = t.Object({ Count: t.Integer(), Size: t.Integer(), Tags: t.Array(t.String()) })

/**
 * Whether `s` is standard padded base64, in linear time with a small constant. (The one regular expression for it,
 * `^(?:[A-Za-z0-9+/]{4})*(?:...)?$`, took JSC 1.7 s per MiB on the event loop and answered false past about 8 MiB.)
 */
function isBase64(s: string): boolean {
  if (s.length % 4 !== 0 || /[^A-Za-z0-9+/=]/.test(s)) return false
  const pad = s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0
  const firstPad = s.indexOf('=')
  return firstPad === -1 || firstPad === s.length - pad
}

export function ingestPlugin({ store, auth, clock }: { store: Store; auth: AuthService; clock: () => number }) {
  return new Elysia({ name: 'quarry-ingest', detail: area('Ingest') })
    .use(authGuard(auth))
    .post(
      '/api/ingest/json',
      async ({ body }) => {
        const now = clock()
        const batch: NewEntry[] = []
        const tags = new Set<string>()
        let size = 0
        body.forEach((e, i) => {
          const ts = parseTime(e.TS)
          if (ts === undefined) throw Errors.badRequest(`entry ${i}: TS is not an RFC 3339 time`)
          if (!TAG_NAME.test(e.Tag)) throw Errors.badRequest(`entry ${i}: Tag must be 1 to 128 letters, digits, '.', '_' or '-'`)
          const src = e.SRC ?? ''
          if (src !== '' && nodeNet().isIP(src) === 0) throw Errors.badRequest(`entry ${i}: SRC is not an IP address`)
          if (!isBase64(e.Data)) throw Errors.badRequest(`entry ${i}: Data is not base64`)
          const data = Buffer.from(e.Data, 'base64')
          size += data.byteLength
          tags.add(e.Tag)
          batch.push({ ts: ts || now, tag: e.Tag, src, data })
        })
        await store.entries.ingest(batch)
        return { Count: batch.length, Size: size, Tags: [...tags].sort() }
      },
      {
        access: 'Ingest',
        body: t.Array(Entry),
        response: Ingested,
        detail: { summary: 'Ingest entries for searching', description: 'An array of entries `{TS, Tag, SRC, Data}` (Data base64); all are stored or none.' },
      },
    )
}
