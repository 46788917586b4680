// What went through each module of a running search, by time: the counters behind the clients' stats requests (one
// stats row per module, one set per time window: the overview histogram and the zoom).
//
// Guarantees:
// - Memory is fixed when the pipeline is built: the search's range is cut into at most MAX_BUCKETS buckets of a
//   whole number of seconds (bucketMs), each holding per boundary an entry count and a byte count (boundary k: the
//   entries that reached module k; the last two: into the renderer and out of it). An entry is counted in the
//   bucket of its own time (clamped to the range), so a window of the answer is exact when its edges fall on bucket
//   edges; MinZoomWindow tells the clients the bucket width, and their zoom requests are aligned to it.
// - Bytes are the entries' DATA lengths.
// - Reading (sets) never changes the counters; a set is answered for a window only when something was counted in it.
import type { Entry } from './entry'

/** The most buckets a search keeps per boundary (2 × 8 bytes each). */
export const MAX_BUCKETS = 2048

/** The bucket width for a search range: whole seconds, at least one, so that the range fits in MAX_BUCKETS. */
export function statsBucketMs(start: number, end: number): number {
  const span = Number.isFinite(end - start) && end > start ? end - start : 1000
  return Math.max(1, Math.ceil(span / MAX_BUCKETS / 1000)) * 1000
}

/** One module's row of a stats set: the Go client's SearchModuleStats. */
export interface ModuleStatsRow {
  Name: string
  Args: string
  /** Not measured per module (timing each entry in each stage would cost more than the stage): 0. */
  Duration: number
  InputCount: number
  OutputCount: number
  InputBytes: number
  OutputBytes: number
}

export class PipelineStats {
  readonly bucketMs: number
  private readonly buckets: number
  private readonly counts: Float64Array
  private readonly bytes: Float64Array

  constructor(
    /** Each reported module's name and arguments, in order; the boundaries are one more than the modules. */
    private readonly rows: readonly { name: string; args: string }[],
    /** The boundary index of each row's input (its output is the next boundary). */
    private readonly inputBoundary: readonly number[],
    readonly boundaries: number,
    readonly start: number,
    readonly end: number,
  ) {
    this.bucketMs = statsBucketMs(start, end)
    this.buckets = Math.min(MAX_BUCKETS, Math.ceil((Math.max(end, start + 1) - start) / this.bucketMs)) + 1
    this.counts = new Float64Array(boundaries * this.buckets)
    this.bytes = new Float64Array(boundaries * this.buckets)
  }

  private bucketOf(ts: number): number {
    const b = Math.floor((ts - this.start) / this.bucketMs)
    return b < 0 || !Number.isFinite(b) ? 0 : b >= this.buckets ? this.buckets - 1 : b
  }

  /** An entry reached boundary k. */
  count(k: number, e: Pick<Entry, 'ts' | 'data'>): void {
    const i = k * this.buckets + this.bucketOf(e.ts)
    this.counts[i]!++
    this.bytes[i]! += e.data.byteLength
  }

  /** Totals of boundary k over buckets [from, to). */
  private total(k: number, from: number, to: number): { n: number; bytes: number } {
    let n = 0
    let bytes = 0
    const base = k * this.buckets
    for (let b = from; b < to; b++) {
      n += this.counts[base + b]!
      bytes += this.bytes[base + b]!
    }
    return { n, bytes }
  }

  private rowsFor(from: number, to: number): ModuleStatsRow[] {
    return this.rows.map((r, i) => {
      const input = this.total(this.inputBoundary[i]!, from, to)
      const output = this.total(this.inputBoundary[i]! + 1, from, to)
      return { Name: r.name, Args: r.args, Duration: 0, InputCount: input.n, OutputCount: output.n, InputBytes: input.bytes, OutputBytes: output.bytes }
    })
  }

  /** Whether anything was counted in buckets [from, to), at any boundary. */
  private any(from: number, to: number): boolean {
    for (let k = 0; k < this.boundaries; k++) if (this.total(k, from, to).n > 0) return true
    return false
  }

  /**
   * `count` windows of equal width over [setStart, setEnd] (the end inclusive: an entry at setEnd counts in the last
   * window, as the clients' zoom expects), each answered with its start time and one row per module when something
   * was counted in it. A bucket belongs to the window its start falls in.
   */
  sets(count: number, setStart: number, setEnd: number): { TS: number; Stats: ModuleStatsRow[] }[] {
    const n = Math.max(1, Math.floor(count))
    const span = Math.max(0, setEnd - setStart)
    const out: { TS: number; Stats: ModuleStatsRow[] }[] = []
    // bucket index range of each window: buckets whose start lies in it
    const firstBucketAt = (t: number) => Math.max(0, Math.min(this.buckets, Math.ceil((t - this.start) / this.bucketMs)))
    for (let w = 0; w < n; w++) {
      const ws = setStart + (span * w) / n
      const we = setStart + (span * (w + 1)) / n
      const from = firstBucketAt(ws)
      const to = w === n - 1 ? Math.max(from, Math.min(this.buckets, Math.floor((setEnd - this.start) / this.bucketMs) + 1)) : firstBucketAt(we)
      if (to > from && this.any(from, to)) out.push({ TS: ws, Stats: this.rowsFor(from, to) })
    }
    return out
  }

  /** One row per module over the whole search. */
  summary(): ModuleStatsRow[] {
    return this.rowsFor(0, this.buckets)
  }

  /** The per-window entry and byte counts out of the pipeline (the overview: the last row's output). */
  overview(count: number, setStart: number, setEnd: number): { TS: number; Count: number; Bytes: number }[] {
    return this.sets(count, setStart, setEnd).map((s) => ({ TS: s.TS, Count: s.Stats.at(-1)!.OutputCount, Bytes: s.Stats.at(-1)!.OutputBytes }))
  }
}
