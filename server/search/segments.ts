// The entries of the embedded engine as rows plus sealed segments (docs/operations.md, "Where data is kept"). Ingest
// writes rows (`entries`, the durable ingest log, server/search/entries*.ts); a compaction (one process at a time: a
// lease-guarded job) moves the oldest rows, in (ts, tag_id, id) order, into segments of a few MiB
// (server/search/segment.ts), each a blob of the blob store registered in `entry_segments` in the transaction that
// deletes its rows. A search walks the segments and the rows merged in (ts, tag_id, id) order, so its results are those
// it would find over rows alone.
//
// Guarantees:
// - Durability: a segment's blob is fully written (fsynced on disk, acknowledged by S3) before the transaction that
//   registers it and deletes its rows; until that commits the rows are the entries. A crash before the commit leaves
//   an unregistered blob, which the blob sweep removes (registered segments are in blobReferences).
// - No entry is lost or doubled: the transaction deletes exactly the rows it read (it fails, and the blob is
//   removed, when any of them is gone already: another compaction took them), and a walk step reads the rows of its
//   window and then checks that the segment list it used is still the whole list: registrations become visible in
//   increasing seq order, and every unregistration (retention and deletion, server/search/retention.ts, replace or
//   remove a segment) adds a journal row whose id never repeats, so an unchanged (latest seq, latest removal) pair is
//   an unchanged list (one probe of two indexes). When either moved in between, the step is done again (after a
//   removal, over the whole list read again). An entry seen as a row and in a segment within one step is answered
//   once.
// - Removal during a walk: a rewrite keeps each kept entry's (ts, tag_id, id), so a walk, whose steps go on from the
//   last key answered, answers a kept entry once whichever list each step used, and an entry being deleted at most
//   once (or not). A segment's blob is deleted only after it is unregistered; a step whose segment blob is gone
//   already (it loaded the list just before) finds the list changed and is done again over the new one. A decoded
//   segment held in memory (a disk segment is a memory map, which outlives the file's removal) stays readable.
// - A walk step reads the rows only up to the end of the segment window it merges (an index range, usually empty),
//   answers at most `limit` entries and examines about `maxBytes` of entry data, as over rows alone.
// - Small segments (batches written straight into segments) are merged by the compaction: the same entries with the
//   same keys in one new segment that replaces them in one transaction (mergeSmall), as a retention rewrite does.
// - A grep (the `needle` hint) searches a segment's data with one Buffer.indexOf loop and maps each hit to its
//   entry by offset; the entries without a hit cost nothing each: the step answers one marker (no data) for them.
import type { Database, Statement } from 'bun:sqlite'
import type { BlobStore } from '../blob'
import type { Logger } from '../runtime/log'
import { reclaimSpace } from '../store/db'
import { checkQuotaSqlite } from '../store/quota'
import {
  ADD_TAG_USAGE_SQL,
  ADD_USAGE_SQL,
  type Cursor,
  type EntriesRepo,
  type IngestRules,
  type Ingested,
  type NewEntry,
  type ScanOptions,
  type ScanRow,
  type Tag,
  entryBytes,
  reserveRowIds,
} from './entries'
import {
  Segment,
  type SegmentEntry,
  type SegmentMeta,
  compareCursors,
  compareKeys,
  compressSegment,
  decodeSegment,
  encodeSegment,
  headerShape,
  headerTags,
  SEGMENT_ZSTD_LEVEL,
  withPlainSegment,
} from './segment'

/** A segment is cut once its entries' data reach this many bytes (or SEGMENT_ENTRIES entries). */
export const SEGMENT_BYTES = 4 << 20
export const SEGMENT_ENTRIES = 65_536
/**
 * Decoded segments kept in memory, in bytes (least recently used first out), unless the server says otherwise
 * (QUARRY_SEGMENT_CACHE: a quarter of its memory limit, at most 1 GiB). Whether a repeated search meets its data here
 * decides its speed: a grep over 182 MB decoded took 21-40 ms in process, against 120-160 ms when every segment had
 * to be read again (mapped afresh: page faults) and about 0.7 s more when decompressed again.
 */
export const SEGMENT_CACHE_BYTES = 64 << 20
/**
 * How many bytes of a segment a grep (the `needle` hint) searches for one byte of a walk step's budget: one
 * Buffer.indexOf over a segment's data runs at 5-10 GB/s, about 16 times faster than the entries of the same bytes
 * are handed out one by one, so a step searches 16 MiB where it hands out 1 MiB (a few ms either way). With
 * the same budget, a grep over 180 MB is 180 walk steps, each paying its index probes and the segment list's check.
 */
export const GREP_BYTES_PER_BYTE = 16
/**
 * Segments after a walk step's window decoded ahead of the walk (their data decompressed on Bun's thread pool while
 * this step's entries are walked on the event loop): a walk in time order pays the decompression on the other core.
 */
export const PREFETCH_SEGMENTS = 2
/** Segments one compaction run writes at most (the next run goes on). */
export const COMPACT_MAX_SEGMENTS = 64
/**
 * Segments a run started by ingest writes at most (compactOnIngest): a bounded piece of work between batches, so
 * that the compaction keeps up with a sustained ingest instead of waiting for its next period.
 */
export const INGEST_COMPACT_SEGMENTS = 2
/**
 * A batch whose entries' data reach this many bytes is written straight into sealed segments (no rows, no
 * compaction) where the store can (SQLite), unless it names a tag the store does not know yet. Writing rows, reading
 * them back, sealing them and deleting them cost about three times the sealing alone (bench/README.md, ingest).
 * Such a segment is the batch's size, not the compaction's, and the compaction merges such small segments
 * (mergeSmall); the bound keeps smaller batches (a syslog connection's while it trickles, a shipper's few lines) in
 * rows, so that the segment list does not grow by a segment per request. Full syslog batches (2,048 messages or 256
 * KiB) and the shippers' batches of 1,000 lines of 200 bytes come here: syslog at 0.8 of the row path's CPU (with the
 * two batches of server/ingest/syslog/batch.ts), ES bulk and HEC at twice its rate (bench/README.md,
 * "bench/ingest-ab.ts").
 */
export const SEALED_INGEST_BYTES = 128 << 10
/**
 * A segment with less than this share of the segment size's data (or of its entries) is small: the compaction merges
 * small segments of the same tags that follow each other into one (mergeSmall). Batches written straight into
 * segments (SEALED_INGEST_BYTES up to the segment size) leave one such segment each: 293 of them held the same
 * 1,000,000 lines as 44 compacted ones (a blob and a registry row each; a count by tag read 293 headers, twice the
 * time). Merged, 49 (bench/README.md, "bench/ingest-merge.ts").
 */
export const SMALL_SEGMENT_SHARE = 0.5
/**
 * The zstd level of the segments a batch is written into (ingestSealed): these are small ones the compaction merges
 * and compresses again at SEGMENT_ZSTD_LEVEL, and the request waits for this one. Level 1 costs 1.5 ms of CPU per MiB
 * of access lines (level 3: 2.3 ms) for about the same size (bench/README.md, "bench/ingest-ab.ts").
 */
