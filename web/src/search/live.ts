// One search followed over the search WebSocket, as the clients of this API family drive it (docs/websocket.md):
// launched (`search`, then the acceptance) or attached (`attach`), then read by requests on its subprotocol —
// the renderer's entries (REQ_GET_ENTRIES, or REQ_TS_RANGE for a zoomed window), the overview counters
// (REQ_STATS_GET) and the details (REQ_SEARCH_DETAILS).
//
// Guarantees:
// - `state` and `result` always describe the current window: an answer to a request made for an earlier window
//   (before a zoom or a page change) is dropped.
// - While the search is not finished it is read again every POLL_MS (live updates as it grows; sooner just after the start); once finished, one
//   last read and the polling stops. At most one read is in flight per search, so a slow server is never flooded.
// - Every failure ends in `state.error` in the server's own words (a refused query, a search deleted meanwhile, a
//   lost connection); nothing throws out of the polling.
// - `close()` detaches the socket from the search (REQ_CLOSE; a search neither backgrounded nor saved is then
//   removed after the server's grace period) and stops everything; calling it again does nothing.
import { signal, type Signal } from '@preact/signals'
import { type Msg, SearchSocket, SocketError } from './socket'

/** Request ids of a search subprotocol (plugins/ws/protocol.ts REQ). */
export const REQ = {
  CLOSE: 0x1,
  ENTRY_COUNT: 0x3,
  SEARCH_DETAILS: 0x4,
  GET_ENTRIES: 0x10,
  TS_RANGE: 0x12,
  STATS_GET: 0x7f000003,
  STATS_GET_RANGE: 0x7f000004,
} as const

/**
 * How often a search that is not finished is read again: FIRST_POLL_MS after its first read, each wait then twice
 * the last, up to POLL_MS (a short search is seen finished at once, a long one costs a read per POLL_MS).
 */
export const POLL_MS = 700
const FIRST_POLL_MS = 50
/** Windows of the overview histogram. */
export const OVERVIEW_WINDOWS = 100

/** Renderers whose answers are entries (pages of them); the others answer values for the whole window. */
export const ENTRY_RENDERERS = new Set(['text', 'raw', 'hex', 'pcap'])

/** How much of the result each renderer asks for by default: entries per page, table rows, chart points. */
export function defaultPage(renderer: string): { first: number; last: number } {
  if (ENTRY_RENDERERS.has(renderer)) return { first: 0, last: 100 }
  if (renderer === 'chart' || renderer === 'stackgraph') return { first: 0, last: 200 }
  return { first: 0, last: 1000 }
}

export interface ModuleHint {
  Name: string
  ProducedEVs: string[]
  ConsumedEVs: string[]
  ResourcesNeeded: string[]
  Condensing: boolean
}

/** The parse exchange's answer, with the error's position read from its message. */
export interface ParseResult {
  good: boolean
  error?: string
  /** 0-based character offset of the problem in the query (the message's "at position N"). */
  position?: number
  moduleIndex: number
  renderModule?: string
  moduleHints: ModuleHint[]
  tags: string[]
  parsedQuery: string
}

let parseSequence = 0

/** Checks a query as a launch would, without running it (the `parse` exchange). */
export async function parse(query: string): Promise<ParseResult> {
  const sequence = ++parseSequence
  const d = await SearchSocket.get().send({ type: 'parse', data: { SearchString: query, Sequence: sequence } }, 'parse', true)
  const error = typeof d.ParseError === 'string' && d.ParseError ? d.ParseError : undefined
  const at = error ? /at position (\d+)\s*$/.exec(error) : null
  return {
    good: d.GoodQuery === true,
    error: d.GoodQuery === true ? undefined : (error ?? 'the query was refused'),
    position: at ? Number(at[1]) : undefined,
    moduleIndex: typeof d.ModuleIndex === 'number' ? d.ModuleIndex : 0,
    renderModule: typeof d.RenderModule === 'string' ? d.RenderModule : undefined,
    moduleHints: Array.isArray(d.ModuleHints) ? (d.ModuleHints as ModuleHint[]) : [],
    tags: Array.isArray(d.Tags) ? (d.Tags as string[]) : [],
    parsedQuery: typeof d.ParsedQuery === 'string' ? d.ParsedQuery : query,
  }
}

