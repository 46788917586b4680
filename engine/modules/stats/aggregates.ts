// The aggregate kinds of `stats` and its shorthands (gravwell/wiki search/stats/stats.md, search/math/math.md), and
// beyond the platform, percentiles. What renderers use:
//   aggregateKinds            every kind by its op name (`count`, `sum`, `p95`...; `percentile` takes its q as arg)
//   createAggregate(op, arg)  a fresh aggregate of an op as a query writes it (pNN included); undefined if unknown
//   loadAggregate(saved)      the aggregate back from what its save() gave (saved.op names the kind): a stored table
//                             or chart is re-bucketed after a restart by loading and merging these
// A coarser window is the merge of finer ones: load (or take) the aggregates of the same value name and key, merge
// them in time order (earlier first: `first`, `last` and `total` compare times, so order is a tie-break only), and
// read result(). Aggregate.n is how many values one took: when it is 0, result() means nothing (NaN) except for
// count, sum, total and unique_count, which are 0; a renderer shows such a cell as empty.
//
// Kinds and what they guarantee:
//   count          entries counted (the stats module calls add only for entries that have the op's value)
//   sum, total     the sum of the values that read as numbers (value.ts toNumber); plain float addition. total is
//                  a running total: `prior` is the total of the windows before this one (set by the stats stage
//                  when it opens a window), result = prior + sum; merging keeps the prior of the earlier aggregate
//   mean           sum / n of the numbers
//   min, max       the least / greatest number; a time or a duration stays one (its type is kept)
//   stddev,        population variance (M2 / n, and its square root), kept as n, mean and M2 and merged by Chan et
//   variance       al.'s formula, so that merging partial results is exact up to float rounding
//   unique_count   the number of distinct values, an exact set: values are told apart by their text (value.ts
//                  valueText; 1 and "1" are one value), texts over 64 characters by their SHA-256 (128 bits kept).
//                  The stats stage counts the set's members toward -maxtracked; a merge that would hold more than
//                  MAX_UNIQUE members throws a SearchLimitError (renderers re-bucketing cannot grow it without bound)
//   first, last    the value of the earliest / latest entry by its time (add's ts; ties: the first added is first,
//                  the last added is last)
//   pNN, median,   percentiles from a DDSketch (DataDog's @datadog/sketches-js, LogCollapsingLowestDenseDDSketch):
//   percentile     relative accuracy RELATIVE_ACCURACY (1 %): the answer for quantile q is within 1 % of the
//                  exact value at rank floor(q·(n-1)) of the sorted values, clamped to the exact min and max (the
//                  0th and 100th percentiles are the exact min and max). At
//                  most BIN_LIMIT bins per sign (about 16 KiB a sketch at most; past that range, 2048 bins of
//                  2 % cover a ratio of about 10^17 between the least and greatest magnitude, the lowest bins are
//                  collapsed and only the lowest quantiles lose accuracy). Values that are not finite are skipped.
//                  The library's merge (2.1.1) drops the other sketch's negative values (DataDog/sketches-js#22):
//                  merging is done here, store by store.
// save() gives a JSON-able object { op, ... } (numbers that are not finite as strings); the sketch is saved as its
// bins (offset and counts per store, zero count, min, max, sum, count) rather than the library's protobuf, which
// needs protobufjs and loses min and max.
import { createHash } from 'node:crypto'
import { LogCollapsingLowestDenseDDSketch } from '@datadog/sketches-js'
import type { Aggregate, AggregateKind } from '../../aggregate'
import { SearchLimitError } from '../../errors'
import { DurationValue, IPValue, TimeValue, type Value, parseIP, toNumber, valueText } from '../../value'

export const RELATIVE_ACCURACY = 0.01
export const BIN_LIMIT = 2048
/** The most distinct values a unique_count holds after merges (during a scan, -maxtracked bounds it). */
export const MAX_UNIQUE = 1_000_000

/** A number as JSON holds it: not finite ones as text. */
const saveNumber = (x: number): number | string => (Number.isFinite(x) ? x : String(x))
function loadNumber(x: unknown): number {
  if (typeof x === 'number') return x
  if (x === 'NaN' || x === 'Infinity' || x === '-Infinity') return Number(x)
  throw new Error(`a saved aggregate holds ${JSON.stringify(x)} where a number was expected`)
}