export const INGEST_ZSTD_LEVEL = 1

export interface SegmentsRepo {
  /**
   * The greatest `seq` registered (0 when none). Registrations are serialized and take their seq once they hold that
   * turn, so seqs become visible in increasing order: nothing can appear later below the latest seen. Segments are
   * removed only with a journal row (see state): while that has not moved, a reader that has every segment up to its
   * latest seq has them all.
   */
  latest(): Promise<number>
  /**
   * In one read: the latest seq, and the id of the latest unregistration (0 when none; it never repeats, and moves at
   * every removal or replacement of a segment). While both are unchanged, the list is unchanged.
   */
  state(): Promise<{ seq: number; removed: number }>
  /** The registered segments with a seq above `seq`. */
  listAfter(seq: number): Promise<SegmentMeta[]>
  /**
   * In one transaction: deletes the rows `rowIds` of `entries` and registers the segment. False, and nothing
   * changed, when one of the rows is gone already.
   */
  register(segment: Omit<SegmentMeta, 'seq'>, rowIds: readonly number[], created: number): Promise<boolean>
  /** The blob keys of the registered segments (for the blob sweep). */
  blobReferences(): Promise<{ key: string; item: string }[]>
  /** Gives the space of the rows compaction deleted back to the file system, where the store does not do it itself. */
  reclaim?(): Promise<void>
  /**
   * Optional (a batch written straight into segments): reserves `n` consecutive row ids that no row or segment holds,
   * and that no row will be given later (rows are numbered above them); answers the first. The store is not
   * changed: ids reserved but never registered (the write failed or was refused) are a gap, nothing more.
   */
  reserveIds?(n: number): Promise<number>
  /**
   * Optional, with reserveIds: registers segments of entries written straight into them (`topId`: the highest row
   * id they hold, kept so that no row is given it), and adds their bytes to their owner's usage, in one transaction;
   * QuotaExceeded (and nothing changed) past the owner's quota.
   */
  registerIngested?(segments: readonly Omit<SegmentMeta, 'seq'>[], topId: number, usage: IngestUsage | undefined, created: number): Promise<void>
  /**
   * Optional (the compaction's merge of small segments): in one transaction, registers `next`, which holds exactly the
   * entries of `olds`, unregisters `olds` and journals their keys for their blobs' removal (as a retention rewrite
   * does: server/search/retention-repo.ts); their tag statistics are carried over when each has them. Answers the
   * journal ids, or null (nothing changed) when one of `olds` is no longer registered.
   */
  merge?(olds: readonly { seq: number; key: string }[], next: Omit<SegmentMeta, 'seq'>, created: number): Promise<number[] | null>
  /** With merge: the blobs of these journal rows are deleted (RemovalRepo.blobsRemoved). */
  blobsRemoved?(ids: readonly number[]): Promise<void>
}

/** What a batch adds to its owner's usage (server/store/quota.ts): in all, and by tag id. */
export interface IngestUsage {
  owner: number
  quota?: number
  bytes: number
  byTag: Map<number, number>
}

export interface SegmentedOptions {
  targetBytes?: number
  maxEntries?: number
  cacheBytes?: number
  /** Batches of at least this many bytes of data go straight into segments (SEALED_INGEST_BYTES; Infinity: never). */
  sealedIngestBytes?: number
  /** The zstd level of new segments (SEGMENT_ZSTD_LEVEL); null: the plain format (bench/segments-zstd.ts compares). */
  zstdLevel?: number | null
  log?: Logger
}

const FIRST_KEY: Cursor = { ts: Number.MIN_SAFE_INTEGER, tagId: -1, id: -1 }

/** A segment in a step's merge: entries [p, q) are still to be walked. */
interface Source {
  seg: Segment
  p: number
  q: number
}

export class SegmentedEntries implements EntriesRepo {
  /** The registered segments by first key, and the greatest last key of each prefix of that list. */
  private metas: SegmentMeta[] = []
  private reach: Cursor[] = []
  /** The latest seq of the list (-1: not loaded yet). */
  private known = -1
  /** The latest unregistration the list has seen (see SegmentsRepo.state). */
  private knownRemoved = 0
  /** Least recently used first. */
  private readonly cache = new Map<string, { size: number; segment: Promise<Segment> }>()
  private cached = 0
  private readonly targetBytes: number
  private readonly maxEntries: number
  private readonly cacheBytes: number
  private readonly sealedIngestBytes: number
  /**
   * The compaction runs of this process in flight. Ingest starts none while one runs; the periodic job's run does not
   * wait for one started by ingest (two runs over the same rows are safe: the second to register finds its rows gone
   * and drops its blob), so its lease never waits on ingest.
   */
  private readonly runs = new Set<Promise<number>>()
  /** Bytes this process ingested since its last compaction run began, and whether it may start one (compactOnIngest). */
  private ingestedSince = 0
  private mayCompact: (() => boolean) | null = null

  constructor(
    private readonly base: EntriesRepo,
    private readonly repo: SegmentsRepo,
    private readonly blobs: BlobStore,
    private readonly opts: SegmentedOptions = {},
  ) {
    this.targetBytes = opts.targetBytes ?? SEGMENT_BYTES
    this.maxEntries = opts.maxEntries ?? SEGMENT_ENTRIES
    this.cacheBytes = opts.cacheBytes ?? SEGMENT_CACHE_BYTES
    this.sealedIngestBytes = opts.sealedIngestBytes ?? SEALED_INGEST_BYTES
  }

  async ingest(batch: NewEntry[], rules?: IngestRules): Promise<Ingested> {
    if (this.repo.reserveIds && this.repo.registerIngested) {
      let bytes = 0
      for (const e of batch) bytes += e.data.byteLength
      if (bytes >= this.sealedIngestBytes) {
        const sealed = await this.ingestSealed(batch, rules ?? {})
        if (sealed) return sealed
      }
    }
    const stored = await this.base.ingest(batch, rules)
    if (this.mayCompact) {
      for (const e of batch) this.ingestedSince += e.data.byteLength
      // Once a segment's worth is waiting, a short run (INGEST_COMPACT_SEGMENTS) starts between this batch and the next.
      if (this.ingestedSince >= this.targetBytes && this.runs.size === 0 && this.mayCompact()) {
        void this.compact({ maxSegments: INGEST_COMPACT_SEGMENTS }).catch((e: unknown) =>
          this.opts.log?.warn('a compaction started by ingest failed; the periodic one goes on', { error: e instanceof Error ? e.message : String(e) }),
        )
      }
    }
    return stored
  }

