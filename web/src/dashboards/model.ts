// A dashboard as the API stores it and the `Data` layout the platform's GUI keeps in it (the spec's "Shape of
// Data"): searches (by query, by an existing search's ID, or by a library reference), tiles placed by `span` and
// drawn with a renderer and its options, and the dashboard's time frame. Quarry never reads `Data`, so whatever
// the console does not know (other keys, other versions) is kept as it came and written back unchanged. Pure: no
// request, no DOM, so it is tested on its own.

export interface Timeframe {
  /** An ISO 8601 duration (`PT1H`): the range ending now. */
  durationString?: string | null
  /** The GUI's name of the choice: a duration as above, or `custom` for start and end. */
  timeframe?: string
  start?: string | null
  end?: string | null
}

export interface DashboardSearch {
  alias?: string | null
  timeframe?: Timeframe | Record<string, never>
  query?: string
  searchID?: number | string
  reference?: { id: string; type: 'template' | 'savedQuery' | 'scheduledSearch'; extras?: { defaultValue?: string | null } }
}

export interface Span {
  col: number
  row: number
  x?: number
  y?: number
}

export interface Tile {
  id: number
  title: string
  renderer: string
  span: Span
  searchesIndex: number
  rendererOptions: Record<string, unknown>
}

export interface DashboardData {
  version?: number
  timeframe?: Timeframe
  searches: DashboardSearch[]
  tiles: Tile[]
  [other: string]: unknown
}

export interface Dashboard {
  ID: number
  GUID: string
  Name: string
  Description: string
  UID: number
  GIDs: number[] | null
  Global: boolean
  Created: string
  Updated: string
  Labels: string[] | null
  Data: unknown
}

/** The renderers a tile may name (a chart's kinds among them). */
export const RENDERERS = ['text', 'raw', 'table', 'chart', 'line', 'area', 'bar', 'pie', 'donut', 'numbercard', 'gauge', 'stackgraph'] as const

export const DEFAULT_TIMEFRAME: Timeframe = { durationString: 'PT1H', timeframe: 'PT1H', start: null, end: null }

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const num = (v: unknown, fallback: number) => (typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : fallback)

/** The stored `Data` read leniently: missing lists are empty, spans have sizes; unknown keys stay. */
export function readData(data: unknown): DashboardData {
  const d = isObject(data) ? data : {}
  const searches = Array.isArray(d.searches) ? d.searches.filter(isObject).map((s) => s as DashboardSearch) : []
  const tiles = (Array.isArray(d.tiles) ? d.tiles.filter(isObject) : []).map((t, i): Tile => {
    const span = isObject(t.span) ? t.span : {}
    return {
      ...t,
      id: num(t.id, i + 1),
      title: typeof t.title === 'string' ? t.title : '',
      renderer: typeof t.renderer === 'string' && t.renderer ? t.renderer : 'text',
      span: {
        col: Math.max(1, Math.round(num(span.col, 4))),
        row: Math.max(1, Math.round(num(span.row, 3))),
        ...(span.x !== undefined ? { x: Math.max(0, Math.round(num(span.x, 0))) } : {}),
        ...(span.y !== undefined ? { y: Math.max(0, Math.round(num(span.y, 0))) } : {}),
      },
      searchesIndex: Math.max(0, Math.round(num(t.searchesIndex, 0))),
      rendererOptions: isObject(t.rendererOptions) ? t.rendererOptions : {},
    }
  })
  return { ...d, searches, tiles, timeframe: isObject(d.timeframe) ? (d.timeframe as Timeframe) : undefined }
}

/** A new dashboard's Data: version 2, the last hour, nothing on it yet. */
export function emptyData(): DashboardData {
  return { version: 2, timeframe: { ...DEFAULT_TIMEFRAME }, searches: [], tiles: [] }
}

const DURATION = /^P(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/

/** Milliseconds of an ISO 8601 duration (weeks, days, hours, minutes, seconds), undefined when it is not one. */
export function durationMs(text: string | null | undefined): number | undefined {
  if (!text) return undefined
  const m = DURATION.exec(text.trim().toUpperCase())
  if (!m || text.trim().toUpperCase() === 'P' || text.trim().toUpperCase().endsWith('T')) return undefined
  const [w, d, h, min, s] = m.slice(1).map((x) => (x ? Number(x) : 0)) as [number, number, number, number, number]
  const ms = ((((w * 7 + d) * 24 + h) * 60 + min) * 60 + s) * 1000
  return ms > 0 ? ms : undefined
}

const validTime = (t: string | null | undefined) => (t && !/^0001-01-01/.test(t) && !Number.isNaN(Date.parse(t)) ? Date.parse(t) : undefined)

/**
 * The range a time frame names at `now`: its start and end when both are set (a custom range), else its duration
 * ending now; a frame naming neither is the last hour.
 */
export function rangeOf(frame: Timeframe | Record<string, never> | undefined, now = Date.now()): { start: number; end: number } {
  const f = (frame ?? {}) as Timeframe
  const start = validTime(f.start)
  const end = validTime(f.end)
  const duration = durationMs(f.durationString) ?? durationMs(f.timeframe)
  if (start !== undefined && end !== undefined && (f.timeframe === 'custom' || duration === undefined)) return { start, end }
  const span = duration ?? 3_600_000
  return { start: now - span, end: now }
}

/** Whether a search names a time frame of its own (else the dashboard's applies). */
export function hasOwnFrame(s: DashboardSearch): boolean {
  const f = s.timeframe as Timeframe | undefined
  return !!f && (!!durationMs(f.durationString) || !!durationMs(f.timeframe) || (!!validTime(f.start) && !!validTime(f.end)))
}

/** The grid's width in columns: wide enough for every tile's position and span (12 at least). */
export function gridColumns(tiles: Tile[]): number {
  return Math.max(12, ...tiles.map((t) => (t.span.x ?? 0) + t.span.col))
}

/** How a search is named in the editor and on tiles. */
export function searchLabel(s: DashboardSearch | undefined, index: number, libraryNames?: Map<string, string>): string {
  if (!s) return `search ${index + 1} (missing)`
  if (s.alias) return s.alias
  if (s.reference?.id) {
    const kind = s.reference.type === 'template' ? 'template' : s.reference.type === 'scheduledSearch' ? 'scheduled search' : 'library'
    return `${kind}: ${libraryNames?.get(s.reference.id) ?? s.reference.id.slice(0, 8)}`
  }
  if (s.searchID) return `search ${s.searchID}`
  return s.query ? s.query : `search ${index + 1}`
}

/** An ISO 8601 duration for a person: `PT1H` → `1 hour`, `P7D` → `7 days`, `PT1H30M` → `1 hour 30 minutes`. */
export function durationText(text: string): string {
  const m = DURATION.exec(text.trim().toUpperCase())
  if (!m) return text
  const units = ['week', 'day', 'hour', 'minute', 'second']
  const parts = m.slice(1).flatMap((x, i) => (x && Number(x) > 0 ? [`${Number(x)} ${units[i]}${Number(x) === 1 ? '' : 's'}`] : []))
  return parts.length ? parts.join(' ') : text
}