export interface LiveState {
  /** The search's id ('' until the server gave one). */
  id: string
  /** The renderer's name (text, raw, hex, pcap, table, chart, gauge, numbercard, stackgraph). */
  renderer: string
  /** The share of the work done, from 0 to 1, when known: 1 once finished, null while running (the server does not say). */
  progress: number | null
  finished: boolean
  /** What went wrong, in the server's words. */
  error?: string
  /** Results so far (the search's ItemCount). */
  entries: number
  query: string
  /** The search's range (milliseconds). */
  start: number
  end: number
  /** Whether the renderer answers for a narrower window (chart, entries, tables of entries). */
  zoomable: boolean
  /** The window the result is for, when zoomed; undefined for the whole range. */
  window?: { start: number; end: number }
  /** The page of the result asked for (entries First ≤ n < Last; points of a chart). */
  page: { first: number; last: number }
}

/** SearchInfo, as REQ_SEARCH_DETAILS answers it (the fields the console reads). */
export interface SearchInfo {
  ID: string
  UserQuery: string
  EffectiveQuery: string
  StartRange: string
  EndRange: string
  State: string
  ItemCount: number
  StoreSize: number
  RenderDownloadFormats: string[]
  TimeZoomDisabled: boolean
  MinZoomWindow: number
  Metadata: unknown
  Error?: string
}

/**
 * The latest answer to the renderer's entries request: `Entries` in the renderer's wire shape (entries with `Tags`
 * for text/raw/hex/pcap; `{Columns, Rows}` for table; `{Names, KeyComps, Categories, Values}` for chart;
 * `[{Name, Magnitude, Min, Max}]` for gauge and numbercard; `[{Key, Values}]` for stackgraph).
 */
export interface EntriesAnswer {
  Entries: unknown
  Tags?: Record<string, number>
  EntryRange?: { First: number; Last: number; StartTS?: string; EndTS?: string }
  AdditionalEntries?: boolean
  Finished: boolean
  EntryCount: number
}

/** The overview histogram: entries read per window of the search's range. */
export interface Overview {
  start: number
  end: number
  windowMs: number
  /** One count per window, from `start`. */
  counts: number[]
}

export interface StartOptions {
  query: string
  /** Date, milliseconds or RFC 3339 text. */
  start: Date | number | string
  /** Date, milliseconds or RFC 3339 text; absent: now. */
  end?: Date | number | string
  background?: boolean
  metadata?: unknown
  /** The page asked first (defaultPage of the renderer otherwise). */
  page?: { first: number; last: number }
}

const toIso = (t: Date | number | string) => (t instanceof Date ? t.toISOString() : typeof t === 'number' ? new Date(t).toISOString() : t)
const toMs = (t: unknown) => (typeof t === 'string' ? Date.parse(t) : Number.NaN)
const message = (e: unknown) => (e instanceof Error ? e.message : String(e))

/** Whether two entries answers show the same thing (their entries, range and whether there is more). */
function sameAnswer(shown: EntriesAnswer | undefined, next: Msg): boolean {
  if (!shown) return false
  return (
    shown.Finished === next.Finished &&
    shown.AdditionalEntries === next.AdditionalEntries &&
    JSON.stringify(shown.EntryRange) === JSON.stringify(next.EntryRange) &&
    JSON.stringify(shown.Entries) === JSON.stringify(next.Entries) &&
    JSON.stringify(shown.Tags) === JSON.stringify(next.Tags)
  )
}

function sameOverview(a: Overview | undefined, b: Overview): boolean {
  return a !== undefined && a.start === b.start && a.end === b.end && a.counts.length === b.counts.length && a.counts.every((n, i) => n === b.counts[i])
}

export class LiveSearch {
  readonly state: Signal<LiveState>
  /** The latest wire answer of the renderer for the current window and page. */
  readonly result = signal<EntriesAnswer | undefined>(undefined)
  /** The overview histogram (the whole range), read with the result. */
  readonly stats = signal<Overview | undefined>(undefined)
  /** The search's details (state words, download formats), read at the start and once finished. */
  readonly info = signal<SearchInfo | undefined>(undefined)

