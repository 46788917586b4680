import { t } from 'elysia'
import { OptionalText } from '../../server/http/wire'
import { formatTime } from '../../server/runtime/time'
import { GIDs, Labels, MAX_DESC, MAX_NAME } from '../files/schema'
import { JsonOptionalUid } from '../groups/schema'
import type { AutoExtractorRow } from './repo'
import { MAX_SAMPLE } from './generate'

/** The most a definition's params may hold (a long regular expression); args are flags, shorter. */
export const MAX_PARAMS = 4096
export const MAX_ARGS = 1024
/** Tags one definition may apply to. */
export const MAX_TAGS = 64

const Text = (maxLength: number) => OptionalText(t.String({ maxLength }))

/**
 * POST, PUT and the syntax check: the platform's AXDefinition (Go client `types.AXDefinition`, TypeScript client
 * `RawCreatableAutoExtractor`). The definition's tags are Tag and Tags together; UUID names the definition a PUT
 * changes; LastUpdated and unknown keys are ignored; `UID` 0 means unset (Go clients send zero values).
 */
export const AutoExtractorBody = t.Object({
  UUID: Text(64),
  UID: t.Optional(JsonOptionalUid),
  GIDs: t.Optional(GIDs),
  Global: t.Optional(t.Union([t.Boolean(), t.Null()])),
  Name: Text(MAX_NAME),
  Desc: Text(MAX_DESC),
  Labels: t.Optional(Labels),
  Tag: Text(128),
  Tags: t.Optional(t.Union([t.Array(t.String({ maxLength: 128 }), { maxItems: MAX_TAGS }), t.Null()])),
  Module: Text(64),
  Params: Text(MAX_PARAMS),
  Args: Text(MAX_ARGS),
})
export type AutoExtractorBody = typeof AutoExtractorBody.static

/** The wire definition: Tag is the first tag, Tags the others (a Go client sends both back and reads them as one list). */
export const AutoExtractorRecord = t.Object({
  UUID: t.String(),
  UID: t.Integer(),
  GIDs: t.Array(t.Integer()),
  Name: t.String(),
  Desc: t.String(),
  Labels: t.Array(t.String()),
  Global: t.Boolean(),
  LastUpdated: t.String(),
  Tag: t.String(),
  Tags: t.Array(t.String()),
  Module: t.String(),
  Params: t.String(),
  Args: t.String(),
})
export type AutoExtractorRecord = typeof AutoExtractorRecord.static

export function toRecord(r: AutoExtractorRow): AutoExtractorRecord {
  return {
    UUID: r.uuid,
    UID: r.uid,
    GIDs: r.gids,
    Name: r.name,
    Desc: r.description,
    Labels: r.labels,
    Global: r.global,
    LastUpdated: formatTime(r.updated),
    Tag: r.tags[0] ?? '',
    Tags: r.tags.slice(1),
    Module: r.module,
    Params: r.params,
    Args: r.args,
  }
}

/** The syntax check's answer: TagExists when another definition of the caller covers one of the tags; Error when it does not compile. */
export const SyntaxCheck = t.Object({ TagExists: t.Boolean(), Error: t.Optional(t.String()) })
/** A 400 of the syntax check: a definition that does not compile (with TagExists), or a body that is no definition (without). */
export const SyntaxRefused = t.Object({ TagExists: t.Optional(t.Boolean()), Error: t.String() })

export const IdParams = t.Object({ id: t.String({ maxLength: 64 }) })
export const AdminQuery = t.Object({ admin: t.Optional(t.String()) })
/** Download: `id` repeated (or comma-separated) names the definitions; none: every definition the caller reads. */
export const DownloadQuery = t.Object({ admin: t.Optional(t.String()), id: t.Optional(t.Union([t.String(), t.Array(t.String())])) })

/** POST /api/explore/generate: the Go client's GenerateAXRequest (entries as the search socket answers them). */
export const GenerateRequest = t.Object({
  Tag: t.String({ maxLength: 128 }),
  Entries: t.Array(
    t.Object({
      TS: t.Optional(t.Union([t.String(), t.Null()])),
      Tag: t.Optional(t.Unknown()),
      SRC: t.Optional(t.Union([t.String(), t.Null()])),
      Data: t.String(),
      Enumerated: t.Optional(t.Unknown()),
    }),
    { maxItems: MAX_SAMPLE },
  ),
})

const ExploreElement = t.Recursive((self) =>
  t.Object({
    Module: t.String(),
    Name: t.String(),
    Path: t.String(),
    Value: t.Union([t.String(), t.Number(), t.Boolean(), t.Null()]),
    SubElements: t.Optional(t.Array(self)),
    Filters: t.Array(t.String()),
  }),
)

/** Per module, its suggestions: the Go client's GenerateAXResponse. */
export const GenerateResponse = t.Record(
  t.String(),
  t.Array(
    t.Object({
      Extractor: t.Object({
        Name: t.String(),
        Desc: t.String(),
        Module: t.String(),
        Params: t.String(),
        Args: t.String(),
        Tag: t.String(),
        Labels: t.Array(t.String()),
        UID: t.Integer(),
        GIDs: t.Array(t.Integer()),
        Global: t.Boolean(),
        UUID: t.String(),
        LastUpdated: t.String(),
      }),
      Confidence: t.Number(),
      Entries: t.Array(t.Unknown()),
      Explore: t.Array(t.Object({ Elements: t.Array(ExploreElement), Module: t.String(), Tag: t.String() })),
    }),
  ),
)
