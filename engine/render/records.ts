// The stored records of the value renderers (table, chart, gauge, numbercard, stackgraph) and how they are read
// back: one record per final entry, a line of JSON that starts with its TS (the results index reads it there):
//
//   {"TS":"2026-01-01T00:00:00.000Z","V":[["host","a"],["count",3]]}                        a plain entry
//   {"TS":"...","Span":60000,"By":["host"],"V":[["host","a"],["count",3]],"A":{"count":{"op":"count","s":<saved>}}}
//
// V holds the values the renderer shows, in order (numbers as JSON numbers, every other value as its text); a record
// of a condensed entry (Entry.condensed) adds its window (TS, Span: 0 for a whole-range result), the names of its keys
// and the saved aggregate behind each value (Aggregate.save()). Readers merge the aggregates of every record of one key
// within a range, which re-buckets a result to a coarser window (a zoom, a chart's points) without running the query
// again; a record whose aggregates cannot be loaded (an unknown op) contributes its stored value while it is alone.
//
// Aggregates are loaded by the kinds registered by op (registerAggregateKinds), else by the loader registered with
// registerAggregateLoader (the stats module's loadAggregate: one line where the engine is put together).
import type { Aggregate, AggregateKind } from '../aggregate'
import type { Entry } from '../entry'
import { type Value, numberText, valueText } from '../value'

/** A stored value: numbers stay numbers (finite ones), everything else is text. */
export type Cell = number | string

export function cellOf(v: Value | undefined): Cell {
  if (typeof v === 'number') return Number.isFinite(v) ? v : numberText(v)
  return valueText(v)
}

/** The text of a stored value (table cells, chart keys). */
export const cellText = (c: Cell | undefined): string => (c === undefined ? '' : typeof c === 'number' ? numberText(c) : c)

/** A saved aggregate in a record: its op and its saved state. */
interface SavedAggregate {
  op: string
  s: unknown
}

const kinds = new Map<string, AggregateKind>()

/** Makes aggregates of these kinds loadable from stored records (a later kind of the same op replaces an earlier). */
export function registerAggregateKinds(list: readonly AggregateKind[]): void {
  for (const k of list) kinds.set(k.op, k)
}

const loaders: ((saved: unknown) => Aggregate)[] = []

/**
 * Makes every aggregate a loader can load (the stats module's loadAggregate, which reads the op from the saved
 * state and knows ops that are no kind of their own, such as p95) loadable from stored records. Kinds registered by
 * op come first, then the loaders in the order registered: the first that loads (does not throw) wins.
 */
export function registerAggregateLoader(load: (saved: unknown) => Aggregate): void {
  if (!loaders.includes(load)) loaders.push(load)
}

export function loadSavedAggregate(saved: SavedAggregate): Aggregate | undefined {
  const kind = kinds.get(saved.op)
  if (kind) return kind.load(saved.s)
  for (const load of loaders) {
    try {
      return load(saved.s)
    } catch {
      // not this loader's
    }
  }
  return undefined
}

/**
 * The record of an entry for a value renderer: `names` are the values it shows (all of the entry's values when
 * undefined); built-ins (TAG, SRC, TIMESTAMP, DATA) are read by valueOf.
 */
export function valueRecord(e: Entry, names: readonly string[] | undefined, valueOf: (e: Entry, n: string) => Value | undefined): string {
  const pairs: [string, Cell][] = []
  if (names) {
    for (const n of names) {
      const v = valueOf(e, n)
      if (v !== undefined) pairs.push([n, cellOf(v)])
    }
  } else for (const [n, v] of e.values) pairs.push([n, cellOf(v)])
  const c = e.condensed
  let rec = `{"TS":"${new Date(c ? c.start : e.ts).toISOString()}"`
  if (c) {
    rec += `,"Span":${c.span},"By":${JSON.stringify(c.by)}`
    // the keys are part of the record even when not shown: they are what records of one group share
    for (const k of c.by) if (!pairs.some(([n]) => n === k)) pairs.push([k, cellOf(valueOf(e, k))])
  }
  rec += `,"V":${JSON.stringify(pairs)}`
  if (c && c.aggregates.size > 0) {
    const aggs: Record<string, SavedAggregate> = {}
    for (const [n, a] of c.aggregates) aggs[n] = { op: a.op, s: a.save() }
    rec += `,"A":${JSON.stringify(aggs)}`
  }
  return `${rec}}`
}

/** A stored record read back. */
export interface ValueRow {
  ts: number
  /** The window's length (0: whole range); undefined for a plain entry. */
  span?: number
  by: string[]
  values: Map<string, Cell>
  saved?: Record<string, SavedAggregate>
}

export function parseValueRecord(line: string): ValueRow {
  const r = JSON.parse(line) as { TS?: string; Span?: number; By?: string[]; V?: [string, Cell][]; A?: Record<string, SavedAggregate>; Count?: number }
  const values = new Map<string, Cell>(Array.isArray(r.V) ? r.V : [])
  // a record of the count renderer (a query ending in `count`) or one imported from elsewhere
  if (!r.V && typeof r.Count === 'number') values.set('count', r.Count)
  return { ts: r.TS ? Date.parse(r.TS) : 0, span: typeof r.Span === 'number' ? r.Span : undefined, by: Array.isArray(r.By) ? r.By : [], values, saved: r.A }
}

/**
 * Values of one group (one key, one window) as records are merged into it: aggregates merge when they can be
 * loaded; the other values are those of the first record.
 */
