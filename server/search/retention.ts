// Retention and deletion of the embedded engine's entries (docs/operations.md, "Retention and deletion"): a periodic
// sweep that removes what the retention rules say is past its age or over its tag's size, and deletions of a tag's
// entries in a time range on an admin's request. Both act on the rows (`entries`) and on the sealed segments
// (server/search/segments.ts); the store side is server/search/retention-repo.ts.
//
// Guarantees:
// - Exact: a deletion removes every entry of its tag in [start, end) that was stored when it began, and nothing else:
//   rows are deleted first, then every segment the list holds afterwards (rows compacted meanwhile are in it: a
//   compaction whose rows were deleted registers nothing) is rewritten without those entries. An entry ingested into
//   the range while a deletion runs may stay. A retention sweep removes, per tag, every entry older than its age
//   limit (now minus the period), and the oldest segments' entries of a tag over its size limit.
// - Segments: a segment of which nothing stays is unregistered; one of which some entries stay is rewritten: the kept
//   entries (same keys) go into a new blob, written durably first, then one transaction registers it in the old one's
//   place and journals the old key (RemovalRepo.replaceSegment); the old blob is deleted after that commit. A crash
//   before the commit leaves an unregistered new blob (the blob sweep removes it) and the old segment in place; a crash
//   after it leaves the journal row, whose blob the next sweep deletes. Every step can be done again.
// - Crash-safe deletions: the intent (tag, range) is stored before anything is deleted; one cut off by a crash or a
//   store error is finished by the next sweep (at start: the sweep job runs at takeover).
// - Cluster: the sweep is a lease-guarded job (one replica at a time), deletions run under the lease
//   `entry-deletions` (one at a time in the cluster; a request while another runs is refused with 503), and a
//   segment's replacement commits only while the segment is still registered, so two rewrites of one segment never
//   both commit (the loser drops its blob and looks again).
// - Saved searches keep their results: those are blobs of their own (server/search/saving.ts), not segments.
import { BlobNotFoundError, type BlobStore } from '../blob'
import type { LeasesRepo } from '../store/leases'
import type { Logger } from '../runtime/log'
import type { EntriesRepo, Tag } from './entries'
import type { RemovalRepo, RemovedUsage, RetentionRule, SegmentTagStats, DeletionRecord } from './retention-repo'
import type { Segment, SegmentEntry, SegmentMeta } from './segment'
import type { SegmentedEntries } from './segments'

/** Rows deleted per transaction: a store transaction stays short whatever the range. */
export const DELETE_ROWS_BATCH = 5000
/** The cluster-wide lease a deletion holds while it runs. */
export const DELETION_LEASE = 'entry-deletions'
/** Finished deletions listed by GET /api/admin/entries/deletions. */
export const DELETIONS_LISTED = 50

/** The rules as they apply: per tag, the age and the size limit (undefined: none). */
export interface EffectiveRules {
  maxAgeMs: number | undefined
  tags: Map<string, { maxAgeMs: number | undefined; maxBytes: number | undefined }>
}

/** Thrown when another deletion holds the cluster's deletion lease. */
export class DeletionBusy extends Error {
  override name = 'DeletionBusy'
}

/**
 * The rules that apply: for each field, the stored rule's (the admin API's) when it sets it, else the variable's; 0 is
 * "no limit" either way. `variables` and `stored` hold at most one rule per tag ('' is the store-wide one).
 */
export function effectiveRules(variables: readonly RetentionRule[], stored: readonly RetentionRule[]): EffectiveRules {
  const merged = new Map<string, { maxAgeMs: number | null; maxBytes: number | null }>()
  for (const r of [...variables, ...stored]) {
    const was = merged.get(r.tag) ?? { maxAgeMs: null, maxBytes: null }
    merged.set(r.tag, { maxAgeMs: r.maxAgeMs ?? was.maxAgeMs, maxBytes: r.maxBytes ?? was.maxBytes })
  }
  const limit = (v: number | null | undefined) => (v === null || v === undefined || v <= 0 ? undefined : v)
  const tags = new Map<string, { maxAgeMs: number | undefined; maxBytes: number | undefined }>()
  for (const [tag, r] of merged) if (tag !== '') tags.set(tag, { maxAgeMs: r.maxAgeMs === null ? undefined : r.maxAgeMs, maxBytes: limit(r.maxBytes) })
  return { maxAgeMs: limit(merged.get('')?.maxAgeMs), tags }
}