  /**
   * Stores a batch straight into sealed segments, or answers null (nothing done) when it names a tag the store does
   * not know yet (the row path creates tags, within the store's bound on them). The guarantees of the row path hold:
   * every entry or none (the blobs are written and fsynced first; one transaction registers the segments and adds the
   * owner's usage, refused whole past the quota); ids that no row or segment holds (reserved first), in batch order
   * among entries of the same time and tag, as rows are numbered.
   */
  private async ingestSealed(batch: NewEntry[], rules: IngestRules): Promise<Ingested | null> {
    const names = [...new Set(batch.map((e) => e.tag))]
    const tags = await this.base.tagsNamed(names)
    if (tags.length !== names.length) return null
    const idOf = new Map(tags.map((t) => [t.name, t.id]))
    let usage: IngestUsage | undefined
    if (rules.owner !== undefined) {
      usage = { owner: rules.owner, quota: rules.quota, bytes: 0, byTag: new Map() }
      for (const e of batch) {
        const cost = entryBytes(e)
        const id = idOf.get(e.tag)!
        usage.bytes += cost
        usage.byTag.set(id, (usage.byTag.get(id) ?? 0) + cost)
      }
    }
    const first = await this.repo.reserveIds!(batch.length)
    const entries: SegmentEntry[] = batch.map((e, i) => ({ ts: e.ts, tagId: idOf.get(e.tag)!, id: first + i, src: e.src, data: e.data }))
    entries.sort((a, b) => compareKeys(a.ts, a.tagId, a.id, b.ts, b.tagId, b.id))
    // Pieces of at most a segment's size and entries, as a compaction cuts them.
    const pieces: SegmentEntry[][] = []
    let piece: SegmentEntry[] = []
    let size = 0
    for (const e of entries) {
      if (piece.length > 0 && (size + e.data.byteLength > this.targetBytes || piece.length >= this.maxEntries)) {
        pieces.push(piece)
        piece = []
        size = 0
      }
      piece.push(e)
      size += e.data.byteLength
    }
    if (piece.length > 0) pieces.push(piece)
    const written: Omit<SegmentMeta, 'seq'>[] = []
    let registered = false
    try {
      for (const p of pieces) {
        // Level 1, off the event loop: see INGEST_ZSTD_LEVEL.
        const encoded = await this.seal(p, INGEST_ZSTD_LEVEL)
        const key = `segments/${crypto.randomUUID()}`
        written.push({ key, count: p.length, bytes: encoded.byteLength, min: cursorOf(p[0]!), max: cursorOf(p.at(-1)!) })
        // Durable before it is registered: put resolves once the blob is fsynced (disk) or acknowledged (S3).
        await this.blobs.putBytes(key, encoded)
      }
      await this.repo.registerIngested!(written, first + batch.length - 1, usage, Date.now())
      registered = true
    } finally {
      // Not registered (refused past the quota, or the store failed): the blobs go now; if this process dies first,
      // the blob sweep removes them.
      if (!registered) for (const w of written) await this.blobs.delete(w.key).catch(() => undefined)
    }
    // Stored: a failure to load the list now must not fail the request (a walk step checks the list itself).
    await this.refresh().catch(() => undefined)
    return { tags, created: [] }
  }

  /**
   * Makes ingest start a short compaction run whenever a segment's worth of entries came in through this process
   * since its last run, and `allowed()` says so (the process holds the compaction's lease: one replica compacts).
   */
  compactOnIngest(allowed: () => boolean): void {
    this.mayCompact = allowed
  }

  /** Whether a compaction run of this process is in flight. */
  get compacting(): boolean {
    return this.runs.size > 0
  }

  /** Resolves once no compaction run of this process is in flight (tests; a clean stop). */
  async compacted(): Promise<void> {
    while (this.runs.size > 0) await Promise.allSettled([...this.runs])
  }
  allTags(): Promise<Tag[]> {
    return this.base.allTags()
  }
  tagsNamed(names: readonly string[]): Promise<Tag[]> {
    return this.base.tagsNamed(names)
  }
  tagsNumbered(ids: readonly number[]): Promise<Tag[]> {
    return this.base.tagsNumbered(ids)
  }
  tagsFrom(id: number): Promise<Tag[]> {
    return this.base.tagsFrom(id)
  }
  ping(): Promise<void> {
    return this.base.ping()
  }

  /** Loads the segments registered since the last look (one index probe when there are none); answers whether any were. */
  private async refresh(): Promise<boolean> {
    const { seq: top, removed } = await this.repo.state()
    if (removed !== this.knownRemoved) {
      // A segment went: the whole list again. The state was read first, so a change after it is seen at the next look;
      // a segment registered in between is in the list already, and `known` covers it (it is not added twice).
      const list = await this.repo.listAfter(0)
      this.setList(list)
      this.forgetRemoved(list)
      let known = top
      for (const m of list) if (m.seq > known) known = m.seq
      this.known = known
      this.knownRemoved = removed
      return true
    }
    if (top <= this.known) return false
    const fetched = await this.repo.listAfter(Math.max(0, this.known))
    // Another step of this process may have loaded some of them meanwhile (its refresh ran alongside this one).
    const added = fetched.filter((m) => m.seq > this.known)
    if (added.length === 0 && top <= this.known) return false
    this.setList([...this.metas, ...added])
    this.known = Math.max(this.known, top, ...added.map((m) => m.seq))
    return true
  }

  /**
   * Drops what the cache holds of segments no longer registered: a removed segment's mapping would keep its deleted
   * file's space taken (and its decoded data memory) until evicted. A walk that holds one of them keeps it readable.
   */
  private forgetRemoved(list: readonly SegmentMeta[]): void {
    const registered = new Set(list.map((m) => m.key))
    for (const [key, e] of this.cache) {
      if (registered.has(key)) continue
      this.cache.delete(key)
      this.cached -= e.size
    }
  }

  private setList(list: SegmentMeta[]): void {
    list.sort((a, b) => compareCursors(a.min, b.min) || a.seq - b.seq)
    const reach: Cursor[] = []
    let far = FIRST_KEY
    for (const m of list) {
      if (compareCursors(m.max, far) > 0) far = m.max
      reach.push(far)
    }
    this.metas = list
    this.reach = reach
  }

  /** The registered segments now, by first key (for retention and deletion). */
  async segmentList(): Promise<readonly SegmentMeta[]> {
    await this.refresh()
    return this.metas
  }

  /** A registered segment, decoded with its data (from the cache when it is there). */
  async open(meta: SegmentMeta): Promise<Segment> {
    const seg = await this.load(meta)
    await seg.loadData()
    return seg
  }

  /**
   * The blob of a segment of `entries` (sorted by key), in the format the compaction writes (a compaction's or a
   * rewrite's segment): compressed off the event loop (Bun's zstd thread pool) at `level` (the store's by default),
   * or plain with zstdLevel null.
   */
  async seal(entries: readonly SegmentEntry[], level = this.opts.zstdLevel ?? SEGMENT_ZSTD_LEVEL): Promise<Uint8Array> {
    if (this.opts.zstdLevel === null) return encodeSegment(entries)
    return withPlainSegment(entries, (plain) => compressSegment(plain, level))
  }

  /**
   * A segment's distinct tags (from its header), or null when it cannot be read and the list has changed meanwhile (it
   * was removed: the count is done again over the new list); the error when the list is unchanged.
   */
  private async tagsOrGone(meta: SegmentMeta, used: SegmentMeta[]): Promise<Iterable<number> | null> {
    try {
      return await this.tagsOf(meta)
    } catch (e) {
      await this.refresh()
      if (this.metas !== used) return null
      throw e
    }
  }