  private socket: SearchSocket | undefined
  private subproto = ''
  private release: (() => void) | undefined
  private timer: ReturnType<typeof setTimeout> | undefined
  private reading = false
  private nextWait = FIRST_POLL_MS
  private again = false
  private generation = 0
  private closed = false
  private pageGiven: boolean

  private constructor(query: string, start: number, end: number, page?: { first: number; last: number }) {
    this.pageGiven = page !== undefined
    this.state = signal<LiveState>({ id: '', renderer: '', progress: null, finished: false, entries: 0, query, start, end, zoomable: false, page: page ?? { first: 0, last: 100 } })
  }

  /** Launches a search; the returned search reports a refusal in `state.error` (it never throws). */
  static start(opts: StartOptions): LiveSearch {
    const end = opts.end === undefined ? Date.now() : opts.end
    const live = new LiveSearch(opts.query, toMs(toIso(opts.start)), toMs(toIso(end)), opts.page)
    void live.launch(opts, end)
    return live
  }

  /** Attaches to a search that exists (one of the caller's, or shared with them). */
  static attach(searchID: string, page?: { first: number; last: number }): LiveSearch {
    const live = new LiveSearch('', 0, 0, page)
    live.patch({ id: searchID })
    void live.attachTo(searchID)
    return live
  }

  private patch(p: Partial<LiveState>): void {
    this.state.value = { ...this.state.value, ...p }
  }

  private fail(e: unknown): void {
    if (this.closed) return
    this.patch({ error: message(e) })
  }

  private connect(): SearchSocket {
    const socket = SearchSocket.get()
    this.socket = socket
    this.release = socket.use((why) => {
      if (this.closed) return
      this.stopPolling()
      if (!this.state.value.finished) this.fail(why)
    })
    return socket
  }

  private async launch(opts: StartOptions, end: Date | number | string): Promise<void> {
    try {
      const socket = this.connect()
      const answer = await socket.send(
        {
          type: 'search',
          data: { SearchString: opts.query, SearchStart: toIso(opts.start), SearchEnd: toIso(end), Background: opts.background === true, Metadata: opts.metadata ?? {}, Addendum: {} },
        },
        'search',
        true,
      )
      if (typeof answer.Error === 'string' && answer.Error) {
        this.release?.()
        return this.fail(answer.Error)
      }
      this.subproto = String(answer.OutputSearchSubproto)
      await socket.post({ type: 'search', data: { OK: !this.closed, OutputSearchSubproto: this.subproto } })
      if (this.closed) return this.release?.()
      const renderer = String(answer.RenderModule ?? 'text')
      this.patch({
        id: String(answer.SearchID),
        renderer,
        start: toMs(answer.SearchStartRange) || this.state.value.start,
        end: toMs(answer.SearchEndRange) || this.state.value.end,
        zoomable: answer.TimeZoomDisabled !== true,
        page: this.pageGiven ? this.state.value.page : defaultPage(renderer),
      })
      this.read()
      void this.details()
    } catch (e) {
      this.fail(e)
    }
  }

  private async attachTo(id: string): Promise<void> {
    try {
      const socket = this.connect()
      const answer = await socket.send({ type: 'attach', data: { ID: id } })
      this.subproto = String(answer.Subproto)
      const info = (answer.Info ?? {}) as SearchInfo
      if (this.closed) return void socket.post({ type: this.subproto, data: { ID: REQ.CLOSE } }).catch(() => undefined)
      const renderer = String(answer.RendererMod ?? 'text')
      this.info.value = info
      this.patch({
        renderer,
        query: info.UserQuery ?? '',
        start: toMs(info.StartRange),
        end: toMs(info.EndRange),
        zoomable: info.TimeZoomDisabled !== true,
        entries: info.ItemCount ?? 0,
        page: this.pageGiven ? this.state.value.page : defaultPage(renderer),
      })
      this.read()
    } catch (e) {
      this.fail(e)
    }
  }

  /** A request on the search's subprotocol; its answer's data. */
  private ask(data: Msg): Promise<Msg> {
    if (!this.socket || !this.subproto) return Promise.reject(new SocketError('the search has not started'))
    return this.socket.send({ type: this.subproto, data })
  }