/** The age limit of a tag: its own rule's when it sets one (0: keep for ever), else the store-wide one. */
function ageOf(rules: EffectiveRules, tag: string): number | undefined {
  const own = rules.tags.get(tag)?.maxAgeMs
  if (own !== undefined) return own > 0 ? own : undefined
  return rules.maxAgeMs
}

/** What a segment holds of each tag (bytes: the quota's entryBytes of its entries), over entries [0, n) or `only`. */
export function segmentStats(seg: Segment, tagNameBytes: (tagId: number) => number, only?: readonly number[]): SegmentTagStats[] {
  const byTag = new Map<number, SegmentTagStats>()
  const srcBytes = seg.srcs.map((s) => Buffer.byteLength(s))
  const add = (i: number) => {
    const tagId = seg.tag[i]!
    const ts = seg.ts[i]!
    const bytes = seg.off[i + 1]! - seg.off[i]! + srcBytes[seg.srcIdx[i]!]! + tagNameBytes(tagId) + 16
    const s = byTag.get(tagId)
    if (!s) byTag.set(tagId, { tagId, count: 1, bytes, minTs: ts, maxTs: ts })
    else {
      s.count++
      s.bytes += bytes
      if (ts < s.minTs) s.minTs = ts
      if (ts > s.maxTs) s.maxTs = ts
    }
  }
  if (only) for (const i of only) add(i)
  else for (let i = 0; i < seg.count; i++) add(i)
  return [...byTag.values()].sort((a, b) => a.tagId - b.tagId)
}

export interface DataRemovalDeps {
  entries: SegmentedEntries
  /** The entries' own store (tags, and nothing else). */
  tags: Pick<EntriesRepo, 'allTags' | 'tagsNamed'>
  repo: RemovalRepo
  blobs: BlobStore
  leases: LeasesRepo
  /** This process's name among the lease holders. */
  holder: string
  leaseTtlMs: number
  /** The rules of the variables (QUARRY_RETENTION, QUARRY_RETENTION_TAGS, QUARRY_RETENTION_SIZES). */
  variables: readonly RetentionRule[]
  log: Logger
  clock: () => number
}

export interface SweepReport {
  deletionsResumed: number
  rowsRemoved: number
  segmentsRemoved: number
  segmentsRewritten: number
  entriesRemoved: number
}

export class DataRemoval {
  /** One removal at a time in this process (a deletion and a sweep would only race for the same segments). */
  private turn: Promise<unknown> = Promise.resolve()

  constructor(private readonly deps: DataRemovalDeps) {}

  /** The variables' rules, the stored ones and what applies. */
  async rules(): Promise<{ variables: readonly RetentionRule[]; stored: RetentionRule[]; effective: EffectiveRules }> {
    const stored = await this.deps.repo.rules()
    return { variables: this.deps.variables, stored, effective: effectiveRules(this.deps.variables, stored) }
  }

  /** Replaces the stored rules (the admin API's); they apply from the next sweep. */
  async setRules(rules: readonly RetentionRule[]): Promise<void> {
    await this.deps.repo.setRules(rules, this.deps.clock())
  }

  deletions(): Promise<DeletionRecord[]> {
    return this.deps.repo.deletions(DELETIONS_LISTED)
  }

  /**
   * Deletes the entries of `tag` with ts in [start, end) now, under the cluster's deletion lease (DeletionBusy when
   * another replica holds it). Answers the deletion's record with how many entries went. The intent is stored first:
   * if this fails part way, the sweep finishes it.
   */
  async deleteEntries(tag: string, start: number, end: number, uid: number | null): Promise<DeletionRecord> {
    return this.serially(async () => {
      if (!(await this.takeDeletionLease())) throw new DeletionBusy('another deletion is running in the cluster')
      try {
        const id = await this.deps.repo.addDeletion({ tag, start, end, uid }, this.deps.clock())
        const record: DeletionRecord = { id, tag, start, end, uid, created: this.deps.clock(), finished: null, deleted: 0 }
        const deleted = await this.runDeletion(record)
        return { ...record, finished: this.deps.clock(), deleted }
      } finally {
        await this.deps.leases.release(DELETION_LEASE, this.deps.holder).catch(() => undefined)
      }
    })
  }

