// Reading a search's stored results record by record (the layout is results.ts's: NDJSON and an index of offsets),
// from wherever they are now: its working files while it runs or is being saved, its blobs once saved.
//
// Guarantees:
// - Records are read as far as they are stored (the record's itemCount and storeSize, which follow the flushes of a
//   running search): whole records of a consistent prefix, never a partial one.
// - Records are found through the index, without reading the records before them; a time range over a search's own
//   results (in TS order) is found by binary search reading one record head per probe; an imported search's results
//   (any order) are scanned a batch at a time, one batch per event-loop turn.
import type { BlobStore } from '../blob'
import type { SearchRecord } from './repo'
import { INDEX_ENTRY_BYTES, type ResultSource, type WorkFiles } from './results'

/** Where a search's results are now and how far they go (the manager's Search). */
export interface StoredResults {
  record: Pick<SearchRecord, 'itemCount' | 'storeSize' | 'import'>
  /** Its working files, until its results are in the blob store. */
  work: WorkFiles | null
  blob: { results: string; index: string } | null
}

/** Records read per batch when an unordered result set is scanned for a time range. */
const SCAN_BATCH = 1000
/** Enough of a record's first bytes to hold its TS: `{"TS":"` and an RFC 3339 time with nanoseconds and an offset. */
const RECORD_HEAD_BYTES = 64

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

/** Where the search's results can be read now (none: an ORPHANED search, whose results were lost). */
export function resultSource(s: StoredResults): ResultSource {
  if (s.blob) return { kind: 'blob', key: s.blob.results, size: s.record.storeSize }
  if (!s.work) return { kind: 'none', size: 0 }
  return { kind: 'work', files: s.work, size: s.record.storeSize }
}

/**
 * Records `first` up to (not including) `last` of a search's results, as the JSON text of each, as far as they are
 * stored now (a running search's flushed prefix): the index finds them without reading the records before them.
 */
export async function readRecords(blobs: BlobStore, s: StoredResults, first: number, last: number): Promise<string[]> {
  const count = s.record.itemCount
  const storeSize = s.record.storeSize
  const blob = s.blob
  const work = s.work
  const from = Math.max(0, Math.min(first, count))
  const to = Math.max(from, Math.min(last, count))
  if (to === from) return []
  // The end offset of the last record is the next record's start, or the stored size after the last one.
  const idxEnd = Math.min(to + 1, count) * INDEX_ENTRY_BYTES
  const idxStart = from * INDEX_ENTRY_BYTES
  const read = (key: string | undefined, path: string | undefined, start: number, end: number) => readBytes(blobs, key, path, start, end)
  const idx = Buffer.from(await read(blob?.index, work?.index, idxStart, idxEnd))
  const offsets: number[] = []
  for (let i = 0; i + INDEX_ENTRY_BYTES <= idx.length; i += INDEX_ENTRY_BYTES) offsets.push(Number(idx.readBigUInt64LE(i)))
  const start = offsets[0]!
  const end = to < count ? offsets[to - from]! : storeSize
  const text = Buffer.from(await read(blob?.results, work?.results, start, end)).toString('utf8')
  return text.split('\n').filter((l) => l !== '')
}

/**
 * Records `first` up to (not including) `last` counted within the subset of the results whose TS lies in
 * [`from`, `to`) (0: unbounded on that side), as far as they are stored now; `more` tells whether records of that
 * subset follow the returned ones. A search's own results are in TS order (its feed scans by time): the subset's
 * bounds are found by binary search over the index, reading one record head per probe. An imported search's
 * results may be in any order: they are scanned in batches of SCAN_BATCH records, one batch per event-loop turn,
 * stopping at the first subset record after the wanted ones. Positions count from 0: callers pass `first` ≥ 0.
 */
export async function readRecordsWithin(
  blobs: BlobStore,
  s: StoredResults,
  from: number,
  to: number,
  first: number,
  last: number,
): Promise<{ lines: string[]; more: boolean }> {
  const count = s.record.itemCount
  const lower = from || Number.NEGATIVE_INFINITY
  const upper = to || Number.POSITIVE_INFINITY
  if (first >= last || lower >= upper) return { lines: [], more: false }
  const inRange = (ts: number) => ts >= lower && ts < upper
  if (!s.record.import) {
    const { start, end } = await ownSubset(blobs, s, lower, upper)
    const lines = await readRecords(blobs, s, start + first, Math.min(start + last, end))
    return { lines, more: start + first + lines.length < end }
  }
  const lines: string[] = []
  let seen = 0
  for (let i = 0; i < count; i += SCAN_BATCH) {
    for (const line of await readRecords(blobs, s, i, Math.min(i + SCAN_BATCH, count))) {
      const ts = anyTsOf(line)
      if (ts === null || !inRange(ts)) continue
      if (seen >= last) return { lines, more: true }
      if (seen >= first) lines.push(line)
      seen++
    }
    await nextTurn()
  }
  return { lines, more: false }
}