/** A value as JSON holds it, with its type. */
export function saveValue(v: Value): unknown {
  if (typeof v === 'string') return { s: v }
  if (typeof v === 'number') return { n: saveNumber(v) }
  if (typeof v === 'boolean') return { b: v }
  if (v instanceof IPValue) return { ip: v.text }
  if (v instanceof TimeValue) return { t: saveNumber(v.ms) }
  if (v instanceof DurationValue) return { d: saveNumber(v.ns) }
  return { x: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') }
}

export function loadValue(o: unknown): Value {
  const r = o as Record<string, unknown>
  if (r && typeof r === 'object') {
    if (typeof r.s === 'string') return r.s
    if ('n' in r) return loadNumber(r.n)
    if (typeof r.b === 'boolean') return r.b
    if (typeof r.ip === 'string') {
      const ip = parseIP(r.ip)
      if (ip) return ip
    }
    if ('t' in r) return new TimeValue(loadNumber(r.t))
    if ('d' in r) return new DurationValue(loadNumber(r.d))
    if (typeof r.x === 'string') return new Uint8Array(Buffer.from(r.x, 'base64'))
  }
  throw new Error(`a saved aggregate holds no value: ${JSON.stringify(o)}`)
}

const numberField = (saved: Record<string, unknown>, name: string) => loadNumber(saved[name])

function record(saved: unknown, op: string): Record<string, unknown> {
  if (!saved || typeof saved !== 'object' || (saved as { op?: unknown }).op !== op) throw new Error(`not a saved ${op} aggregate: ${JSON.stringify(saved)?.slice(0, 100)}`)
  return saved as Record<string, unknown>
}

function sameKind<T extends Aggregate>(self: T, other: Aggregate): T {
  if (other.op !== self.op || other.constructor !== self.constructor) throw new Error(`cannot merge ${other.op} into ${self.op}`)
  return other as T
}

class CountAggregate implements Aggregate {
  readonly op = 'count'
  n = 0
  add(): void {
    this.n++
  }
  merge(other: Aggregate): void {
    this.n += sameKind(this, other).n
  }
  result(): Value {
    return this.n
  }
  save() {
    return { op: this.op, n: this.n }
  }
  static load(saved: unknown) {
    const a = new CountAggregate()
    a.n = numberField(record(saved, 'count'), 'n')
    return a
  }
}

/** sum, total and mean: a sum and how many numbers made it. */
class SumAggregate implements Aggregate {
  n = 0
  sum = 0
  /** total: the running total before this window. */
  prior = 0
  /** total: the time of the first value of this aggregate (merges keep the earlier prior). */
  since = Number.POSITIVE_INFINITY
  constructor(readonly op: 'sum' | 'total' | 'mean') {}
  add(v: Value | undefined, ts = 0): void {
    const x = toNumber(v)
    if (x === null || Number.isNaN(x)) return
    this.n++
    this.sum += x
    if (ts < this.since) this.since = ts
  }
  merge(other: Aggregate): void {
    const o = sameKind(this, other)
    if (o.since < this.since || (this.n === 0 && o.n > 0)) this.prior = o.prior
    this.n += o.n
    this.sum += o.sum
    this.since = Math.min(this.since, o.since)
  }
  result(): Value {
    if (this.op === 'mean') return this.n === 0 ? Number.NaN : this.sum / this.n
    return this.op === 'total' ? this.prior + this.sum : this.sum
  }
  save() {
    const s: Record<string, unknown> = { op: this.op, n: this.n, sum: saveNumber(this.sum) }
    if (this.op === 'total') Object.assign(s, { prior: saveNumber(this.prior), since: saveNumber(this.since) })
    return s
  }
  static load(op: 'sum' | 'total' | 'mean') {
    return (saved: unknown) => {
      const r = record(saved, op)
      const a = new SumAggregate(op)
      a.n = numberField(r, 'n')
      a.sum = numberField(r, 'sum')
      if (op === 'total') {
        a.prior = numberField(r, 'prior')
        a.since = numberField(r, 'since')
      }
      return a
    }
  }
}

/** min and max of numbers; a time or duration extreme is answered as one. */
class ExtremeAggregate implements Aggregate {
  n = 0
  best = Number.NaN
  kind: 'time' | 'duration' | undefined
  constructor(readonly op: 'min' | 'max') {}
  private better(x: number): boolean {
    return this.n === 0 || (this.op === 'min' ? x < this.best : x > this.best)
  }
  /** Whether the last add set a new extreme (stats -b keeps that entry's body). */
  improved = false
  add(v: Value | undefined): void {
    this.improved = false
    const x = toNumber(v)
    if (x === null || Number.isNaN(x)) return
    if (this.better(x)) {
      this.best = x
      this.kind = v instanceof TimeValue ? 'time' : v instanceof DurationValue ? 'duration' : undefined
      this.improved = true
    }
    this.n++
  }
  merge(other: Aggregate): void {
    const o = sameKind(this, other)
    if (o.n === 0) return
    if (this.better(o.best)) {
      this.best = o.best
      this.kind = o.kind
    }
    this.n += o.n
  }
  result(): Value {
    if (this.kind === 'time') return new TimeValue(this.best)
    if (this.kind === 'duration') return new DurationValue(this.best)
    return this.best
  }
  save() {
    return { op: this.op, n: this.n, best: saveNumber(this.best), ...(this.kind ? { kind: this.kind } : {}) }
  }
  static load(op: 'min' | 'max') {
    return (saved: unknown) => {
      const r = record(saved, op)
      const a = new ExtremeAggregate(op)
      a.n = numberField(r, 'n')
      a.best = numberField(r, 'best')
      if (r.kind === 'time' || r.kind === 'duration') a.kind = r.kind
      return a
    }
  }
}

/** stddev and variance: Welford's update per value, Chan et al.'s pairwise merge. */
class VarianceAggregate implements Aggregate {
  n = 0
  mean = 0
  m2 = 0
  constructor(readonly op: 'stddev' | 'variance') {}
  add(v: Value | undefined): void {
    const x = toNumber(v)
    if (x === null || Number.isNaN(x)) return
    this.n++
    const delta = x - this.mean
    this.mean += delta / this.n
    this.m2 += delta * (x - this.mean)
  }
  merge(other: Aggregate): void {
    const o = sameKind(this, other)
    if (o.n === 0) return
    if (this.n === 0) {
      this.n = o.n
      this.mean = o.mean
      this.m2 = o.m2
      return
    }
    const n = this.n + o.n
    const delta = o.mean - this.mean
    this.mean += (delta * o.n) / n
    this.m2 += o.m2 + (delta * delta * this.n * o.n) / n
    this.n = n
  }
  result(): Value {
    if (this.n === 0) return Number.NaN
    const variance = this.m2 / this.n
    return this.op === 'variance' ? variance : Math.sqrt(variance)
  }
  save() {
    return { op: this.op, n: this.n, mean: saveNumber(this.mean), m2: saveNumber(this.m2) }
  }
  static load(op: 'stddev' | 'variance') {
    return (saved: unknown) => {
      const r = record(saved, op)
      const a = new VarianceAggregate(op)
      a.n = numberField(r, 'n')
      a.mean = numberField(r, 'mean')
      a.m2 = numberField(r, 'm2')
      return a
    }
  }
}

const LONG_VALUE = 64

/** The text a value is told apart by in a distinct set. */
export function distinctKey(v: Value): string {
  const text = valueText(v)
  return text.length > LONG_VALUE ? `#${createHash('sha256').update(text).digest('base64').slice(0, 22)}` : `=${text}`
}

export class UniqueCountAggregate implements Aggregate {
  readonly op = 'unique_count'
  n = 0
  readonly seen = new Set<string>()
  constructor(
    /** The most members a merge may leave (MAX_UNIQUE unless a test wants fewer). */
    readonly limit = MAX_UNIQUE,
  ) {}
  add(v: Value | undefined, _ts?: number): void {
    if (v === undefined) return
    this.n++
    this.seen.add(distinctKey(v))
  }
  merge(other: Aggregate): void {
    const o = sameKind(this, other)
    for (const k of o.seen) {
      this.seen.add(k)
      if (this.seen.size > this.limit)
        throw new SearchLimitError(`unique_count: more than ${this.limit} distinct values in one result: choose a shorter window or fewer keys`)
    }
    this.n += o.n
  }
  result(): Value {
    return this.seen.size
  }
  save() {
    return { op: this.op, n: this.n, seen: [...this.seen] }
  }
  static load(saved: unknown) {
    const r = record(saved, 'unique_count')
    const a = new UniqueCountAggregate()
    a.n = numberField(r, 'n')
    if (!Array.isArray(r.seen) || r.seen.length > MAX_UNIQUE || !r.seen.every((k) => typeof k === 'string'))
      throw new Error('a saved unique_count holds no set of values')
    for (const k of r.seen) a.seen.add(k)
    return a
  }
}

/** first and last: a value and the time of its entry. */
class EndAggregate implements Aggregate {
  n = 0
  value: Value | undefined
  ts = 0
  constructor(readonly op: 'first' | 'last') {}
  add(v: Value | undefined, ts = 0): void {
    if (v === undefined) return
    if (this.n === 0 || (this.op === 'first' ? ts < this.ts : ts >= this.ts)) {
      this.value = v
      this.ts = ts
    }
    this.n++
  }
  merge(other: Aggregate): void {
    const o = sameKind(this, other)
    if (o.n === 0) return
    if (this.n === 0 || (this.op === 'first' ? o.ts < this.ts : o.ts >= this.ts)) {
      this.value = o.value
      this.ts = o.ts
    }
    this.n += o.n
  }
  result(): Value {
    return this.value ?? Number.NaN
  }
  save() {
    return { op: this.op, n: this.n, ts: saveNumber(this.ts), ...(this.value === undefined ? {} : { value: saveValue(this.value) }) }
  }
  static load(op: 'first' | 'last') {
    return (saved: unknown) => {
      const r = record(saved, op)
      const a = new EndAggregate(op)
      a.n = numberField(r, 'n')
      a.ts = numberField(r, 'ts')
      if (r.value !== undefined) a.value = loadValue(r.value)
      else if (a.n > 0) throw new Error(`a saved ${op} holds no value`)
      return a
    }
  }
}

type Sketch = LogCollapsingLowestDenseDDSketch
type Store = Sketch['store']

const newSketch = (): Sketch => new LogCollapsingLowestDenseDDSketch({ relativeAccuracy: RELATIVE_ACCURACY, binLimit: BIN_LIMIT })

/** The largest magnitude the sketch's mapping takes. */
const MAX_MAGNITUDE = newSketch().mapping.maxPossible

function saveStore(s: Store): { offset: number; counts: number[] } {
  if (s.count === 0) return { offset: 0, counts: [] }
  const from = s.minKey - s.offset
  return { offset: s.minKey, counts: s.bins.slice(from, s.maxKey - s.offset + 1) }
}

function loadStore(into: Store, saved: unknown): void {
  const r = saved as { offset?: unknown; counts?: unknown }
  if (!r || typeof r.offset !== 'number' || !Number.isInteger(r.offset) || !Array.isArray(r.counts) || r.counts.length > BIN_LIMIT * 2)
    throw new Error('a saved sketch holds no store')
  r.counts.forEach((c, i) => {
    if (typeof c !== 'number' || !(c >= 0)) throw new Error('a saved sketch holds a bad bin count')
    if (c > 0) into.add((r.offset as number) + i, c)
  })
}

/** A percentile (q from 0 to 1) of the numbers, from a DDSketch. */
class PercentileAggregate implements Aggregate {
  sketch = newSketch()
  constructor(
    readonly op: string,
    /** The quantile, 0 to 1. */
    readonly q: number,
  ) {}
  get n(): number {
    return this.sketch.count
  }
  add(v: Value | undefined): void {
    const x = toNumber(v)
    if (x === null || !Number.isFinite(x) || Math.abs(x) > MAX_MAGNITUDE) return
    this.sketch.accept(x)
  }
  merge(other: Aggregate): void {
    const o = sameKind(this, other)
    if (o.q !== this.q) throw new Error(`cannot merge ${other.op} into ${this.op}: not the same percentile`)
    const a = this.sketch
    const b = o.sketch
    if (b.count === 0) return
    a.store.merge(b.store)
    a.negativeStore.merge(b.negativeStore)
    a.zeroCount += b.zeroCount
    a.count += b.count
    a.sum += b.sum
    a.min = Math.min(a.min, b.min)
    a.max = Math.max(a.max, b.max)
  }
  result(): Value {
    const s = this.sketch
    if (s.count === 0) return Number.NaN
    if (this.q <= 0) return s.min
    if (this.q >= 1) return s.max
    return Math.min(s.max, Math.max(s.min, s.getValueAtQuantile(this.q)))
  }
  save() {
    const s = this.sketch
    return {
      op: this.op,
      q: this.q,
      positive: saveStore(s.store),
      negative: saveStore(s.negativeStore),
      zero: s.zeroCount,
      count: s.count,
      sum: saveNumber(s.sum),
      min: saveNumber(s.min),
      max: saveNumber(s.max),
    }
  }
  static load(saved: unknown): PercentileAggregate {
    const r = saved as Record<string, unknown>
    if (!r || typeof r !== 'object' || typeof r.op !== 'string' || typeof r.q !== 'number' || !(r.q >= 0 && r.q <= 1)) throw new Error('not a saved percentile')
    const a = new PercentileAggregate(r.op, r.q)
    const s = a.sketch
    loadStore(s.store, r.positive)
    loadStore(s.negativeStore, r.negative)
    s.zeroCount = numberField(r, 'zero')
    s.count = numberField(r, 'count')
    s.sum = numberField(r, 'sum')
    s.min = numberField(r, 'min')
    s.max = numberField(r, 'max')
    if (s.count !== s.store.count + s.negativeStore.count + s.zeroCount) throw new Error('a saved sketch does not add up')
    return a
  }
}

/** `p95`, `p99.9`: a percentile from 0 (exclusive) to 100 (exclusive), written with up to three decimals. */
export const PERCENTILE_OP = /^p(\d{1,2}(?:\.\d{1,3})?)$/

/** The quantile (0 to 1) of a pNN op, or null when the op is none. */
export function percentileOf(op: string): number | null {
  const m = PERCENTILE_OP.exec(op)
  if (!m) return null
  const p = Number(m[1])
  return p > 0 && p < 100 ? p / 100 : null
}

const kind = (op: string, create: (arg?: number) => Aggregate, load: (saved: unknown) => Aggregate): AggregateKind => ({ op, create, load })

/**
 * Every kind by op. `percentile` takes the percentage (0 to 100) as create's arg; `median` is p50. The pNN ops are
 * not listed one by one: createAggregate reads them.
 */
export const aggregateKinds: ReadonlyMap<string, AggregateKind> = new Map(
  [
    kind('count', () => new CountAggregate(), CountAggregate.load),
    kind('sum', () => new SumAggregate('sum'), SumAggregate.load('sum')),
    kind('total', () => new SumAggregate('total'), SumAggregate.load('total')),
    kind('mean', () => new SumAggregate('mean'), SumAggregate.load('mean')),
    kind('min', () => new ExtremeAggregate('min'), ExtremeAggregate.load('min')),
    kind('max', () => new ExtremeAggregate('max'), ExtremeAggregate.load('max')),
    kind('stddev', () => new VarianceAggregate('stddev'), VarianceAggregate.load('stddev')),
    kind('variance', () => new VarianceAggregate('variance'), VarianceAggregate.load('variance')),
    kind('unique_count', () => new UniqueCountAggregate(), UniqueCountAggregate.load),
    kind('first', () => new EndAggregate('first'), EndAggregate.load('first')),
    kind('last', () => new EndAggregate('last'), EndAggregate.load('last')),
    kind('median', () => new PercentileAggregate('median', 0.5), PercentileAggregate.load),
    kind('percentile', (arg = 50) => new PercentileAggregate('percentile', arg / 100), PercentileAggregate.load),
  ].map((k) => [k.op, k]),
)

/** A fresh aggregate for an op as a query writes it (`count`, `p95`, `percentile` with its percentage); undefined if none. */
export function createAggregate(op: string, arg?: number): Aggregate | undefined {
  const k = aggregateKinds.get(op)
  if (k) return k.create(arg)
  const q = percentileOf(op)
  return q === null ? undefined : new PercentileAggregate(op, q)
}

/** An aggregate back from its save(); throws an Error when `saved` is no saved aggregate. */
export function loadAggregate(saved: unknown): Aggregate {
  const op = (saved as { op?: unknown } | null)?.op
  if (typeof op !== 'string') throw new Error('not a saved aggregate')
  const k = aggregateKinds.get(op)
  if (k) return k.load(saved)
  if (percentileOf(op) !== null) return PercentileAggregate.load(saved)
  throw new Error(`no aggregate kind ${JSON.stringify(op)}`)
}

/** Whether an aggregate with no value has a result (0) rather than none. */
export function zeroWhenEmpty(op: string): boolean {
  return op === 'count' || op === 'sum' || op === 'total' || op === 'unique_count'
}

/** Internal to the stats stage: what the running total of a `total` op carries into the next window. */
export function totalCarry(a: Aggregate): number {
  return a instanceof SumAggregate ? a.prior + a.sum : 0
}

/** Internal to the stats stage: starts a `total` op's window at the running total of the windows before it. */
export function setPrior(a: Aggregate, prior: number): void {
  if (a instanceof SumAggregate) a.prior = prior
}

/** Internal to the stats stage (-b): whether the last add to a min or max set a new extreme. */
export function improved(a: Aggregate): boolean {
  return a instanceof ExtremeAggregate && a.improved
}