  /**
   * One retention sweep: finishes the deletions a crash cut off, removes the rows and segment entries past their tag's
   * age, then the oldest segments' entries of each tag over its size, then the blobs of unregistered segments.
   */
  sweep(): Promise<SweepReport> {
    return this.serially(async () => {
      const report: SweepReport = { deletionsResumed: 0, rowsRemoved: 0, segmentsRemoved: 0, segmentsRewritten: 0, entriesRemoved: 0 }
      await this.removePendingBlobs()
      const pending = (await this.deps.repo.deletions(0)).filter((d) => d.finished === null)
      if (pending.length > 0 && (await this.takeDeletionLease())) {
        try {
          for (const d of pending) {
            await this.runDeletion(d)
            report.deletionsResumed++
          }
        } finally {
          await this.deps.leases.release(DELETION_LEASE, this.deps.holder).catch(() => undefined)
        }
      }
      const { effective } = await this.rules()
      const now = this.deps.clock()
      const tags = await this.deps.tags.allTags()
      const names = new Map(tags.map((t) => [t.id, t.name]))
      const cutoffs = new Map<number, number>()
      for (const t of tags) {
        const age = ageOf(effective, t.name)
        if (age !== undefined) cutoffs.set(t.id, now - age)
      }
      // Rows past their age.
      for (const [tagId, cutoff] of cutoffs) report.rowsRemoved += await this.deleteAllRows(tagId, Number.MIN_SAFE_INTEGER, cutoff)
      // Segments past their age: whole when every tag in them is, else rewritten without the expired entries.
      // Only segments starting before the latest cutoff can hold an expired entry (none at all without an age rule).
      let latestCutoff = Number.MIN_SAFE_INTEGER
      for (const c of cutoffs.values()) if (c > latestCutoff) latestCutoff = c
      const { list, stats } = await this.segmentsWithStats(names, (m) => m.min.ts < latestCutoff)
      for (const meta of list) {
        const st = stats.get(meta.seq)!
        const expired = st.filter((s) => cutoffs.has(s.tagId) && s.minTs < cutoffs.get(s.tagId)!)
        if (expired.length === 0) continue
        // Every entry past its age (by the statistics alone): unregistered without reading it.
        const whole = st.every((s) => cutoffs.has(s.tagId) && s.maxTs < cutoffs.get(s.tagId)!)
        const outcome = whole
          ? (await this.deps.repo.replaceSegment(meta, null, st.map((s) => ({ tagId: s.tagId, bytes: s.bytes })), now))
            ? { removed: meta.count, whole: true }
            : 'gone'
          : await this.rewrite(meta, names, (seg, i) => {
              const cutoff = cutoffs.get(seg.tag[i]!)
              return cutoff !== undefined && seg.ts[i]! < cutoff
            })
        this.count(report, outcome)
      }
      // Tags over their size: the oldest segments' entries of the tag go first, then the oldest rows.
      const sized = [...effective.tags].filter(([, r]) => r.maxBytes !== undefined)
      if (sized.length > 0) {
        const ids = new Map((await this.deps.tags.tagsNamed(sized.map(([tag]) => tag))).map((t) => [t.name, t.id]))
        for (const [tag, rule] of sized) {
          const tagId = ids.get(tag)
          if (tagId === undefined) continue
          const current = await this.segmentsWithStats(names)
          let total = await this.deps.repo.rowBytes(tagId)
          for (const meta of current.list) total += current.stats.get(meta.seq)!.find((s) => s.tagId === tagId)?.bytes ?? 0
          for (const meta of current.list) {
            if (total <= rule.maxBytes!) break
            const st = current.stats.get(meta.seq)!
            const mine = st.find((s) => s.tagId === tagId)
            if (!mine) continue
            const outcome = await this.rewrite(meta, names, (seg, i) => seg.tag[i] === tagId)
            this.count(report, outcome)
            if (outcome !== 'gone') total -= mine.bytes
          }
          while (total > rule.maxBytes!) {
            const gone = await this.deps.repo.deleteRows(tagId, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, 100)
            if (gone.count === 0) break
            report.rowsRemoved += gone.count
            total -= gone.bytes
          }
        }
      }
      await this.removePendingBlobs()
      const changed = report.deletionsResumed + report.rowsRemoved + report.segmentsRemoved + report.segmentsRewritten
      if (changed > 0) this.deps.log.info('retention sweep', { ...report })
      return report
    })
  }

