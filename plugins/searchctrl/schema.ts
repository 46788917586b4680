import { t } from 'elysia'
import { formatTime } from '../../server/runtime/time'
import { type SearchView, stateWords } from '../../server/search/manager'
import { type SearchRecord, searchQueryAndTimes } from '../../server/search/repo'

const Time = t.Union([t.String(), t.Null()])

export const LaunchBody = t.Object({
  SearchString: t.String({ maxLength: 4096 }),
  SearchStart: t.Optional(Time),
  SearchEnd: t.Optional(Time),
  Background: t.Optional(t.Boolean()),
  NoHistory: t.Optional(t.Boolean()),
  Metadata: t.Optional(t.Unknown()),
})

export const Launched = t.Object({ SearchID: t.String() })

export const IdParams = t.Object({ id: t.String({ maxLength: 32 }) })
export const DownloadParams = t.Object({ id: t.String({ maxLength: 32 }), format: t.String({ maxLength: 16 }) })
export const AdminQuery = t.Object({ admin: t.Optional(t.String()) })

/** GET .../details?wait=SECONDS: a long-poll for the end of a running search (DETAILS_MAX_WAIT_S at most). */
export const DetailsQuery = t.Object({
  wait: t.Optional(
    t.String({
      description: 'Seconds (0 to 5, fractions allowed) to hold the answer while the search runs: it comes as soon as the search ends, or when the time is up',
    }),
  ),
})

/** The import's group may also be named in the query, so that it is checked before any of the body is read. */
export const ImportQuery = t.Object({ GID: t.Optional(t.String()), admin: t.Optional(t.String()) })

export const ImportWire = t.Object({ Imported: t.Boolean(), Time: t.String(), BatchName: t.String(), BatchInfo: t.String() })

/**
 * How a search was launched, in the clients' names (js-client RawSearch2.LaunchInfo, Go SearchLaunchInfo): the
 * method (`manual` for a login session, `script` for an API token, `""` for an imported search), what launched
 * it (`reference`, blank for these methods), when it started, and when it will be removed (zero time: not
 * scheduled, because it is kept or still has a client).
 */
export const LaunchInfoWire = t.Object({ started: t.String(), expires: t.String(), method: t.String(), reference: t.String() })

/**
 * Search list entry: the clients' fields (StoredData is the size of the stored results in bytes) and those the
 * clients' list types declare (js-client RawSearch2, Go SearchCtrlStatus, which crash or misread without them):
 * every one always present, strings never null, GIDs an array, times RFC 3339 (zero time when unset).
 */
export const ListEntry = t.Object({
  ID: t.String(),
  UID: t.Integer(),
  GID: t.Integer(),
  GIDs: t.Array(t.Integer()),
  Global: t.Boolean(),
  State: t.String(),
  AttachedClients: t.Integer(),
  StoredData: t.Integer(),
  UserQuery: t.String(),
  EffectiveQuery: t.String(),
  StartRange: t.String(),
  EndRange: t.String(),
  NoHistory: t.Boolean(),
  Import: ImportWire,
  LaunchInfo: LaunchInfoWire,
})

/** Search detail, answered as a one-element array (as the clients read it). */
export const Detail = t.Object({
  ID: t.String(),
  UID: t.Integer(),
  UserQuery: t.String(),
  EffectiveQuery: t.String(),
  StartRange: t.String(),
  EndRange: t.String(),
  Started: t.String(),
  Finished: t.String(),
  StoreSize: t.Integer(),
  IndexSize: t.Integer(),
})

/** The full record of docs/api.md "Searches": the detail's fields (Finished among them) and more. */
export const Details = t.Object({
  ...Detail.properties,
  GIDs: t.Array(t.Integer()),
  LastUpdate: t.String(),
  Duration: t.String(),
  ItemCount: t.Integer(),
  Metadata: t.Unknown(),
  Import: ImportWire,
  LaunchInfo: LaunchInfoWire,
  Background: t.Boolean(),
  State: t.String(),
  NoHistory: t.Boolean(),
  Error: t.String(),
})

export const HistoryEntry = t.Object({
  UID: t.Integer(),
  GID: t.Integer(),
  UserQuery: t.String(),
  EffectiveQuery: t.String(),
  Launched: t.String(),
  Synced: t.Boolean(),
})

function importWire(r: SearchRecord) {
  return r.import
    ? { Imported: true, Time: formatTime(r.import.time), BatchName: r.import.batchName, BatchInfo: r.import.batchInfo }
    : { Imported: false, Time: formatTime(0), BatchName: '', BatchInfo: '' }
}

/** `graceMs`: how long a search nobody keeps outlives its last client (the manager's sweep removes it then). */
function launchInfoWire(s: SearchView, graceMs: number) {
  const r = s.record
  const removable = s.save === 'none' && !s.background && s.clients.size === 0 && s.unattendedSince > 0
  return {
    started: formatTime(r.started),
    expires: formatTime(removable ? s.unattendedSince + graceMs : 0),
    method: r.import ? '' : r.launchInfo.client === 'token' ? 'script' : 'manual',
    reference: '',
  }
}

export function toListEntry(s: SearchView, graceMs: number) {
  const r = s.record
  return {
    ID: r.id,
    UID: r.uid,
    GID: r.gid,
    GIDs: r.gid > 0 ? [r.gid] : [],
    Global: false,
    State: stateWords(s),
    AttachedClients: s.clients.size,
    StoredData: r.storeSize,
    UserQuery: r.userQuery,
    EffectiveQuery: r.effectiveQuery,
    StartRange: formatTime(r.startRange),
    EndRange: formatTime(r.endRange),
    NoHistory: r.noHistory,
    Import: importWire(r),
    LaunchInfo: launchInfoWire(s, graceMs),
  }
}

export function toDetail(s: SearchView) {
  const r = s.record
  return {
    ID: r.id,
    UID: r.uid,
    ...searchQueryAndTimes(r),
    StoreSize: r.storeSize,
    IndexSize: r.indexSize,
  }
}

export function toDetails(s: SearchView, now: number, graceMs: number) {
  const r = s.record
  return {
    ...toDetail(s),
    GIDs: r.gid > 0 ? [r.gid] : [],
    LastUpdate: formatTime(r.lastUpdate),
    Duration: goDuration((r.finished || now) - r.started),
    ItemCount: r.itemCount,
    Metadata: r.metadata ?? null,
    Import: importWire(r),
    LaunchInfo: launchInfoWire(s, graceMs),
    Background: s.background,
    State: stateWords(s),
    NoHistory: r.noHistory,
    Error: r.error,
  }
}

/** A duration as Go's time.Duration prints it: "0s", "250ms", "1.5s", "2m3.25s", "1h0m0s". */
export function goDuration(ms: number): string {
  if (ms <= 0) return '0s'
  if (ms < 1000) return `${ms}ms`
  const h = Math.floor(ms / 3_600_000)
  const m = Math.floor((ms % 3_600_000) / 60_000)
  const s = (ms % 60_000) / 1000
  const sec = `${Number.isInteger(s) ? s : s.toFixed(3).replace(/0+$/, '')}s`
  return h ? `${h}h${m}m${sec}` : m ? `${m}m${sec}` : sec
}
