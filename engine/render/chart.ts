// chart (gravwell/wiki search/chart/chart.md): series of numbers over time.
//   chart [<value> ...] [by <key> ...] [limit <n>]
// Each value is a category; each distinct combination of the `by` keys is a series of each category that has it (a
// record of stats with fewer keys than named goes to the series of the keys it has: the platform's "intelligent
// keying"). Series are named by their keys joined by a blank (prefixed by the category when there are several); a
// category without keys is one series named by the category.
//
// One point per time window: a request asks for Last - First points over its range (StartTS, EndTS; the search's
// range when absent), and the chart re-buckets its stored windows to the smallest multiple of them that gives at most
// that many points, by merging their aggregates (the same result as running the query with that window). Points are
// aligned as the stored windows are (the chart's own: on multiples of their length since the epoch), so that each
// holds whole stored windows; a stored window that straddles the start of the range counts in the first point. A
// series with no record in a window has null there.
// `limit n` (default 24) keeps the n-1 series of a category with the largest magnitude over the range and merges the
// others into one series `other` ("other <category>" with several categories), with the same math as the others.
// At most MAX_GROUPS series are considered (records of keys past them are left out of the answer).
//
// Entries that come from a condensing module (stats, with or without `over`) are stored as they are. Plain entries
// are condensed here, per window of the search's range divided in at most NATIVE_WINDOWS (at least one second):
// a category is the mean of that value, or the number of entries for `count` when the entries have no such value.
// `chart` alone charts the number of entries.
// Downloads: csv (a header row TS and the series, then one row per stored window from the first that holds data to
// the last; numbers as they are, empty for null) and json (an array of objects, TS and each series).
import type { Aggregate, AggregateKind } from '../aggregate'
import { valueOf, type Entry } from '../entry'
import { SearchLimitError } from '../errors'
import { quote } from '../lex'
import { type ModuleDef, type Sink, argError, readFlags } from '../module'
import { toNumber } from '../value'
import { csvLine } from './csv'
import {
  MAX_GROUPS,
  Merged, type RecordSource, type ValueRow, cellText, parseValueRecord, inRange, registerAggregateKinds, scan, valueRecord,
} from './records'
import type { CompiledRenderer } from './renderer'

/** The default of `limit`: series shown per category before the rest is merged into `other`. */
export const DEFAULT_CHART_LIMIT = 24
const MAX_CHART_LIMIT = 1000
/** Points a request may ask for. */
export const MAX_POINTS = 10_000
/** Points times series an answer or download holds at most (the bound of its memory). */
const MAX_CELLS = 2_000_000
/** Windows of the search's range a chart of plain entries keeps (its finest zoom). */
export const NATIVE_WINDOWS = 1000

const SECOND = 1000
const NICE = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400].map((s) => s * SECOND)

/** The window of a chart of plain entries over a range: a round length that splits it in at most NATIVE_WINDOWS. */
export function nativeWindow(start: number, end: number): number {
  const want = Math.max(SECOND, Math.ceil((end - start) / NATIVE_WINDOWS))
  for (const w of NICE) if (w >= want) return w
  const day = 86_400_000
  return Math.ceil(want / day) * day
}

/**
 * The window of `points` over [from, to) for stored windows of `span` that start at `phase` plus multiples of span:
 * the smallest multiple of span whose windows (starting at phase plus its multiples) covering the range are at most
 * `points`.
 */
export function bucketWindow(span: number, from: number, to: number, points: number, phase = 0): number {
  let w = span * Math.max(1, Math.ceil((to - from) / (points * span)))
  while (Math.floor((to - 1 - phase) / w) - Math.floor((from - phase) / w) + 1 > points) w += span
  return w
}

