// Aggregates: the mergeable state of one statistic (count, sum, mean as sum and n, min, max, distinct sets,
// percentile sketches...). Condensing modules keep one per operation, key and time window; a coarser window is the
// merge of finer ones, which is how a chart or table is re-bucketed for a zoom without running the query again, and
// how partial results of two scans (two batches, two workers, later two replicas) become one.
//
// Contract (each kind in modules/stats/ or wherever its module lives; `aggregateKinds` lists them by op):
// - add(v) takes one value (undefined when the entry lacks it: counted by count, skipped by the others);
// - merge(o) takes another aggregate of the same kind: a.merge(b) then equals one aggregate that saw both inputs
//   (exactly, except percentiles: within the sketch's stated relative error);
// - result() is the statistic now (a number for the numeric ones);
// - save() is a JSON-able state and load(saved) gives back an aggregate equal to the saved one: stored records of
//   tables and charts hold these, so that a saved search can be zoomed after a restart.
import type { Value } from './value'

export interface Aggregate {
  readonly op: string
  /**
   * How many values it took (merges add up). When 0, result() means nothing (NaN), except for count, sum, total and
   * unique_count, whose result is then 0.
   */
  readonly n: number
  /** `ts`: the entry's time in ms (first and last compare it; the others ignore it). */
  add(v: Value | undefined, ts?: number): void
  merge(other: Aggregate): void
  result(): Value
  save(): unknown
}

export interface AggregateKind {
  /** The operation's name in a query (`count`, `sum`, `p95`, `percentile`...). */
  op: string
  create(arg?: number): Aggregate
  load(saved: unknown): Aggregate
}

/**
 * What a condensing module attaches to each entry it emits (Entry.condensed): the window the entry stands for, the
 * names of its keys (`by`), and the aggregate behind each value it set, by the value's name. Renderers store these
 * and merge them to re-bucket.
 */
export interface Condensed {
  /** Start of the time window in ms since the epoch; for a whole-range result, the search's start. */
  start: number
  /** Length of the window in ms (the `over` duration); 0 for a whole-range (non-temporal) result. */
  span: number
  /** The `by` value names, in order (their values are in Entry.values). */
  by: string[]
  /** The aggregate behind each value, by the value's name. */
  aggregates: Map<string, Aggregate>
}