  /** Runs `work` once every removal this process began before it has ended. */
  private serially<T>(work: () => Promise<T>): Promise<T> {
    const run = this.turn.then(work, work)
    this.turn = run.catch(() => undefined)
    return run
  }

  private async takeDeletionLease(): Promise<boolean> {
    return (await this.deps.leases.acquire(DELETION_LEASE, this.deps.holder, this.deps.leaseTtlMs)) !== undefined
  }

  /** Renews the deletion lease; a holder that lost it stops (the deletion stays pending, another finishes it). */
  private async keepDeletionLease(): Promise<void> {
    if (!(await this.takeDeletionLease())) throw new DeletionBusy('the deletion lease was lost; the deletion is finished by the next sweep')
  }

  /** Carries a deletion out to its end (again, after a crash: every step finds done what was done); answers how many entries went. */
  private async runDeletion(d: DeletionRecord): Promise<number> {
    const [tag] = await this.deps.tags.tagsNamed([d.tag])
    let deleted = 0
    if (tag !== undefined && d.start < d.end) {
      deleted += await this.deleteAllRows(tag.id, d.start, d.end)
      const names = new Map((await this.deps.tags.allTags()).map((t: Tag) => [t.id, t.name]))
      for (let again = true; again; ) {
        again = false
        await this.keepDeletionLease()
        const { list, stats } = await this.segmentsWithStats(names, (m) => m.max.ts >= d.start && m.min.ts < d.end)
        for (const meta of list) {
          const st = stats.get(meta.seq)!
          const mine = st.find((s) => s.tagId === tag.id)
          if (!mine || mine.maxTs < d.start || mine.minTs >= d.end) continue
          await this.keepDeletionLease()
          const outcome = await this.rewrite(meta, names, (seg, i) => seg.tag[i] === tag.id && seg.ts[i]! >= d.start && seg.ts[i]! < d.end)
          if (outcome === 'gone') again = true
          else deleted += outcome.removed
        }
      }
    }
    await this.deps.repo.finishDeletion(d.id, deleted, this.deps.clock())
    await this.removePendingBlobs()
    this.deps.log.info('entries deleted', { deletion: d.id, tag: d.tag, start: new Date(d.start).toISOString(), end: new Date(d.end).toISOString(), deleted })
    return deleted
  }

  /**
   * Every row of the tag in [start, end), batch by batch, until a batch finds none (on PostgreSQL a batch can come
   * short while rows remain: rows a compaction was moving meanwhile are passed over, already in its segment).
   */
  private async deleteAllRows(tagId: number, start: number, end: number): Promise<number> {
    let n = 0
    for (;;) {
      const { count } = await this.deps.repo.deleteRows(tagId, start, end, DELETE_ROWS_BATCH)
      if (count === 0) return n
      n += count
    }
  }

  /**
   * The registered segments (by first key) that `wanted` picks (all by default), with the tag statistics of each, made
   * now (reading the segment once) for those without.
   */
  private async segmentsWithStats(
    names: Map<number, string>,
    wanted: (meta: SegmentMeta) => boolean = () => true,
  ): Promise<{ list: readonly SegmentMeta[]; stats: Map<number, SegmentTagStats[]> }> {
    const list = (await this.deps.entries.segmentList()).filter(wanted)
    if (list.length === 0) return { list, stats: new Map() }
    const stats = await this.deps.repo.segmentTags()
    const nameBytes = nameBytesOf(names)
    const known: SegmentMeta[] = []
    for (const meta of list) {
      if (!stats.has(meta.seq)) {
        let seg: Segment
        try {
          seg = await this.deps.entries.open(meta)
        } catch (e) {
          // Removed since the list was read (by another replica): not this sweep's to handle. A registered segment
          // whose blob is missing (after a restore: the blob sweep reports it) is left as it is, and the rest goes on;
          // any other failure (the blob store not answering) stops the sweep or deletion, to be done again later.
          if (!(await this.stillRegistered(meta))) continue
          if (!(e instanceof BlobNotFoundError)) throw e
          this.deps.log.warn('the blob of a segment is missing; retention and deletion leave it as it is', { key: meta.key })
          continue
        }
        const st = segmentStats(seg, nameBytes)
        await this.deps.repo.putSegmentTags(meta.seq, st)
        stats.set(meta.seq, st)
      }
      known.push(meta)
    }
    return { list: known, stats }
  }

