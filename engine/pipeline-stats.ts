// What went through each module of a running search, by time: the counters behind the clients' stats requests (one
// stats row per module, one set per time window: the overview histogram and the zoom).
//
// Guarantees:
// - Memory is bounded when the pipeline is built: at most MAX_BUCKETS buckets hold counters, each holding per boundary
//   an entry count and a byte count (boundary k: the entries that reached module k; the last two: into the renderer
//   and out of it). Buckets start one second wide, aligned on the search's start, and double in width (merging pairs)
//   whenever one more would be needed: the counters keep the finest resolution that fits, so a search over sparse
//   entries is counted to the second whatever its range. An entry is counted in the bucket of its own time (clamped
//   to the range), so a window of the answer is exact when its edges fall on bucket edges; MinZoomWindow tells the
//   clients the bucket width, and their zoom requests are aligned to it.
// - Bytes are the entries' DATA lengths.
// - Reading (sets) never changes the counters; every window asked for is answered (with zero rows where nothing was
//   counted), so the clients get as many bins as they ask for.
import type { Entry } from './entry'

/** The most buckets holding counters per search (each 2 × 8 bytes per boundary). */
export const MAX_BUCKETS = 2048

/**
 * The bucket width a search of this range reaches at most once its counters are full (whole seconds, the range in
 * at most MAX_BUCKETS buckets): the resolution of a search whose counters are gone (loaded from storage).
 */
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
  /** The width of a bucket now: 1 s, doubled each time the buckets holding counters would pass MAX_BUCKETS. */
  bucketMs = 1000
  /** The last bucket index an entry may fall in at the current width (entries past the range are clamped to it). */
  private lastBucket: number
  /** Per bucket index: counts of boundaries 0..n-1, then bytes of boundaries 0..n-1. */
  private cells = new Map<number, Float64Array>()
  /** The bucket last counted into (entries mostly arrive in time order: one Map lookup saved per entry). */
  private cachedIndex = Number.NaN
  private cached: Float64Array | undefined

  constructor(
    /** Each reported module's name and arguments, in order; the boundaries are one more than the modules. */
    private readonly rows: readonly { name: string; args: string }[],
    /** The boundary index of each row's input (its output is the next boundary). */
    private readonly inputBoundary: readonly number[],
    readonly boundaries: number,
    readonly start: number,
    readonly end: number,
  ) {
    this.lastBucket = this.lastBucketAt(this.bucketMs)
  }

  private lastBucketAt(width: number): number {
    const span = Math.max(end(this.end, this.start) - this.start, 0)
    return Number.isFinite(span) ? Math.floor(span / width) : 0
  }

  private bucketOf(ts: number): number {
    const b = Math.floor((ts - this.start) / this.bucketMs)
    return b < 0 || !Number.isFinite(b) ? 0 : b > this.lastBucket ? this.lastBucket : b
  }

  /** Doubles the bucket width until the buckets holding counters fit in MAX_BUCKETS, merging their counters. */
  private coarsen(): void {
    while (this.cells.size > MAX_BUCKETS) {
      this.bucketMs *= 2
      const merged = new Map<number, Float64Array>()
      for (const [b, c] of this.cells) {
        const into = merged.get(b >> 1)
        if (!into) merged.set(b >> 1, c)
        else for (let i = 0; i < c.length; i++) into[i]! += c[i]!
      }
      this.cells = merged
    }
    this.lastBucket = this.lastBucketAt(this.bucketMs)
    this.cachedIndex = Number.NaN
    this.cached = undefined
  }

  /** An entry reached boundary k. */
  count(k: number, e: Pick<Entry, 'ts' | 'data'>): void {
    const b = this.bucketOf(e.ts)
    const c = b === this.cachedIndex ? this.cached! : this.cellsAt(e.ts)
    c[k]!++
    c[this.boundaries + k]! += e.data.byteLength
  }

  /** The counters of the bucket of `ts`, made (and the buckets coarsened when past MAX_BUCKETS) when missing. */
  private cellsAt(ts: number): Float64Array {
    let b = this.bucketOf(ts)
    let c = this.cells.get(b)
    if (!c) {
      c = new Float64Array(2 * this.boundaries)
      this.cells.set(b, c)
      if (this.cells.size > MAX_BUCKETS) {
        this.coarsen()
        b = this.bucketOf(ts)
        c = this.cells.get(b)!
      }
    }
    this.cachedIndex = b
    this.cached = c
    return c
  }

  /** How many buckets of the current width hold something. */
  filled(): number {
    return this.cells.size
  }

  /** Rows over the buckets given (sums of their counters). */
  private rowsOver(buckets: readonly Float64Array[]): ModuleStatsRow[] {
    const n = this.boundaries
    const sum = (i: number) => buckets.reduce((t, c) => t + c[i]!, 0)
    return this.rows.map((r, i) => {
      const k = this.inputBoundary[i]!
      return { Name: r.name, Args: r.args, Duration: 0, InputCount: sum(k), OutputCount: sum(k + 1), InputBytes: sum(n + k), OutputBytes: sum(n + k + 1) }
    })
  }

  /**
   * `count` windows of equal width over [setStart, setEnd] (the end inclusive: an entry at setEnd counts in the last
   * window, as the clients' zoom expects), each answered with its start time and one row per module (zeros where
   * nothing was counted). A bucket belongs to the window its start falls in.
   */
  sets(count: number, setStart: number, setEnd: number): { TS: number; Stats: ModuleStatsRow[] }[] {
    const n = Math.max(1, Math.floor(count))
    const span = Math.max(0, setEnd - setStart)
    const keys = [...this.cells.keys()].sort((a, b) => a - b)
    const out: { TS: number; Stats: ModuleStatsRow[] }[] = []
    // the first bucket index whose start is at or after t
    const firstBucketAt = (t: number) => Math.ceil((t - this.start) / this.bucketMs)
    let at = 0
    for (let w = 0; w < n; w++) {
      const ws = setStart + (span * w) / n
      const from = firstBucketAt(ws)
      const to = w === n - 1 ? Math.floor((setEnd - this.start) / this.bucketMs) + 1 : firstBucketAt(setStart + (span * (w + 1)) / n)
      while (at < keys.length && keys[at]! < from) at++
      const inWindow: Float64Array[] = []
      for (let i = at; i < keys.length && keys[i]! < to; i++) inWindow.push(this.cells.get(keys[i]!)!)
      out.push({ TS: ws, Stats: this.rowsOver(inWindow) })
    }
    return out
  }

  /** One row per module over the whole search. */
  summary(): ModuleStatsRow[] {
    return this.rowsOver([...this.cells.values()])
  }

  /** The per-window entry and byte counts out of the pipeline (the overview: the last row's output). */
  overview(count: number, setStart: number, setEnd: number): { TS: number; Count: number; Bytes: number }[] {
    return this.sets(count, setStart, setEnd).map((s) => ({ TS: s.TS, Count: s.Stats.at(-1)!.OutputCount, Bytes: s.Stats.at(-1)!.OutputBytes }))
  }
}

/** A range's end, at least one millisecond after its start. */
function end(e: number, start: number): number {
  return Math.max(e, start + 1)
}