  /**
   * The segments of a step's list, decoded. Null when one cannot be read and the list has changed meanwhile (it was
   * removed: the step is done again over the new list); the error when the list is unchanged.
   */
  private async loadAll(metas: readonly SegmentMeta[], used: SegmentMeta[]): Promise<Segment[] | null> {
    try {
      return await Promise.all(metas.map((m) => this.load(m)))
    } catch (e) {
      await this.refresh()
      if (this.metas !== used) return null
      throw e
    }
  }

  /**
   * The segments a step after `after` merges: those holding a key just after it and those starting before the window
   * ends; `hi` is where the step's window ends: the end of the earliest-ending of those holding a key just after
   * `after` and of the first segment starting after it. Null when no segment holds a key after `after` with a time
   * before `end`.
   */
  private window(after: Cursor, end: number): { metas: SegmentMeta[]; hi: Cursor } | null {
    const { metas, reach } = this
    // i0: the first segment starting after `after`.
    let lo = 0
    let hi = metas.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (compareCursors(metas[mid]!.min, after) <= 0) lo = mid + 1
      else hi = mid
    }
    const i0 = lo
    const chosen: SegmentMeta[] = []
    // Segments starting at or before `after` that end after it (walking back while some earlier one reaches past it).
    for (let j = i0 - 1; j >= 0 && compareCursors(reach[j]!, after) > 0; j--) if (compareCursors(metas[j]!.max, after) > 0) chosen.push(metas[j]!)
    let bound: Cursor | null = null
    for (const m of chosen) if (bound === null || compareCursors(m.max, bound) < 0) bound = m.max
    // The first segment starting after `after` ends the window too: one segment spanning a long time (rows compacted
    // while other batches went straight into segments) would otherwise bring every segment it overlaps into each step
    // (measured: 1,000,000 lines, 49 segments, one of them spanning all: a grep's walk decoded all 49 at every step).
    const next = metas[i0]
    if (next !== undefined && next.min.ts < end && (bound === null || compareCursors(next.max, bound) < 0)) bound = next.max
    if (bound === null) return null
    for (let j = i0; j < metas.length && compareCursors(metas[j]!.min, bound) <= 0 && metas[j]!.min.ts < end; j++) chosen.push(metas[j]!)
    return { metas: chosen, hi: bound }
  }

  async scan(tagIds: readonly number[] | null, after: Cursor, end: number, limit: number, maxBytes = Number.POSITIVE_INFINITY, opts: ScanOptions = {}) {
    if (this.known < 0) await this.refresh()
    for (;;) {
      // The list this step uses: another step or a compaction of this process may load a newer one meanwhile, so the
      // check below compares with this one, not with whatever is loaded then.
      const used = this.metas
      const w = this.window(after, end)
      if (w === null) {
        // No segment holds an entry of this walk any more: the rows alone, as without segments.
        const rows = await this.base.scan(tagIds, after, end, limit, maxBytes, opts)
        await this.refresh()
        if (this.metas !== used) continue
        return rows
      }
      const hi = opts.upTo && compareCursors(opts.upTo, w.hi) < 0 ? opts.upTo : w.hi
      const rows = await this.base.scan(tagIds, after, end, limit, maxBytes, { upTo: hi })
      const segments = await this.loadAll(w.metas, used)
      if (segments === null) continue
      this.prefetch(w.hi, end)
      await Promise.all(segments.map((seg) => seg.loadData()))
      // The rows were read against this list: a segment registered meanwhile may hold rows this read missed.
      await this.refresh()
      if (this.metas !== used) continue
      let rowBytes = 0
      for (const r of rows) rowBytes += r.data?.byteLength ?? 0
      // Rows cut short by the limit or the byte budget cover the window only up to the last one.
      const bound = (rows.length >= limit || rowBytes >= maxBytes) && rows.length > 0 && compareCursors(rows.at(-1)!, hi) < 0 ? rows.at(-1)! : hi
      return this.merge(segments, rows, tagIds, after, bound, end, limit, maxBytes, opts.needle)
    }
  }

  /**
   * The entries of the tags `tagIds` (all when null) with `ts` in [start, end), rows and segments together, each
   * counted once: the rows are counted against a segment list that is checked unchanged afterwards (as a scan step
   * does), and a segment's entries are counted from its times and tags alone (a segment wholly inside the range and
   * of any tag by its entry count), never its data. With `needle`, only the entries whose data hold it: a segment's
   * data are searched with one Buffer.indexOf loop, each hit mapped to its entry by offset (as a grep's scan step).
   */
  async count(tagIds: readonly number[] | null, start: number, end: number, needle?: Uint8Array): Promise<number> {
    if (tagIds !== null && tagIds.length === 0) return 0
    const base = this.base
    if (!base.count) throw new Error('the entries store cannot count')
    await this.refresh()
    for (;;) {
      const used = this.metas
      const rows = await base.count(tagIds, start, end, needle)
      await this.refresh()
      if (this.metas !== used) continue
      let n = rows
      const one = tagIds?.length === 1 ? tagIds[0]! : null
      const wanted = tagIds === null ? null : new Set(tagIds)
      const grep = needle !== undefined && needle.byteLength > 0 ? Buffer.from(needle.buffer, needle.byteOffset, needle.byteLength) : null
      let gone = false
      const inRange = used.filter((m) => m.max.ts >= start && m.min.ts < end)
      for (let k = 0; k < inRange.length; k++) {
        const m = inRange[k]!
        if (grep !== null) {
          // The next segments' data decompressed on the thread pool while this one is searched.
          if (this.cacheBytes >= (PREFETCH_SEGMENTS + 2) * 2 * this.targetBytes)
            for (const ahead of inRange.slice(k + 1, k + 1 + PREFETCH_SEGMENTS)) this.prefetchOne(ahead)
          const [seg] = (await this.loadAll([m], used)) ?? []
          if (seg === undefined) {
            gone = true
            break
          }
          await seg.loadData()
          const p = seg.tsAtLeast(start)
          const q = seg.tsAtLeast(end, p)
          if (p >= q) continue
          const base = seg.off[p]!
          const region = seg.data.subarray(base, seg.off[q]!)
          for (let pos = 0; pos < region.byteLength; ) {
            const at = region.indexOf(grep, pos)
            if (at === -1) break
            const e = seg.entryAt(base + at, p, q)
            if (base + at + grep.byteLength > seg.off[e + 1]!) {
              pos = at + 1 // across two entries: not a hit
              continue
            }
            if (wanted === null || wanted.has(seg.tag[e]!)) n++
            pos = seg.off[e + 1]! - base
          }
          continue
        }
        if (wanted === null && m.min.ts >= start && m.max.ts < end) {
          n += m.count
          continue
        }
        if (wanted !== null && m.min.ts >= start && m.max.ts < end) {
          // Wholly inside the range: by its distinct tags alone when they are all wanted, or none is.
          const tags = await this.tagsOrGone(m, used)
          if (tags === null) {
            gone = true
            break
          }
          let all = true
          let any = false
          for (const t of tags) {
            if (wanted.has(t)) any = true
            else all = false
          }
          if (all) n += m.count
          if (all || !any) continue
        }
        const [seg] = (await this.loadAll([m], used)) ?? []
        if (seg === undefined) {
          gone = true
          break
        }
        const p = seg.tsAtLeast(start)
        const q = seg.tsAtLeast(end, p)
        if (wanted === null) n += q - p
        else if (one !== null) {
          const tags = seg.tag
          for (let i = p; i < q; i++) if (tags[i] === one) n++
        } else for (let i = p; i < q; i++) if (wanted.has(seg.tag[i]!)) n++
      }
      // A segment of the list was removed meanwhile: counted again over the new list.
      if (gone) continue
      return n
    }
  }

  /** Merges the segments' entries in (after, bound] with the rows of that window (see scan). */
  private merge(
    segments: Segment[],
    rows: ScanRow[],
    tagIds: readonly number[] | null,
    after: Cursor,
    bound: Cursor,
    end: number,
    limit: number,
    maxBytes: number,
    needle: Uint8Array | undefined,
  ): ScanRow[] {
    const wanted = tagIds === null ? null : new Set(tagIds)
    const sources: Source[] = []
    for (const seg of segments) {
      const p = seg.after(after)
      const q = Math.min(seg.after(bound), seg.tsAtLeast(end, p))
      // A segment without any wanted tag is not walked at all (its entries would only be passed over): segments of
      // other tags that overlap in time (logs of several sources ingested one after the other) cost nothing.
      if (p < q && (wanted === null || holdsAny(seg, wanted))) sources.push({ seg, p, q })
    }
    const grep = needle !== undefined && needle.byteLength > 0 ? Buffer.from(needle.buffer, needle.byteOffset, needle.byteLength) : null
    const out: ScanRow[] = []
    let answered = 0
    let examined = 0
    /** The last key walked (answered or not); a row at or before it was walked in a segment already. */
    let last: Cursor = after
    let r = 0
    const entryRow = (seg: Segment, i: number): ScanRow => ({
      ts: seg.ts[i]!,
      tagId: seg.tag[i]!,
      id: seg.id[i]!,
      src: seg.srcs[seg.srcIdx[i]!]!,
      data: seg.entryData(i),
    })
    while (answered < limit && examined < maxBytes) {
      // Rows walked in a segment already (the same entry, seen as a row before its compaction) are dropped.
      while (r < rows.length && compareCursors(rows[r]!, last) <= 0) r++
      let best: Source | null = null
      for (const s of sources)
        if (s.p < s.q && (best === null || compareKeys(s.seg.ts[s.p]!, s.seg.tag[s.p]!, s.seg.id[s.p]!, best.seg.ts[best.p]!, best.seg.tag[best.p]!, best.seg.id[best.p]!) < 0))
          best = s
      const row = rows[r]
      if (best === null && row === undefined) break
      if (row !== undefined && (best === null || compareKeys(row.ts, row.tagId, row.id, best.seg.ts[best.p]!, best.seg.tag[best.p]!, best.seg.id[best.p]!) < 0)) {
        out.push(row)
        if (row.data !== null) answered++
        examined += row.data?.byteLength ?? 0
        last = row
        r++
        continue
      }
      // A run of `best` up to the next key of another source (a row equal to one of its entries is its entry).
      const seg = best!.seg
      const p = best!.p
      let stop = best!.q
      if (row !== undefined) stop = Math.min(stop, firstAtOrAfter(seg, row, p, stop) + (sameKey(seg, firstAtOrAfter(seg, row, p, stop), row) ? 1 : 0))
      for (const o of sources)
        if (o !== best && o.p < o.q) stop = Math.min(stop, firstAtOrAfter(seg, o.seg.key(o.p), p, stop))
      // The byte budget: the run ends at the entry that crosses it. A grep's bytes cost a GREP_BYTES_PER_BYTE-th each.
      const room = (maxBytes - examined) * (grep ? GREP_BYTES_PER_BYTE : 1)
      if (seg.off[stop]! - seg.off[p]! > room) stop = Math.min(stop, seg.entryAt(seg.off[p]! + room, p, stop) + 1)
      let i = p
      if (grep) {
        const base = seg.off[p]!
        const region = seg.data.subarray(base, seg.off[stop]!)
        let pos = 0
        i = stop
        while (pos < region.byteLength) {
          const at = region.indexOf(grep, pos)
          if (at === -1) break
          const e = seg.entryAt(base + at, p, stop)
          if (base + at + grep.byteLength > seg.off[e + 1]!) {
            pos = at + 1 // across two entries: not a hit
            continue
          }
          if (wanted === null || wanted.has(seg.tag[e]!)) {
            out.push(entryRow(seg, e))
            answered++
            if (answered >= limit) {
              i = e + 1
              break
            }
          }
          pos = seg.off[e + 1]! - base
        }
      } else {
        for (; i < stop; ) {
          const e = i++
          if (wanted !== null && !wanted.has(seg.tag[e]!)) continue
          out.push(entryRow(seg, e))
          if (++answered >= limit) break
        }
      }
      // Every run walks at least one entry; one that did not would repeat for ever with the event loop held.
      if (i <= p) throw new Error('the walk through a segment made no progress')
      examined += (seg.off[i]! - seg.off[p]!) / (grep ? GREP_BYTES_PER_BYTE : 1)
      best!.p = i
      last = seg.key(i - 1)
      // The entries walked without an answer: one marker carries the walk past them.
      const tail = out.at(-1)
      if (tail === undefined || compareCursors(tail, last) < 0) out.push({ ...last, src: null, data: null })
    }
    // A window walked to its end without anything to answer: a marker at its end carries the walk on.
    if (out.length === 0 && compareCursors(bound, after) > 0 && bound.ts < end) out.push({ ts: bound.ts, tagId: bound.tagId, id: bound.id, src: null, data: null })
    return out
  }

  /**
   * A segment's distinct tag ids: from the cache when it is decoded there, else from a compressed segment's header
   * (its blob read, nothing decompressed: a count by tag of segments not in the cache), else decoded.
   */
  private async tagsOf(meta: SegmentMeta): Promise<Iterable<number>> {
    const hit = this.cache.get(meta.key)
    if (hit) return (await hit.segment).tags
    if (this.blobs.map) {
      const tags = headerTags(await this.blobs.map(meta.key))
      if (tags !== null) return tags
    }
    return (await this.load(meta)).tags
  }

  /** Starts decoding (data included) the PREFETCH_SEGMENTS segments that start after `hi`, before `end`. */
  private prefetch(hi: Cursor, end: number): void {
    // Not with a cache too small to keep them until the walk comes (they would be decoded twice).
    if (this.cacheBytes < (PREFETCH_SEGMENTS + 2) * 2 * this.targetBytes) return
    const { metas } = this
    let lo = 0
    let top = metas.length
    while (lo < top) {
      const mid = (lo + top) >>> 1
      if (compareCursors(metas[mid]!.min, hi) <= 0) lo = mid + 1
      else top = mid
    }
    for (let j = lo; j < Math.min(metas.length, lo + PREFETCH_SEGMENTS) && metas[j]!.min.ts < end; j++) this.prefetchOne(metas[j]!)
  }

  /** Decodes a segment into the cache ahead of its use; a failure is left for the walk that needs it to meet. */
  private prefetchOne(meta: SegmentMeta): void {
    this.load(meta)
      .then((seg) => seg.loadData())
      .catch(() => undefined)
  }

  /** The decoded segment, from the cache or its blob. */
  private load(meta: SegmentMeta): Promise<Segment> {
    const hit = this.cache.get(meta.key)
    if (hit) {
      this.cache.delete(meta.key)
      this.cache.set(meta.key, hit)
      return hit.segment
    }
    const segment = (async () => {
      // On disk, a memory map: the data section is searched straight from the page cache (a copy into memory cost
      // more than the search itself: measured 2.4 GB/s against about 10 GB/s for the indexOf).
      // A compressed segment is decompressed from the map (its decoded bytes are then in memory: the cache counts them).
      if (this.blobs.map) return decodeSegment(await this.blobs.map(meta.key))
      const body = await this.blobs.body(meta.key)
      const bytes = body instanceof Blob ? await body.arrayBuffer() : await new Response(body).arrayBuffer()
      return decodeSegment(new Uint8Array(bytes))
    })()
    // Counted at its stored size until decoded, then at its decoded size (index and data, decoded or to be).
    const entry = { size: meta.bytes, segment }
    this.cache.set(meta.key, entry)
    this.cached += entry.size
    segment.then(
      (seg) => {
        if (this.cache.get(meta.key) !== entry) return
        this.cached += seg.decodedBytes - entry.size
        entry.size = seg.decodedBytes
        this.evict(entry)
      },
      () => {
        if (this.cache.get(meta.key) === entry) {
          this.cache.delete(meta.key)
          this.cached -= entry.size
        }
      },
    )
    this.evict(entry)
    return segment
  }

  /** Drops the least recently used segments (never `keep`) until the cache is within its bound. */
  private evict(keep: { size: number }): void {
    for (const [key, e] of this.cache) {
      if (this.cached <= this.cacheBytes) break
      if (e === keep) continue
      this.cache.delete(key)
      this.cached -= e.size
    }
  }

  /** Bytes the decoded-segment cache counts now (tests: its bound). */
  get cachedBytes(): number {
    return this.cached
  }

  /**
   * Moves the oldest rows, in (ts, tag_id, id) order, into segments of about targetBytes while at least that much is
   * in rows (`all`: every row, the last segment smaller). Answers how many segments it wrote.
   */
  async compact(opts: { all?: boolean; maxSegments?: number } = {}): Promise<number> {
    this.ingestedSince = 0
    const run = this.compactRun(opts)
    this.runs.add(run)
    try {
      return await run
    } finally {
      this.runs.delete(run)
    }
  }

  private async compactRun(opts: { all?: boolean; maxSegments?: number }): Promise<number> {
    let written = 0
    while (written < (opts.maxSegments ?? COMPACT_MAX_SEGMENTS)) {
      const rows = await this.base.scan(null, FIRST_KEY, Number.MAX_SAFE_INTEGER, this.maxEntries, this.targetBytes)
      let bytes = 0
      for (const r of rows) bytes += r.data!.byteLength
      if (rows.length === 0 || (!opts.all && bytes < this.targetBytes && rows.length < this.maxEntries)) break
      const entries: SegmentEntry[] = rows.map((r) => ({ ts: r.ts, tagId: r.tagId, id: r.id, src: r.src!, data: r.data! }))
      const encoded = await this.seal(entries)
      const key = `segments/${crypto.randomUUID()}`
      // Durable before it is registered: put resolves once the blob is fsynced (disk) or acknowledged (S3).
      await this.blobs.putBytes(key, encoded)
      let registered = false
      try {
        registered = await this.repo.register(
          { key, count: rows.length, bytes: encoded.byteLength, min: cursorOf(rows[0]!), max: cursorOf(rows.at(-1)!) },
          rows.map((r) => r.id),
          Date.now(),
        )
      } finally {
        // Not registered (another compaction took some of these rows, or the store failed): the blob goes now; if
        // this process dies first, the blob sweep removes it.
        if (!registered) await this.blobs.delete(key).catch(() => undefined)
      }
      if (!registered) {
        this.opts.log?.warn('a compaction found its rows taken by another; its segment was dropped', { key })
        break
      }
      written++
    }
    if (written > 0) {
      await this.refresh()
      await this.repo.reclaim?.()
    }
    const budget = (opts.maxSegments ?? COMPACT_MAX_SEGMENTS) - written
    return written + (budget > 0 ? await this.mergeSmall(budget, opts.all ?? false) : 0)
  }

  /** What the compaction needs to know of a segment to merge it (its header's), by key: read once per segment. */
  private readonly shapes = new Map<string, { dataBytes: number; tags: string }>()

  private async shapeOf(meta: SegmentMeta): Promise<{ dataBytes: number; tags: string }> {
    let shape = this.shapes.get(meta.key)
    if (shape) return shape
    let header = this.blobs.map ? headerShape(await this.blobs.map(meta.key)) : null
    if (header === null) {
      const seg = await this.load(meta)
      header = { count: seg.count, dataBytes: seg.off[seg.count]!, tags: [...seg.tags] }
    }
    shape = { dataBytes: header.dataBytes, tags: header.tags.sort((a, b) => a - b).join(',') }
    this.shapes.set(meta.key, shape)
    return shape
  }

  /**
   * Merges small segments (SMALL_SEGMENT_SHARE) of the same tags that follow each other in the list, by first key,
   * into segments of at most targetBytes and maxEntries; at most `maxMerges` of them. A run is merged once its result
   * is not small itself (so an entry is rewritten about once, not at every new segment), or with `all` whatever its
   * size. Answers how many segments it wrote.
   *
   * Crash-safe and exact as a retention rewrite: the new segment holds the same entries with the same keys; its blob
   * is durable before one transaction (SegmentsRepo.merge) registers it and unregisters the old ones, refused when one
   * of them is gone already (a rewrite or another merge took it: the new blob is dropped); the old blobs are deleted
   * only after that commit, through the removal journal (a crash in between: the retention sweep deletes them).
   * A walk that used the old list finds it changed and is done again (see the header).
   */
  private async mergeSmall(maxMerges: number, all: boolean): Promise<number> {
    if (!this.repo.merge) return 0
    const list = await this.segmentList()
    const listed = new Set(list.map((m) => m.key))
    for (const key of this.shapes.keys()) if (!listed.has(key)) this.shapes.delete(key)
    const smallBytes = this.targetBytes * SMALL_SEGMENT_SHARE
    const smallCount = this.maxEntries * SMALL_SEGMENT_SHARE
    const ready: SegmentMeta[][] = []
    const runs = new Map<string, { metas: SegmentMeta[]; bytes: number; count: number }>()
    const close = (run: { metas: SegmentMeta[]; bytes: number } | undefined) => {
      if (run !== undefined && run.metas.length >= 2 && (all || run.bytes >= smallBytes)) ready.push(run.metas)
    }
    for (const m of list) {
      if (ready.length >= maxMerges) break
      if (m.count >= smallCount) continue
      const shape = await this.shapeOf(m).catch(() => null)
      // Unreadable (removed meanwhile, or its blob missing): not merged; retention and the blob sweep report it.
      if (shape === null || shape.dataBytes >= smallBytes) continue
      let run = runs.get(shape.tags)
      if (run !== undefined && (run.bytes + shape.dataBytes > this.targetBytes || run.count + m.count > this.maxEntries)) {
        close(run)
        run = undefined
      }
      if (run === undefined) runs.set(shape.tags, (run = { metas: [], bytes: 0, count: 0 }))
      run.metas.push(m)
      run.bytes += shape.dataBytes
      run.count += m.count
    }
    for (const run of runs.values()) close(run)
    let merged = 0
    for (const metas of ready.slice(0, maxMerges)) if (await this.mergeSegments(metas)) merged++
    if (merged > 0) await this.refresh()
    return merged
  }

  /** Writes the entries of `metas` as one segment in their place (see mergeSmall); false when one of them was taken. */
  private async mergeSegments(metas: readonly SegmentMeta[]): Promise<boolean> {
    let segments: Segment[]
    try {
      segments = await Promise.all(metas.map((m) => this.open(m)))
    } catch (e) {
      // Removed since the list was read (a retention rewrite): the next run looks again.
      if (await this.refresh()) return false
      throw e
    }
    const entries: SegmentEntry[] = []
    for (const seg of segments)
      for (let i = 0; i < seg.count; i++) entries.push({ ts: seg.ts[i]!, tagId: seg.tag[i]!, id: seg.id[i]!, src: seg.srcs[seg.srcIdx[i]!]!, data: seg.entryData(i) })
    let sorted = true
    for (let i = 1; i < entries.length && sorted; i++) {
      const a = entries[i - 1]!
      const b = entries[i]!
      sorted = compareKeys(a.ts, a.tagId, a.id, b.ts, b.tagId, b.id) < 0
    }
    // Segments that overlap in time (batches of one tag from several senders) interleave.
    if (!sorted) entries.sort((a, b) => compareKeys(a.ts, a.tagId, a.id, b.ts, b.tagId, b.id))
    const encoded = await this.seal(entries)
    const key = `segments/${crypto.randomUUID()}`
    // Durable before it is registered: put resolves once the blob is fsynced (disk) or acknowledged (S3).
    await this.blobs.putBytes(key, encoded)
    let journal: number[] | null = null
    try {
      journal = await this.repo.merge!(metas, { key, count: entries.length, bytes: encoded.byteLength, min: cursorOf(entries[0]!), max: cursorOf(entries.at(-1)!) }, Date.now())
    } finally {
      // Not registered (one of the segments was taken meanwhile, or the store failed): the blob goes now; if this
      // process dies first, the blob sweep removes it.
      if (journal === null) await this.blobs.delete(key).catch(() => undefined)
    }
    if (journal === null) {
      this.opts.log?.warn('a merge of small segments found one of them taken by another change; its segment was dropped', { key })
      return false
    }
    // After the commit only: a blob not deleted now stays in the journal, for the retention sweep.
    const done: number[] = []
    for (let k = 0; k < metas.length; k++) {
      try {
        await this.blobs.delete(metas[k]!.key)
        done.push(journal[k]!)
      } catch (e) {
        this.opts.log?.warn('could not delete the blob of a merged segment; the retention sweep tries again', { key: metas[k]!.key, error: String(e) })
      }
    }
    if (done.length > 0) await this.repo.blobsRemoved?.(done)
    return true
  }
}

