// The wire shapes of the two WebSocket protocols, as the clients of this API family speak them (the TypeScript
// client's RawSearchMessageSent/Received, its query-parsing and system-stats subscriptions; the Go client's
// StartSearchRequest/Response, ParseSearchResponse, SearchInfo, BaseResponse). Every message is one JSON object:
//   {"Subs": [...]}                      subscribe to message types (answered {"Resp": "ACK"})
//   {"type": <name>, "data": {...}}      a request or an answer of that type
// Answers to a running search's requests travel under the search's own type (its OutputSearchSubproto), with
// `data.ID` the request id below.
import type { Search } from '../../server/search/manager'
import { stateWords } from '../../server/search/manager'
import { formatTime } from '../../server/time'
import { goDuration } from '../searchctrl/schema'
import { type CompiledQuery, compileQuery } from '../../engine/query'

/** Request ids of a search subprotocol (the Go client's REQ_* constants; the TypeScript client's SearchMessageCommands). */
export const REQ = {
  CLOSE: 0x1,
  ENTRY_COUNT: 0x3,
  SEARCH_DETAILS: 0x4,
  SEARCH_TAGS: 0x5,
  GET_ENTRIES: 0x10,
  STREAMING: 0x11,
  TS_RANGE: 0x12,
  GET_EXPLORE_ENTRIES: 0xf010,
  EXPLORE_TS_RANGE: 0xf012,
  STATS_SIZE: 0x7f000001,
  STATS_RANGE: 0x7f000002,
  STATS_GET: 0x7f000003,
  STATS_GET_RANGE: 0x7f000004,
  STATS_GET_SUMMARY: 0x7f000005,
  STATS_GET_LOCATION: 0x7f000006,
} as const
/** RESP_ERROR: the answer to a request that failed, with `Error`. */
export const RESP_ERROR = 0xffffffff

/** What the engine's results look like to the clients' renderers: entries (text) or a count (table). */
export function renderModuleOf(s: Search): 'text' | 'table' {
  return /\|\s*count\s*$/.test(s.record.effectiveQuery) || /^tag=\S+\s+count$/.test(s.record.effectiveQuery) ? 'table' : 'text'
}

/** The query's tags as the clients list them (`Tags`). */
export function tagsOf(effectiveQuery: string): string[] {
  const m = /^tag=(\S+)/.exec(effectiveQuery)
  return m ? m[1]!.split(',') : []
}

/** Renderers whose results can be re-read for a narrower time range (the clients' zoom): entries and time series. */
const ZOOMABLE = new Set(['text', 'raw', 'hex', 'pcap', 'chart', 'stackgraph'])

/**
 * SearchHints of the Go client (the parse, launch and attach answers): the renderer, each module's values
 * (ModuleHint: ProducedEVs, ConsumedEVs, ResourcesNeeded, Condensing), the first condensing module's index
 * (CollapsingIndex: the number of modules when none condenses), and whether zooming works: for entries and charts,
 * and for a table of entries (a table after a condensing module is one answer for the whole range).
 * MinZoomWindow (seconds): the window of a condensing module's `over` (the widest), 1 without one.
 */
export function queryHints(q: CompiledQuery) {
  const modules = [...q.modules, q.renderer]
  const condensing = q.modules.findIndex((m) => m.kind === 'condensing')
  const render = q.renderer.name
  const timeZoomDisabled = !(ZOOMABLE.has(render) || (render === 'table' && condensing === -1))
  const windowMs = Math.max(0, ...q.modules.map((m) => m.windowMs ?? 0))
  return {
    CollapsingIndex: condensing === -1 ? q.modules.length : condensing,
    RenderModule: render,
    TimeZoomDisabled: timeZoomDisabled,
    Tags: q.tags,
    ModuleHints: modules.map((m) => ({
      Name: m.name,
      ProducedEVs: [...m.produces],
      ConsumedEVs: [...m.consumes],
      ResourcesNeeded: [...(m.needs?.resources ?? [])],
      Condensing: m.kind === 'condensing',
    })),
    MinZoomWindow: windowMs > 0 ? Math.max(1, Math.ceil(windowMs / 1000)) : 1,
  }
}

/** The hints of a search's query (compiled again from its normal form once, then kept with the search). */
const hintsOfSearch = new WeakMap<Search, ReturnType<typeof queryHints> | null>()
export function searchHints(s: Search): ReturnType<typeof queryHints> | null {
  let h = hintsOfSearch.get(s)
  if (h === undefined) {
    try {
      h = queryHints(compileQuery(s.record.effectiveQuery))
    } catch {
      h = null // a query stored by a version that read it differently: no hints rather than none of the search
    }
    hintsOfSearch.set(s, h)
  }
  return h
}

/** SearchInfo of the Go client (and `SearchInfo`/`Info` of the TypeScript client's details and attach answers). */
export function searchInfo(s: Search, now: number) {
  const r = s.record
  return {
    ID: r.id,
    UID: r.uid,
    GID: r.gid,
    UserQuery: r.userQuery,
    EffectiveQuery: r.effectiveQuery,
    StartRange: formatTime(r.startRange),
    EndRange: formatTime(r.endRange),
    Descending: false,
    Started: formatTime(r.started),
    LastUpdate: formatTime(r.lastUpdate),
    Duration: goDuration((r.finished || now) - r.started),
    StoreSize: r.storeSize,
    IndexSize: r.indexSize,
    ItemCount: r.itemCount,
    TimeZoomDisabled: searchHints(s)?.TimeZoomDisabled ?? true,
    RenderDownloadFormats: ['json', 'csv', 'text'],
    Metadata: r.metadata ?? {},
    CollapsingIndex: 0,
    NoHistory: r.noHistory,
    MinZoomWindow: searchHints(s)?.MinZoomWindow ?? 1,
    Tags: tagsOf(r.effectiveQuery),
    Import: r.import
      ? { Imported: true, Time: formatTime(r.import.time), BatchName: r.import.batchName, BatchInfo: r.import.batchInfo }
      : { Imported: false, Time: formatTime(0), BatchName: '', BatchInfo: '' },
    Preview: false,
    State: stateWords(s),
  }
}

/** Whether the search has stopped growing: finished, stopped, failed or loaded from storage. */
export const finished = (s: Search) => !s.running

/** The fields every answer of a search subprotocol carries (BaseResponse). */
export function baseResponse(s: Search, id: number, addendum: unknown) {
  return {
    ID: id,
    Addendum: addendum ?? {},
    Finished: finished(s),
    EntryCount: s.record.itemCount,
    AdditionalEntries: false,
  }
}

/**
 * The pipeline stats of a search as one set (the engine keeps no per-module or per-interval counters): what went
 * in and came out of the whole query so far, at its last update. `Set` is [] until there is a result.
 */
export function statsSet(s: Search, now: number) {
  const r = s.record
  const set =
    r.itemCount === 0
      ? []
      : [
          {
            TS: formatTime(r.lastUpdate),
            Stats: [
              {
                Name: 'quarry',
                Args: r.effectiveQuery,
                Duration: (r.finished || now) - r.started,
                InputBytes: r.storeSize,
                InputCount: r.itemCount,
                OutputBytes: r.storeSize,
                OutputCount: r.itemCount,
              },
            ],
          },
        ]
  return {
    Size: set.length,
    Current: formatTime(r.lastUpdate),
    RangeStart: formatTime(r.startRange),
    RangeEnd: formatTime(r.endRange),
    Set: set,
  }
}