  private async stillRegistered(meta: SegmentMeta): Promise<boolean> {
    return (await this.deps.entries.segmentList()).some((m) => m.seq === meta.seq)
  }

  /**
   * Removes the entries `drop` picks from segment `meta`: unregisters it when none stays, else replaces it with a new
   * segment of the others (see the header). 'gone' when the segment was unregistered meanwhile (by another rewrite).
   */
  private async rewrite(meta: SegmentMeta, names: Map<number, string>, drop: (seg: Segment, i: number) => boolean): Promise<{ removed: number; whole: boolean } | 'gone'> {
    const nameBytes = nameBytesOf(names)
    const { repo, blobs, clock } = this.deps
    let seg: Segment
    try {
      seg = await this.deps.entries.open(meta)
    } catch (e) {
      if (!(await this.stillRegistered(meta))) return 'gone'
      if (!(e instanceof BlobNotFoundError)) throw e
      this.deps.log.warn('the blob of a segment is missing; retention and deletion leave it as it is', { key: meta.key })
      return { removed: 0, whole: false }
    }
    const kept: number[] = []
    const dropped: number[] = []
    for (let i = 0; i < seg.count; i++) (drop(seg, i) ? dropped : kept).push(i)
    if (dropped.length === 0) return { removed: 0, whole: false }
    const removed: RemovedUsage[] = segmentStats(seg, nameBytes, dropped).map((s) => ({ tagId: s.tagId, bytes: s.bytes }))
    if (kept.length === 0) {
      if (!(await repo.replaceSegment(meta, null, removed, clock()))) return 'gone'
      await this.removePendingBlobs()
      return { removed: dropped.length, whole: true }
    }
    const entries: SegmentEntry[] = kept.map((i) => ({ ts: seg.ts[i]!, tagId: seg.tag[i]!, id: seg.id[i]!, src: seg.srcs[seg.srcIdx[i]!]!, data: seg.entryData(i) }))
    const encoded = await this.deps.entries.seal(entries)
    const key = `segments/${crypto.randomUUID()}`
    // Durable before it is registered, as a compaction's segment (server/search/segments.ts).
    await blobs.putBytes(key, encoded)
    let replaced = false
    try {
      const first = entries[0]!
      const last = entries.at(-1)!
      replaced = await repo.replaceSegment(
        meta,
        {
          meta: {
            key,
            count: entries.length,
            bytes: encoded.byteLength,
            min: { ts: first.ts, tagId: first.tagId, id: first.id },
            max: { ts: last.ts, tagId: last.tagId, id: last.id },
          },
          tags: segmentStats(seg, nameBytes, kept),
        },
        removed,
        clock(),
      )
    } finally {
      // Not registered: the new blob goes now (if this process dies first, the blob sweep removes it).
      if (!replaced) await blobs.delete(key).catch(() => undefined)
    }
    if (!replaced) return 'gone'
    // The old blob goes at once (a large deletion does not hold two copies of what it rewrites until its end).
    await this.removePendingBlobs()
    return { removed: dropped.length, whole: false }
  }

  private count(report: SweepReport, outcome: { removed: number; whole: boolean } | 'gone'): void {
    if (outcome === 'gone' || outcome.removed === 0) return
    report.entriesRemoved += outcome.removed
    if (outcome.whole) report.segmentsRemoved++
    else report.segmentsRewritten++
  }

  /** Deletes the blobs of unregistered segments (the journal's pending rows) and marks them done. */
  private async removePendingBlobs(): Promise<void> {
    const pending = await this.deps.repo.pendingBlobRemovals()
    if (pending.length === 0) return
    const done: number[] = []
    for (const p of pending) {
      try {
        await this.deps.blobs.delete(p.key)
        done.push(p.id)
      } catch (e) {
        this.deps.log.warn('could not delete the blob of a removed segment; the next sweep tries again', { key: p.key, error: String(e) })
      }
    }
    if (done.length > 0) await this.deps.repo.blobsRemoved(done)
  }
}

/** The bytes of a tag's name (entryBytes counts them per entry). */
function nameBytesOf(names: Map<number, string>): (tagId: number) => number {
  const cache = new Map<number, number>()
  return (tagId) => {
    let n = cache.get(tagId)
    if (n === undefined) cache.set(tagId, (n = Buffer.byteLength(names.get(tagId) ?? '')))
    return n
  }
}