export class Merged {
  readonly values: Map<string, Cell>
  /** The names of the key values (the first record's By). */
  readonly by: string[]
  private readonly aggs = new Map<string, Aggregate | null>()
  records = 0

  constructor(
    readonly ts: number,
    first: ValueRow,
  ) {
    this.values = new Map(first.values)
    this.by = first.by
    this.add(first)
  }

  add(row: ValueRow): void {
    this.records++
    if (!row.saved) return
    for (const [name, saved] of Object.entries(row.saved)) {
      const had = this.aggs.get(name)
      if (had === null) continue
      const loaded = loadSavedAggregate(saved)
      if (!loaded) {
        // unknown op: the stored value stands while it is the only one; merged with others it is unknown
        this.aggs.set(name, null)
        if (this.records > 1) this.values.set(name, '')
        continue
      }
      if (had === undefined) this.aggs.set(name, loaded)
      else had.merge(loaded)
    }
    if (this.records > 1) for (const [name, a] of this.aggs) if (a) this.values.set(name, cellOf(a.result()))
  }

  /** The aggregate of a value (a copy is not made: callers merge it into others only once). */
  aggregate(name: string): Aggregate | undefined {
    return this.aggs.get(name) ?? undefined
  }

  /** A value as a number, or null (absent, or no number). */
  number(name: string): number | null {
    const v = this.values.get(name)
    if (typeof v === 'number') return v
    if (v === undefined || v === '') return null
    const n = Number(v)
    return Number.isFinite(n) && /^\s*[+-]?(\d|\.\d)/.test(v) ? n : null
  }
}

/** What a client asks of a renderer: entries First ≤ i < Last, within [from, to) (0: unbounded on that side). */
export interface RenderRequest {
  first: number
  last: number
  from: number
  to: number
  /** The search's own range, for a request that names none (a chart's points are spread over it). */
  start: number
  end: number
  /** When the search last stored results: the TS of a row that has no time of its own. */
  updated: number
}

/** A renderer's answer: Entries in the clients' shape, and whether more follow the ones given. */
export interface RenderAnswer {
  entries: unknown
  /** How many of the renderer's items (rows, points, gauges) the answer holds. */
  count: number
  more: boolean
  /** Fields the renderer's answer carries beside Entries (point2point: ValueNames). */
  extra?: Record<string, unknown>
}

/** Where a renderer reads stored records: every record in order (scanned in batches), and records by position. */
export interface RecordSource {
  /** How many records are stored now. */
  count: number
  /** Records first ≤ i < last. */
  read(first: number, last: number): Promise<string[]>
  /**
   * Records first ≤ i < last counted within those whose TS lies in [from, to) (0: unbounded), and whether more of
   * them follow: plain entries of a zoom are paged without reading the others (the search's index finds them).
   */
  readWithin?(from: number, to: number, first: number, last: number): Promise<{ lines: string[]; more: boolean }>
}

/** Records read per batch by a scan; the caller's event loop turns between batches. */
export const SCAN_BATCH = 2000

/** Every stored record, in order, in batches. */
export async function* scan(src: RecordSource): AsyncGenerator<string> {
  for (let i = 0; i < src.count; i += SCAN_BATCH) {
    for (const line of await src.read(i, Math.min(i + SCAN_BATCH, src.count))) yield line
    await new Promise<void>((resolve) => setImmediate(resolve))
  }
}

/** Whether a time lies within [from, to) (0: unbounded on that side). */
export function within(ts: number, from: number, to: number): boolean {
  return (from === 0 || ts >= from) && (to === 0 || ts < to)
}

/**
 * Whether a record belongs to [from, to): a plain entry by its time; a window when it overlaps the range (its start
 * may lie before the range: windows are aligned on multiples of their length); a whole-range result (span 0, or a
 * record without time) always, since it cannot be split.
 */
export function inRange(row: ValueRow, from: number, to: number): boolean {
  if (row.ts === 0 || row.span === 0) return true
  if (row.span === undefined) return within(row.ts, from, to)
  return (from === 0 || row.ts + row.span > from) && (to === 0 || row.ts < to)
}

/** The most rows (groups) a value renderer builds for one answer or download: the bound of its memory. */
export const MAX_GROUPS = 100_000

/**
 * The records within a range grouped by key: plain entries each on their own, condensed ones merged per key over
 * every window of the range (a table or gauge of a zoom). The groups come in the order their first record came; past
 * MAX_GROUPS (or `limit`) no group is started (records of groups already started still merge), and `cut` says so.
 */
export async function collapse(src: RecordSource, from: number, to: number, limit = MAX_GROUPS): Promise<Merged[] & { cut?: boolean }> {
  const groups = new Map<string, Merged>()
  const out: Merged[] & { cut?: boolean } = []
  for await (const line of scan(src)) {
    const row = parseValueRecord(line)
    if (!inRange(row, from, to)) continue
    if (row.span === undefined) {
      if (out.length >= limit) {
        out.cut = true
        continue
      }
      out.push(new Merged(row.ts, row))
      continue
    }
    const key = JSON.stringify(row.by.map((k) => row.values.get(k) ?? null))
    const g = groups.get(key)
    if (g) g.add(row)
    else if (out.length >= limit) out.cut = true
    else {
      const m = new Merged(row.ts, row)
      groups.set(key, m)
      out.push(m)
    }
  }
  return out
}