/** Whether `ids` (lowest `lo`, highest `hi`) are every integer of [lo, hi], each once. */
export function fillsRange(ids: readonly number[], lo: number, hi: number): boolean {
  if (hi - lo + 1 !== ids.length) return false
  const seen = new Uint8Array(ids.length)
  for (const id of ids) {
    if (seen[id - lo] === 1) return false
    seen[id - lo] = 1
  }
  return true
}

function holdsAny(seg: Segment, wanted: ReadonlySet<number>): boolean {
  for (const t of seg.tags) if (wanted.has(t)) return true
  return false
}

function cursorOf(r: Cursor): Cursor {
  return { ts: r.ts, tagId: r.tagId, id: r.id }
}

/** The first entry in [from, to) whose key is at or after `c` (`to` when none). */
function firstAtOrAfter(seg: Segment, c: Cursor, from: number, to: number): number {
  let lo = from
  let hi = to
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (compareKeys(seg.ts[mid]!, seg.tag[mid]!, seg.id[mid]!, c.ts, c.tagId, c.id) < 0) lo = mid + 1
    else hi = mid
  }
  return lo
}

function sameKey(seg: Segment, i: number, c: Cursor): boolean {
  return i < seg.count && seg.ts[i] === c.ts && seg.tag[i] === c.tagId && seg.id[i] === c.id
}