  /** Reads the details again (state words, download formats, an error the search ended with). */
  async details(): Promise<SearchInfo | undefined> {
    try {
      const d = await this.ask({ ID: REQ.SEARCH_DETAILS })
      const info = d.SearchInfo as SearchInfo
      if (!this.closed) this.info.value = info
      return info
    } catch (e) {
      this.fail(e)
      return undefined
    }
  }

  /** Reads the result of the current window and page, and the overview; schedules the next read while it runs. */
  private read(): void {
    if (this.closed || !this.subproto) return
    if (this.reading) {
      this.again = true
      return
    }
    this.stopPolling()
    this.reading = true
    this.again = false
    const generation = this.generation
    const s = this.state.value
    const entryRange = s.window
      ? { First: s.page.first, Last: s.page.last, StartTS: new Date(s.window.start).toISOString(), EndTS: new Date(s.window.end).toISOString() }
      : { First: s.page.first, Last: s.page.last }
    const entries = this.ask({ ID: s.window ? REQ.TS_RANGE : REQ.GET_ENTRIES, EntryRange: entryRange, Addendum: {} })
    const overview = this.ask({ ID: REQ.STATS_GET, Stats: { SetCount: OVERVIEW_WINDOWS } })
    void Promise.all([entries, overview])
      .then(([e, o]) => {
        if (this.closed) return
        const wasFinished = this.state.value.finished
        const finished = e.Finished === true
        const count = typeof e.EntryCount === 'number' ? e.EntryCount : 0
        // an answer like the one shown changes nothing on the page: nothing is drawn again
        if (generation === this.generation && !sameAnswer(this.result.value, e)) this.result.value = e as unknown as EntriesAnswer
        const overview = this.overviewOf(o.Stats as Msg)
        if (!sameOverview(this.stats.value, overview)) this.stats.value = overview
        this.patch({ finished, entries: count, progress: finished ? 1 : null })
        if (finished && !wasFinished) void this.details().then((info) => info?.Error && this.fail(info.Error))
        this.reading = false
        if (this.again || generation !== this.generation) this.read()
        else if (!finished) {
          this.timer = setTimeout(() => this.read(), this.nextWait)
          this.nextWait = Math.min(POLL_MS, this.nextWait * 2)
        }
      })
      .catch((e: unknown) => {
        this.reading = false
        this.fail(e)
      })
  }

  private overviewOf(stats: Msg | undefined): Overview {
    const { start, end } = this.state.value
    const windowMs = Math.max(1, (end - start) / OVERVIEW_WINDOWS)
    const counts = new Array<number>(OVERVIEW_WINDOWS).fill(0)
    const sets = Array.isArray(stats?.Set) ? (stats.Set as { TS: string; Stats: { InputCount: number }[] }[]) : []
    for (const set of sets) {
      const i = Math.min(OVERVIEW_WINDOWS - 1, Math.max(0, Math.round((Date.parse(set.TS) - start) / windowMs)))
      // the entries read: the first module's input
      counts[i]! += set.Stats[0]?.InputCount ?? 0
    }
    return { start, end, windowMs, counts }
  }

  private stopPolling(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
  }

  /** Reads the result for the window [start, end) of the search's range (the zoom); null, null: the whole range. */
  zoom(start: number | null, end: number | null): void {
    const s = this.state.value
    const window = start === null || end === null ? undefined : { start: Math.max(s.start, Math.min(start, end)), end: Math.min(s.end, Math.max(start, end)) }
    this.patch({ window: window && window.end > window.start ? window : undefined })
    this.generation++
    this.read()
  }

  /** Reads another page of the result (entries First ≤ n < Last; points of a chart). */
  setPage(first: number, last: number): void {
    this.patch({ page: { first: Math.max(0, first), last: Math.max(first + 1, last) } })
    this.generation++
    this.read()
  }

  /** Reads the result again now (after a stop, say). */
  refresh(): void {
    this.read()
  }

  /** Detaches from the search and stops reading it. */
  close(): void {
    if (this.closed) return
    this.closed = true
    this.stopPolling()
    const socket = this.socket
    if (socket && this.subproto && !socket.closed) void socket.send({ type: this.subproto, data: { ID: REQ.CLOSE } }).catch(() => undefined)
    this.release?.()
  }
}
