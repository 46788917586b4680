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
import { type CompiledQuery, compileQuery } from '../../engine/query'
import { MAX_BUCKETS, statsBucketMs } from '../../engine/pipeline-stats'
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
  STATS_GET_OVERVIEW: 0x7f000007,
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

/** Renderers whose results can be re-read for a narrower time range (the clients' zoom): entries and time series. */
const ZOOMABLE = new Set(['text', 'raw', 'hex', 'pcap', 'chart', 'stackgraph'])

/**
 * SearchHints of the Go client (the parse, launch and attach answers): the renderer, each module's values
 * (ModuleHint: ProducedEVs, ConsumedEVs, ResourcesNeeded, Condensing), the first condensing module's index
 * (CollapsingIndex: the number of modules when none condenses), and whether zooming works: for entries and charts,
 * and for a table of entries (a table after a condensing module is one answer for the whole range).
 * MinZoomWindow (seconds): the window of a condensing module's `over` (the widest), 0 without one (minZoomWindow then
 * gives the search's stats resolution).
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
    MinZoomWindow: windowMs > 0 ? Math.max(1, Math.ceil(windowMs / 1000)) : 0,
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

/** Searches launched as previews (StartSearchRequest.Preview) by this process: SearchInfo.Preview. */
const previews = new WeakSet<Search>()
export const markPreview = (s: Search) => void previews.add(s)

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
    RenderDownloadFormats: [...rendererOf(s).downloads],
    Metadata: r.metadata ?? {},
    CollapsingIndex: 0,
    NoHistory: r.noHistory,
    MinZoomWindow: minZoomWindow(s),
    Tags: tagsOf(r.effectiveQuery),
    Import: r.import
      ? { Imported: true, Time: formatTime(r.import.time), BatchName: r.import.batchName, BatchInfo: r.import.batchInfo }
      : { Imported: false, Time: formatTime(0), BatchName: '', BatchInfo: '' },
    Preview: previews.has(s),
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
 * The finest zoom (seconds) of the search (the platform's MinZoomWindow): a condensing module's `over` window when the
 * query has one (its results are per window), else the width of its stats buckets now (engine/pipeline-stats.ts: the
 * finest resolution its counters keep; for a search whose counters are gone, the width its range allows).
 */
export function minZoomWindow(s: Search): number {
  const over = searchHints(s)?.MinZoomWindow ?? 0
  if (over > 0) return over
  return (s.stats?.bucketMs ?? statsBucketMs(s.record.startRange, s.record.endRange)) / 1000
}

/** Windows a client may ask for in one stats request. */
const DEFAULT_SET_COUNT = 100

/**
 * The answer (`Stats`: the Go client's SearchStatsResponse) to a stats request, from the search's pipeline counters:
 *   STATS_SIZE          Size: how many windows of the search's finest width hold something
 *   STATS_RANGE         RangeStart, RangeEnd: the search's range
 *   STATS_GET           Set: SetCount windows over the search's range (the overview)
 *   STATS_GET_RANGE     Set: SetCount windows over [SetStart, SetEnd] (the zoom; SetEnd inclusive)
 *   STATS_GET_SUMMARY   Set: one set over everything
 *   STATS_GET_LOCATION  Current: how far the search has read
 *   STATS_GET_OVERVIEW  OverviewSet: the entries and bytes out of the pipeline per window
 * Each set has one row per module (Name, Args, Duration, InputCount, OutputCount, InputBytes, OutputBytes); every
 * window asked for is listed (zeros where nothing was counted), so a client gets the bins it asks for. A search loaded from storage has no counters: one set of what the
 * whole query gave.
 */
export function statsAnswer(s: Search, req: number, request: unknown, now: number) {
  const r = s.record
  const ask = typeof request === 'object' && request !== null ? (request as Record<string, unknown>) : {}
  const setCount = Number.isSafeInteger(ask.SetCount) && (ask.SetCount as number) > 0 ? Math.min(ask.SetCount as number, MAX_BUCKETS) : DEFAULT_SET_COUNT
  const time = (v: unknown, fallback: number) => {
    const t = typeof v === 'string' ? Date.parse(v) : Number.NaN
    return Number.isFinite(t) ? t : fallback
  }
  const frame = { Current: formatTime(r.lastUpdate), RangeStart: formatTime(r.startRange), RangeEnd: formatTime(r.endRange) }
  const stats = s.stats
  if (!stats) return statsSet(s, now)
  const withTime = (sets: { TS: number; Stats: unknown[] }[]) => sets.map((x) => ({ TS: formatTime(x.TS), Stats: x.Stats }))
  switch (req) {
    case REQ.STATS_GET_RANGE: {
      const start = time(ask.SetStart, r.startRange)
      const end = Math.max(start, time(ask.SetEnd, r.endRange))
      const set = withTime(stats.sets(setCount, start, end))
      return { ...frame, Size: set.length, Set: set }
    }
    case REQ.STATS_GET_SUMMARY: {
      const set = [{ TS: formatTime(r.startRange), Stats: stats.summary() }]
      return { ...frame, Size: 1, Set: set }
    }
    case REQ.STATS_GET_OVERVIEW: {
      const start = time(ask.SetStart, r.startRange)
      const end = Math.max(start, time(ask.SetEnd, r.endRange))
      const overview = stats.overview(setCount, start, end).map((o) => ({ Count: o.Count, Bytes: o.Bytes, TS: formatTime(o.TS) }))
      return { ...frame, Size: overview.length, OverviewSet: overview }
    }
    case REQ.STATS_SIZE:
      return { ...frame, Size: stats.filled() }
    case REQ.STATS_GET: {
      const set = withTime(stats.sets(setCount, r.startRange, r.endRange))
      return { ...frame, Size: set.length, Set: set }
    }
    default: // STATS_RANGE, STATS_GET_LOCATION
      return { ...frame, Size: 0, Set: [] }
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
