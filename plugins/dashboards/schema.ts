import { t } from 'elysia'
import { OptionalText } from '../../server/http/wire'
import { formatTime } from '../../server/runtime/time'
import { GIDs, Labels, MAX_DESC, MAX_NAME } from '../files/schema'
import { JsonOptionalUid } from '../groups/schema'
import type { DashboardRow } from './repo'

const Text = (maxLength: number) => OptionalText(t.String({ maxLength }))

/**
 * POST and PUT: the dashboard structure (docs/api.md "Dashboards and the search library"); unknown keys (ID, Created,
 * Updated, Synced) are ignored. `Data` is any JSON here; the handler requires an object and keeps its text as sent.
 * `UID` 0 and a `GUID` that is empty or the nil UUID mean unset (Go clients send zero values).
 */
export const DashboardBody = t.Object({
  Name: Text(MAX_NAME),
  Description: Text(MAX_DESC),
  UID: t.Optional(JsonOptionalUid),
  GIDs: t.Optional(GIDs),
  Global: t.Optional(t.Union([t.Boolean(), t.Null()])),
  Labels: t.Optional(Labels),
  Data: t.Optional(t.Unknown()),
  GUID: Text(64),
})
export type DashboardBody = typeof DashboardBody.static

/** The wire dashboard (dashboardJson): `Data` exactly as it was sent. */
export const DashboardRecord = t.Object({
  ID: t.Integer(),
  GUID: t.String(),
  Name: t.String(),
  Description: t.String(),
  UID: t.Integer(),
  GIDs: t.Array(t.Integer()),
  Global: t.Boolean(),
  Created: t.String(),
  Updated: t.String(),
  Labels: t.Array(t.String()),
  Data: t.Unknown({ description: 'the dashboard definition, byte for byte as sent' }),
  Synced: t.Boolean(),
})

/** A dashboard id in a path: the numeric ID or a GUID (checked by the handler). */
export const DashboardIdParams = t.Object({ id: t.String({ maxLength: 64 }) })

/**
 * The wire dashboard, in the clients' field order, with `Data` spliced in as stored (its exact text). Lists are
 * arrays, never null (docs/api.md "Conventions").
 */
export function dashboardJson(d: DashboardRow): string {
  // jsonWithRaw's output, written out: a listing builds this for each of its rows (bench/README.md), and Data is always
  // stored text here (a blank dashboard holds '{}').
  const head = JSON.stringify({
    ID: d.id,
    GUID: d.guid,
    Name: d.name,
    Description: d.description,
    UID: d.uid,
    GIDs: d.gids,
    Global: d.global,
    Created: formatTime(d.created),
    Updated: formatTime(d.updated),
    Labels: d.labels,
  })
  return `${head.slice(0, -1)},"Data":${d.data},"Synced":false}`
}

export const dashboardListJson = (rows: readonly DashboardRow[]) => `[${rows.map(dashboardJson).join(',')}]`