/**
 * The positions [start, end) of a search's own results (in TS order) whose TS lies in [lower, upper), found by binary
 * search (records without a TS, a summary's, sort last).
 */
async function ownSubset(blobs: BlobStore, s: StoredResults, lower: number, upper: number): Promise<{ start: number; end: number }> {
  const count = s.record.itemCount
  // The first record at or after `t`.
  const bound = async (t: number) => {
    if (!Number.isFinite(t)) return t < 0 ? 0 : count
    let lo = 0
    let hi = count
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      const ts = await recordTs(blobs, s, mid, count)
      if (ts !== null && ts < t) lo = mid + 1
      else hi = mid
    }
    return lo
  }
  return { start: await bound(lower), end: await bound(upper) }
}

/**
 * readRecordsWithin counted from the other end: records `first` up to (not including) `last` counted backwards from
 * the last record of the subset whose TS lies in [`from`, `to`) (0: unbounded on that side), in that order (for a
 * search's own results, in TS order, the newest first: the order the clients show entries in); `more` tells whether
 * older records of the subset follow. A search's own results are found by binary search; an imported search's are
 * scanned twice (once to count the subset, once to read it), a batch per event-loop turn.
 */
export async function readRecordsWithinFromEnd(
  blobs: BlobStore,
  s: StoredResults,
  from: number,
  to: number,
  first: number,
  last: number,
): Promise<{ lines: string[]; more: boolean }> {
  const lower = from || Number.NEGATIVE_INFINITY
  const upper = to || Number.POSITIVE_INFINITY
  if (first >= last || lower >= upper) return { lines: [], more: false }
  if (!s.record.import) {
    const { start, end } = await ownSubset(blobs, s, lower, upper)
    const lines = await readRecords(blobs, s, Math.max(start, end - last), Math.max(start, end - first))
    return { lines: lines.reverse(), more: end - last > start }
  }
  let total = 0
  const count = s.record.itemCount
  for (let i = 0; i < count; i += SCAN_BATCH) {
    for (const line of await readRecords(blobs, s, i, Math.min(i + SCAN_BATCH, count))) {
      const ts = anyTsOf(line)
      if (ts !== null && ts >= lower && ts < upper) total++
    }
    await nextTurn()
  }
  const { lines } = await readRecordsWithin(blobs, s, from, to, Math.max(0, total - last), Math.max(0, total - first))
  return { lines: lines.reverse(), more: total - last > 0 }
}

/** The TS of record `i` (of `count` stored), read from the head of the record alone; null when it has none. */
async function recordTs(blobs: BlobStore, s: StoredResults, i: number, count: number): Promise<number | null> {
  const blob = s.blob
  const work = s.work
  const idx = Buffer.from(await readBytes(blobs, blob?.index, work?.index, i * INDEX_ENTRY_BYTES, (i + 1) * INDEX_ENTRY_BYTES))
  if (idx.length < INDEX_ENTRY_BYTES || i >= count) return null
  const at = Number(idx.readBigUInt64LE(0))
  const head = await readBytes(blobs, blob?.results, work?.results, at, Math.min(at + RECORD_HEAD_BYTES, s.record.storeSize))
  return tsOf(Buffer.from(head).toString('utf8'))
}

/** Bytes [`start`, `end`) of a blob (when `key` is given) or else of a working file. */
async function readBytes(blobs: BlobStore, key: string | undefined, path: string | undefined, start: number, end: number): Promise<Uint8Array> {
  return key !== undefined
    ? new Uint8Array(await new Response(await blobs.get(key, { start, end: end - 1 })).arrayBuffer())
    : new Uint8Array(await Bun.file(path!).slice(start, end).arrayBuffer())
}

/** The TS of a result record from its JSON text (records written by a search begin with it); null without one. */
export function tsOf(line: string): number | null {
  const m = /^\{"TS":"([^"]+)"/.exec(line)
  const ms = Date.parse(m?.[1] ?? '')
  return Number.isNaN(ms) ? null : ms
}

/** The TS of a record in any member order (an imported archive's): the whole record is parsed when needed. */
export function anyTsOf(line: string): number | null {
  const fast = tsOf(line)
  if (fast !== null) return fast
  try {
    const ts = (JSON.parse(line) as { TS?: unknown }).TS
    const ms = typeof ts === 'string' ? Date.parse(ts) : Number.NaN
    return Number.isNaN(ms) ? null : ms
  } catch {
    return null
  }
}