interface SegmentDbRow {
  seq: number
  key: string
  count: number
  bytes: number
  min_ts: number
  min_tag: number
  min_id: number
  max_ts: number
  max_tag: number
  max_id: number
}

export function segmentOf(r: SegmentDbRow, num: (v: unknown) => number = Number): SegmentMeta {
  return {
    seq: num(r.seq),
    key: r.key,
    count: num(r.count),
    bytes: num(r.bytes),
    min: { ts: num(r.min_ts), tagId: num(r.min_tag), id: num(r.min_id) },
    max: { ts: num(r.max_ts), tagId: num(r.max_tag), id: num(r.max_id) },
  }
}

/** The server_settings key of the highest row id a segment of a SQLite store holds. */
export const SEGMENT_TOP_ID_KEY = 'entries.segment_top_id'

export const SEGMENT_COLUMNS = 'seq, key, count, bytes, min_ts, min_tag, min_id, max_ts, max_tag, max_id'

export class SqliteSegmentsRepo implements SegmentsRepo {
  private readonly q: {
    latest: Statement<{ seq: number | null }, []>
    state: Statement<{ seq: number | null; removed: number | null }, []>
    listAfter: Statement<SegmentDbRow, [number]>
    remove: Statement<unknown, [number]>
    removeRange: Statement<unknown, [number, number]>
    add: Statement<unknown, [string, number, number, number, number, number, number, number, number, number]>
    keys: Statement<{ key: string; item: string }, []>
    registered: Statement<{ one: number }, [number, string]>
    addReturning: Statement<{ seq: number }, [string, number, number, number, number, number, number, number, number, number]>
    statsHeld: Statement<{ n: number }, [string]>
    mergeStats: Statement<unknown, [number, string]>
    unregister: Statement<unknown, [string]>
    unregisterStats: Statement<unknown, [string]>
    journal: Statement<{ id: number }, [string, number]>
    blobGone: Statement<unknown, [number]>
    dropJournal: Statement<unknown, []>
    topId: Statement<unknown, [string]>
    addUsage: Statement<unknown, [number, number]>
    addTagUsage: Statement<unknown, [number, number, number]>
  }
  constructor(private readonly db: Database) {
    this.q = {
      latest: db.query('SELECT max(seq) AS seq FROM entry_segments'),
      state: db.query('SELECT (SELECT max(seq) FROM entry_segments) AS seq, (SELECT max(id) FROM entry_segment_removals) AS removed'),
      listAfter: db.query(`SELECT ${SEGMENT_COLUMNS} FROM entry_segments WHERE seq > ? ORDER BY seq`),
      remove: db.query('DELETE FROM entries WHERE id = ?'),
      removeRange: db.query('DELETE FROM entries WHERE id >= ? AND id <= ?'),
      add: db.query(
        `INSERT INTO entry_segments (key, count, bytes, min_ts, min_tag, min_id, max_ts, max_tag, max_id, created)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      keys: db.query("SELECT key, 'entry segment ' || seq AS item FROM entry_segments"),
      registered: db.query('SELECT 1 AS one FROM entry_segments WHERE seq = ? AND key = ?'),
      addReturning: db.query(
        `INSERT INTO entry_segments (key, count, bytes, min_ts, min_tag, min_id, max_ts, max_tag, max_id, created)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
      ),
      statsHeld: db.query('SELECT count(DISTINCT seq) AS n FROM entry_segment_tags WHERE seq IN (SELECT value FROM json_each(?))'),
      mergeStats: db.query(
        `INSERT INTO entry_segment_tags (seq, tag_id, count, bytes, min_ts, max_ts)
         SELECT ?1, tag_id, sum(count), sum(bytes), min(min_ts), max(max_ts) FROM entry_segment_tags
         WHERE seq IN (SELECT value FROM json_each(?2)) GROUP BY tag_id`,
      ),
      unregister: db.query('DELETE FROM entry_segments WHERE seq IN (SELECT value FROM json_each(?))'),
      unregisterStats: db.query('DELETE FROM entry_segment_tags WHERE seq IN (SELECT value FROM json_each(?))'),
      journal: db.query('INSERT INTO entry_segment_removals (key, removed) VALUES (?, ?) RETURNING id'),
      blobGone: db.query('UPDATE entry_segment_removals SET blob_gone = 1 WHERE id = ?'),
      // The latest row stays: its id is the change counter readers compare (SegmentsRepo.state).
      dropJournal: db.query('DELETE FROM entry_segment_removals WHERE blob_gone = 1 AND id < (SELECT max(id) FROM entry_segment_removals)'),
      topId: db.query(
        `INSERT INTO server_settings (key, value) VALUES ('${SEGMENT_TOP_ID_KEY}', ?1)
         ON CONFLICT (key) DO UPDATE SET value = CAST(max(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER)) AS TEXT)`,
      ),
      addUsage: db.query(ADD_USAGE_SQL),
      addTagUsage: db.query(ADD_TAG_USAGE_SQL),
    }
  }
  // One process writes a SQLite store: seq (the rowid) grows with each registration. A seq freed by the removal of the
  // latest segment may be given again, after the removal's journal row, which makes readers read the whole list.
  async latest() {
    return this.q.latest.get()?.seq ?? 0
  }
  async state() {
    const r = this.q.state.get()!
    return { seq: r.seq ?? 0, removed: r.removed ?? 0 }
  }
  async listAfter(seq: number) {
    return this.q.listAfter.all(seq).map((r) => segmentOf(r))
  }
  async register(s: Omit<SegmentMeta, 'seq'>, rowIds: readonly number[], created: number) {
    const gone = new Error('rows gone')
    try {
      this.db.transaction(() => {
        let lo = Number.POSITIVE_INFINITY
        let hi = 0
        for (const id of rowIds) {
          if (id < lo) lo = id
          if (id > hi) hi = id
        }
        // Ids that fill their range exactly (what a time-ordered ingest gives) are deleted as that range in one
        // statement, which then deletes these rows and no other; otherwise one by one.
        if (fillsRange(rowIds, lo, hi)) {
          if (this.q.removeRange.run(lo, hi).changes !== rowIds.length) throw gone
        } else for (const id of rowIds) if (this.q.remove.run(id).changes !== 1) throw gone
        this.q.add.run(s.key, s.count, s.bytes, s.min.ts, s.min.tagId, s.min.id, s.max.ts, s.max.tagId, s.max.id, created)
        // The highest row id any segment holds (a segment's max_id is that of its last key, not its highest): new rows
        // are numbered above it (SqliteEntriesRepo.ingest), so no id of a segment is drawn again.
        this.q.topId.run(String(hi))
      })()
      return true
    } catch (e) {
      if (e === gone) return false
      throw e
    }
  }
  async blobReferences() {
    return this.q.keys.all()
  }
  async reserveIds(n: number) {
    return reserveRowIds(this.db, n)
  }
  async registerIngested(segments: readonly Omit<SegmentMeta, 'seq'>[], topId: number, usage: IngestUsage | undefined, created: number) {
    this.db.transaction(() => {
      if (usage) {
        checkQuotaSqlite(this.db, usage.owner, usage.quota, usage.bytes)
        this.q.addUsage.run(usage.owner, usage.bytes)
        for (const [tagId, bytes] of usage.byTag) this.q.addTagUsage.run(usage.owner, tagId, bytes)
      }
      for (const s of segments) this.q.add.run(s.key, s.count, s.bytes, s.min.ts, s.min.tagId, s.min.id, s.max.ts, s.max.tagId, s.max.id, created)
      this.q.topId.run(String(topId))
    })()
  }
  async merge(olds: readonly { seq: number; key: string }[], next: Omit<SegmentMeta, 'seq'>, created: number) {
    const seqs = JSON.stringify(olds.map((o) => o.seq))
    return this.db.transaction((): number[] | null => {
      for (const o of olds) if (!this.q.registered.get(o.seq, o.key)) return null
      // Inserted while the old rows still hold their seqs, so its seq is above every seq given yet.
      const s = next
      const { seq } = this.q.addReturning.get(s.key, s.count, s.bytes, s.min.ts, s.min.tagId, s.min.id, s.max.ts, s.max.tagId, s.max.id, created)!
      if (this.q.statsHeld.get(seqs)!.n === olds.length) this.q.mergeStats.run(seq, seqs)
      this.q.unregister.run(seqs)
      this.q.unregisterStats.run(seqs)
      return olds.map((o) => this.q.journal.get(o.key, created)!.id)
    })()
  }
  async blobsRemoved(ids: readonly number[]) {
    this.db.transaction(() => {
      for (const id of ids) this.q.blobGone.run(id)
      this.q.dropJournal.run()
    })()
  }
  async reclaim() {
    await reclaimSpace(this.db)
  }
}
