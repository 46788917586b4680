import { t } from 'elysia'
import { jsonWithRaw } from '../../server/http/raw-json'
import { OptionalText } from '../../server/http/wire'
import { formatTime } from '../../server/runtime/time'
import { GIDs, Labels, MAX_DESC, MAX_NAME } from '../files/schema'
import { JsonOptionalUid } from '../groups/schema'
import type { LibraryRow } from './repo'

const Text = (maxLength: number) => OptionalText(t.String({ maxLength }))
/** A query may be long (a whole search pipeline). */
export const MAX_QUERY = 256 * 1024

/**
 * POST and PUT: the entry (docs/api.md "Dashboards and the search library"); ThingUUID, WriteAccess, Can and Updated
 * are ignored (unknown keys are). `Metadata` is any JSON, kept as sent. `UID` 0 and a `GUID` that is empty or the nil
 * UUID mean unset (Go clients send zero values).
 */
export const LibraryBody = t.Object({
  GUID: Text(64),
  UID: t.Optional(JsonOptionalUid),
  GIDs: t.Optional(GIDs),
  Global: t.Optional(t.Union([t.Boolean(), t.Null()])),
  Name: Text(MAX_NAME),
  Description: Text(MAX_DESC),
  Query: Text(MAX_QUERY),
  Labels: t.Optional(Labels),
  Metadata: t.Optional(t.Unknown()),
})
export type LibraryBody = typeof LibraryBody.static

/** The wire entry (entryJson): GIDs, Labels and Metadata only when not empty; Metadata exactly as it was sent. */
export const LibraryEntry = t.Object({
  ThingUUID: t.String(),
  GUID: t.String(),
  UID: t.Integer(),
  GIDs: t.Optional(t.Array(t.Integer())),
  Global: t.Boolean(),
  Name: t.String(),
  Description: t.String(),
  Query: t.String(),
  Labels: t.Optional(t.Array(t.String())),
  Metadata: t.Optional(t.Unknown({ description: 'any JSON, byte for byte as sent' })),
  WriteAccess: t.Object({ Global: t.Boolean(), GIDs: t.Array(t.Integer()) }),
  Can: t.Object({ Delete: t.Boolean(), Modify: t.Boolean(), Share: t.Boolean() }, { description: 'what the caller may do with the entry' }),
  Updated: t.String(),
})

export const LibraryIdParams = t.Object({ id: t.String({ maxLength: 64 }) })

export const AdminQuery = t.Object({ admin: t.Optional(t.String()) })

/**
 * Nobody but the owner (and an admin with ?admin=true) changes an entry (docs/api.md "Dashboards and the search
 * library"), so the write access list every entry answers is empty.
 */
const WRITE_ACCESS = JSON.stringify({ Global: false, GIDs: [] })
/** Can: what the caller may do; the owner (or an admin with the flag) all of it, anyone else nothing. */
const CAN_ALL = JSON.stringify({ Delete: true, Modify: true, Share: true })
const CAN_NONE = JSON.stringify({ Delete: false, Modify: false, Share: false })

/**
 * The wire entry in the clients' member order: GIDs, Labels and Metadata omitted when empty (as the clients send it),
 * Metadata spliced in as stored; then WriteAccess, what the caller `may` do (Can) and Updated (docs/api.md "Dashboards
 * and the search library").
 */
export function entryJson(e: LibraryRow, may: boolean): string {
  return jsonWithRaw(
    {
      ThingUUID: e.thingUuid,
      GUID: e.guid,
      UID: e.uid,
      ...(e.gids.length > 0 ? { GIDs: e.gids } : {}),
      Global: e.global,
      Name: e.name,
      Description: e.description,
      Query: e.query,
      ...(e.labels.length > 0 ? { Labels: e.labels } : {}),
    },
    [
      ['Metadata', e.metadata ?? undefined],
      ['WriteAccess', WRITE_ACCESS],
      ['Can', may ? CAN_ALL : CAN_NONE],
      ['Updated', JSON.stringify(formatTime(e.updated))],
    ],
  )
}