// The aggregates a chart keeps itself for plain entries (ops of their own: the stats module's kinds are its own).
class CountAgg implements Aggregate {
  readonly op = 'chart.count'
  constructor(public n = 0) {}
  add(): void {
    this.n++
  }
  merge(o: Aggregate): void {
    this.n += (o as CountAgg).n
  }
  result() {
    return this.n
  }
  save() {
    return this.n
  }
}
class MeanAgg implements Aggregate {
  readonly op = 'chart.mean'
  constructor(
    public sum = 0,
    public n = 0,
  ) {}
  add(v: Parameters<Aggregate['add']>[0]): void {
    const x = toNumber(v)
    if (x === null) return
    this.sum += x
    this.n++
  }
  merge(o: Aggregate): void {
    this.sum += (o as MeanAgg).sum
    this.n += (o as MeanAgg).n
  }
  result() {
    return this.n === 0 ? Number.NaN : this.sum / this.n
  }
  save() {
    return [this.sum, this.n]
  }
}
export const chartAggregateKinds: AggregateKind[] = [
  { op: 'chart.count', create: () => new CountAgg(), load: (s) => new CountAgg(Number(s) || 0) },
  {
    op: 'chart.mean',
    create: () => new MeanAgg(),
    load: (s) => (Array.isArray(s) ? new MeanAgg(Number(s[0]) || 0, Number(s[1]) || 0) : new MeanAgg()),
  },
]
registerAggregateKinds(chartAggregateKinds)

interface Series {
  id: string
  category: string
  keys: string[]
  name: string
  total: Merged
}

interface ChartShape {
  Names: string[]
  KeyComps: { Keys: string[] }[]
  Categories: string[]
  Values: { TS: string; Data: (number | null)[] }[]
}

