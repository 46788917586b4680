// The wire shapes of the two WebSocket protocols, as the clients of this API family speak them (the TypeScript
// client's RawSearchMessageSent/Received, its query-parsing and system-stats subscriptions; the Go client's
// StartSearchRequest/Response, ParseSearchResponse, SearchInfo, BaseResponse). Every message is one JSON object:
//   {"Subs": [...]}                      subscribe to message types (answered {"Resp": "ACK"})
//   {"type": <name>, "data": {...}}      a request or an answer of that type
// Answers to a running search's requests travel under the search's own type (its OutputSearchSubproto), with
// `data.ID` the request id below.
import type { Search } from '../../server/search/manager'
import { stateWords } from '../../server/search/manager'
import { formatTime } from '../../server/runtime/time'
import { goDuration } from '../searchctrl/schema'
import { compileQuery } from '../../engine/query'
import { type CompiledRenderer, textRenderer } from '../../engine/render/renderer'

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

const renderers = new WeakMap<Search, CompiledRenderer>()

/**
 * The renderer of a search: its effective query's, compiled once per search (cheap: regular expressions compile
 * lazily and are never used here). A query the engine no longer compiles (an archive imported from elsewhere) is
 * shown as text.
 */
export function rendererOf(s: Search): CompiledRenderer {
  let r = renderers.get(s)
  if (!r) {
    try {
      r = compileQuery(s.record.effectiveQuery).renderer
    } catch {
      r = textRenderer([])
    }
    renderers.set(s, r)
  }
  return r
}

/** The renderer's name the clients choose their reading by (RenderModule, RendererMod). */
export function renderModuleOf(s: Search): string {
  return rendererOf(s).name
}

/** The query's tags as the clients list them (`Tags`). */
export function tagsOf(effectiveQuery: string): string[] {
  const m = /^tag=(\S+)/.exec(effectiveQuery)
  return m ? m[1]!.split(',') : []
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
    TimeZoomDisabled: true,
    RenderDownloadFormats: [...rendererOf(s).downloads],
    Metadata: r.metadata ?? {},
    CollapsingIndex: 0,
    NoHistory: r.noHistory,
    MinZoomWindow: 1,
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