export const chart: ModuleDef = {
  name: 'chart',
  kind: 'render',
  info: 'Charts numbers over time: each value named (a category) by the keys after by, one point per time window; limit n keeps the n-1 largest series and merges the rest into other.',
  examples: ['chart count', 'chart count by host', 'chart mean by host limit 10'],
  compile(call) {
    const { rest } = readFlags(call, {})
    const categories: string[] = []
    const by: string[] = []
    let limit = DEFAULT_CHART_LIMIT
    let limitGiven = false
    let inBy = false
    for (let i = 0; i < rest.length; i++) {
      const t = rest[i]!
      if (t.kind === 'word' && t.text === 'limit') {
        const n = rest[i + 1]
        if (!n) throw argError(call, 'limit needs a number of series', call.end)
        if (!/^\d+$/.test(n.text) || Number(n.text) < 1 || Number(n.text) > MAX_CHART_LIMIT)
          throw argError(call, `limit needs a whole number from 1 to ${MAX_CHART_LIMIT}`, n)
        limit = Number(n.text)
        limitGiven = true
        if (rest[i + 2]) throw argError(call, 'nothing may follow limit n', rest[i + 2])
        break
      }
      if (t.kind === 'word' && t.text === 'by') {
        if (inBy) throw argError(call, 'by is given twice', t)
        inBy = true
        continue
      }
      const name = t.text.replace(/,$/, '')
      if (name === '') throw argError(call, 'a value needs a name', t)
      for (const n of name.split(',')) (inBy ? by : categories).push(n)
    }
    if (inBy && by.length === 0) throw argError(call, 'by needs at least one key', call.end)
    const selfCount = categories.length === 0
    const cats = selfCount ? ['count'] : categories
    const text = ['chart', ...categories.map(quote), ...(by.length ? ['by', ...by.map(quote)] : []), ...(limitGiven ? [`limit ${limit}`] : [])].join(' ')
    const shown = [...cats, ...by]

    /** Two passes over the records in range: the series and their totals, then the points of those shown. */
    async function points(src: RecordSource, from: number, to: number, wanted: number): Promise<ChartShape> {
      const series = new Map<string, Series>()
      let span: number | undefined
      // where the stored windows start: points are aligned as they are, so that a point is whole stored windows
      let phase = 0
      const seriesOf = (row: ValueRow): Series[] => {
        const out: Series[] = []
        const keys = by.filter((k) => row.values.has(k) || row.by.includes(k)).map((k) => cellText(row.values.get(k)))
        for (const c of cats) {
          if (!row.values.has(c)) continue
          const id = JSON.stringify([c, ...keys])
          let s = series.get(id)
          // bounded memory: past MAX_GROUPS series no new one is started
          if (!s && series.size >= MAX_GROUPS) continue
          if (!s) {
            const name = keys.length === 0 ? c : cats.length > 1 ? `${c} ${keys.join(' ')}` : keys.join(' ')
            s = { id, category: c, keys, name, total: new Merged(row.ts, row) }
            series.set(id, s)
          } else s.total.add(row)
          out.push(s)
        }
        return out
      }
      for await (const line of scan(src)) {
        const row = parseValueRecord(line)
        // the stored window is known from every record: a zoom without data still has its points
        if (row.span !== undefined && row.span > 0) {
          if (span === undefined) phase = ((row.ts % row.span) + row.span) % row.span
          span = span === undefined ? row.span : Math.min(span, row.span)
        }
        if (inRange(row, from, to)) seriesOf(row)
      }
      // per category: the limit-1 largest, the rest in `other`
      const shownSeries: Series[] = []
      const otherOf = new Map<string, string>()
      for (const c of cats) {
        const of = [...series.values()].filter((s) => s.category === c)
        const size = (s: Series) => Math.abs(s.total.number(c) ?? 0)
        let keep = of
        if (of.length > limit) {
          const ranked = [...of].sort((a, b) => size(b) - size(a) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
          keep = ranked.slice(0, limit - 1)
          const otherName = cats.length > 1 ? `other ${c}` : 'other'
          for (const s of ranked.slice(limit - 1)) otherOf.set(s.id, otherName)
        }
        keep.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
        shownSeries.push(...keep)
        if (of.length > limit) shownSeries.push({ id: `other:${c}`, category: c, keys: ['other'], name: cats.length > 1 ? `other ${c}` : 'other', total: of[0]!.total })
      }
      const column = new Map<string, number>()
      shownSeries.forEach((s, i) => column.set(s.id, i))
      for (const [id, otherName] of otherOf) column.set(id, shownSeries.findIndex((s) => s.name === otherName && s.id.startsWith('other:')))
      // the windows of the points
      const temporal = span !== undefined
      const w = temporal ? bucketWindow(span!, from, to, wanted, phase) : 0
      const firstBucket = temporal ? Math.floor((from - phase) / w) : 0
      const lastBucket = temporal ? Math.floor((to - 1 - phase) / w) : 0
      // no record at all: no points (the stored window is unknown)
      const buckets = src.count === 0 ? 0 : lastBucket - firstBucket + 1
      const cells: (Merged | undefined)[][] = Array.from({ length: buckets }, () => Array.from({ length: shownSeries.length }, () => undefined))
      if (series.size > 0) {
        for await (const line of scan(src)) {
          const row = parseValueRecord(line)
          if (!inRange(row, from, to)) continue
          const b = temporal ? Math.floor((Math.max(row.ts, from) - phase) / w) - firstBucket : 0
          if (b < 0 || b >= buckets) continue
          const keys = by.filter((k) => row.values.has(k) || row.by.includes(k)).map((k) => cellText(row.values.get(k)))
          for (const c of cats) {
            if (!row.values.has(c)) continue
            const col = column.get(JSON.stringify([c, ...keys]))
            if (col === undefined || col < 0) continue
            const at = cells[b]!
            const had = at[col]
            if (!had) at[col] = new Merged(row.ts, row)
            else had.add(row)
          }
        }
      }
      return {
        Names: shownSeries.map((s) => s.name),
        KeyComps: shownSeries.map((s) => ({ Keys: s.keys })),
        Categories: cats,
        Values: cells.map((row, b) => ({
          TS: new Date(temporal ? (firstBucket + b) * w + phase : from).toISOString(),
          Data: row.map((m, col) => {
            if (!m) return null
            const n = m.number(shownSeries[col]!.category)
            return n === null || !Number.isFinite(n) ? null : n
          }),
        })),
      }
    }

    const r: CompiledRenderer = {
      name: 'chart',
      kind: 'render',
      text,
      consumes: [...categories, ...by],
      produces: [],
      stateless: false,
      stage(env) {
        const w = nativeWindow(env.start, env.end)
        let windowStart = Number.NEGATIVE_INFINITY
        let groups = new Map<string, { e: Entry; aggs: Map<string, Aggregate> }>()
        const emit = (out: Sink) => {
          for (const { e, aggs } of groups.values()) {
            for (const [n, a] of aggs) e.values.set(n, a.result())
            e.condensed = { start: windowStart, span: w, by, aggregates: aggs }
            out(e)
          }
          groups = new Map()
        }
        return {
          push(e, out) {
            if (e.condensed) return out(e)
            const start = Math.floor(e.ts / w) * w
            if (start !== windowStart) {
              emit(out)
              windowStart = start
            }
            const keyValues = by.map((k) => valueOf(e, k))
            const key = JSON.stringify(keyValues.map((v) => (v === undefined ? null : cellText(typeof v === 'number' ? v : String(v)))))
            let g = groups.get(key)
            if (!g) {
              if (groups.size >= env.maxTracked)
                throw new SearchLimitError(`chart: more than ${env.maxTracked} distinct keys in one window (the limit of keys tracked)`)
              const values = new Map<string, import('../value').Value>()
              by.forEach((k, i) => keyValues[i] !== undefined && values.set(k, keyValues[i]!))
              const aggs = new Map<string, Aggregate>()
              for (const c of cats) aggs.set(c, selfCount || (c === 'count' && valueOf(e, c) === undefined) ? new CountAgg() : new MeanAgg())
              g = { e: { ts: start, tag: e.tag, src: e.src, data: new Uint8Array(0), values }, aggs }
              groups.set(key, g)
            }
            for (const [c, a] of g.aggs) a.add(valueOf(e, c))
          },
          flush(out) {
            emit(out)
          },
        }
      },
      record: (e) => valueRecord(e, shown, valueOf),
      downloads: ['csv', 'json'],
      async answer(src, req) {
        const from = req.from || req.start
        const to = req.to || req.end
        const wanted = Math.max(1, Math.min(MAX_POINTS, req.last - req.first, Math.floor(MAX_CELLS / (limit * cats.length))))
        const shape = await points(src, from, to, wanted)
        return { entries: shape, count: shape.Values.length, more: false }
      },
      download(src, format, range) {
        if (format !== 'csv' && format !== 'json') return undefined
        return (async function* () {
          // the windows from the first stored one to the last, within the search's range (not the empty years
          // of a search over all time)
          let lo = Number.POSITIVE_INFINITY
          let hi = Number.NEGATIVE_INFINITY
          for await (const line of scan(src)) {
            const row = parseValueRecord(line)
            lo = Math.min(lo, row.ts)
            hi = Math.max(hi, row.ts + Math.max(1, row.span ?? 0))
          }
          const from = Number.isFinite(lo) ? Math.max(range.start, lo) : range.start
          const to = Number.isFinite(hi) ? Math.min(range.end, hi) : range.end
          // points × series stay within MAX_CELLS (limit series per category at most)
          const shape = await points(src, from, Math.max(to, from + 1), Math.max(1, Math.min(MAX_POINTS, Math.floor(MAX_CELLS / (limit * cats.length)))))
          if (format === 'csv') {
            yield csvLine(['TS', ...shape.Names])
            for (const v of shape.Values) yield csvLine([v.TS, ...v.Data])
            return
          }
          yield '['
          let first = true
          for (const v of shape.Values) {
            const o: Record<string, unknown> = { TS: v.TS }
            shape.Names.forEach((n, i) => (o[n] = v.Data[i]))
            yield `${first ? '' : ','}${JSON.stringify(o)}`
            first = false
          }
          yield ']'
        })()
      },
    }
    return r
  },
}
