// What retention and deletion (server/search/retention.ts) need of the store, over SQLite (the PostgreSQL twin:
// ./retention-repo.pg.ts; tables of migration 023). Every method that changes several rows does so in one transaction.
//
// Guarantees:
// - A segment is unregistered only by replaceSegment, which in one transaction deletes its row (false, and nothing
//   changed, when it is gone already: another sweep or deletion replaced it), registers its replacement (if any)
//   under a new seq, journals the old key in entry_segment_removals and takes the removed entries' bytes out of their
//   owners' usage. So two rewriters of one segment never both succeed, and a segment's blob is deleted only after the
//   commit that unregistered it (the journal row says it must go, also after a crash).
// - Rows are deleted in bounded batches (deleteRows), each with its usage taken out in the same transaction.
// - Usage: the bytes of removed entries (entryBytes) leave their owners' ingest usage. Entries keep no owner, so the
//   bytes of a tag are taken from the owners who ingested that tag in proportion to what each ingested of it
//   (ingest_usage_tags): exact when one owner ingests a tag; never below zero. Entries ingested before migration 023
//   count for nobody.
import type { Database } from 'bun:sqlite'
import type { SegmentMeta } from './segment'

/** A retention rule: for one tag, or for the whole store (tag ''). Null: not set by this rule; 0: no limit. */
export interface RetentionRule {
  tag: string
  maxAgeMs: number | null
  maxBytes: number | null
}

/** What a registered segment holds of one tag. `bytes`: what its entries count for in the quota (entryBytes). */
export interface SegmentTagStats {
  tagId: number
  count: number
  bytes: number
  minTs: number
  maxTs: number
}

/** The usage bytes (entryBytes) of the entries of one tag that a change removes. */
export interface RemovedUsage {
  tagId: number
  bytes: number
}

/** A deletion's intent and, once finished, its outcome. */
export interface DeletionRecord {
  id: number
  tag: string
  start: number
  end: number
  uid: number | null
  created: number
  /** Null while it is not finished. */
  finished: number | null
  deleted: number
}

export interface RemovalRepo {
  rules(): Promise<RetentionRule[]>
  /** Replaces every stored rule (one transaction). */
  setRules(rules: readonly RetentionRule[], now: number): Promise<void>
  /** The tag statistics of the registered segments, by seq (a segment missing here has none yet). */
  segmentTags(): Promise<Map<number, SegmentTagStats[]>>
  /** Records a segment's tag statistics, unless it is no longer registered or has them already. */
  putSegmentTags(seq: number, stats: readonly SegmentTagStats[]): Promise<void>
  /**
   * In one transaction: unregisters segment `old` (false, and nothing changed, when it is not registered), registers
   * `next` in its place (its statistics with it) under a new seq, journals the old key for its blob's removal and takes
   * `removed` out of the owners' usage.
   */
  replaceSegment(
    old: { seq: number; key: string },
    next: { meta: Omit<SegmentMeta, 'seq'>; tags: readonly SegmentTagStats[] } | null,
    removed: readonly RemovedUsage[],
    now: number,
  ): Promise<boolean>
  /** Unregistered segments whose blob may still exist. */
  pendingBlobRemovals(): Promise<{ id: number; key: string }[]>
  /** Their blobs are gone: the journal rows are done (all but the latest are dropped). */
  blobsRemoved(ids: readonly number[]): Promise<void>
  /**
   * Deletes at most `limit` rows of `entries` of tag `tagId` with ts in [start, end), oldest first, and takes their
   * bytes out of the owners' usage; answers how many went and their bytes (entryBytes, as the quota counts them).
   */
  deleteRows(tagId: number, start: number, end: number, limit: number): Promise<{ count: number; bytes: number }>
  /** The bytes (entryBytes) of the rows of tag `tagId`. */
  rowBytes(tagId: number): Promise<number>
  addDeletion(d: { tag: string; start: number; end: number; uid: number | null }, now: number): Promise<number>
  /** The unfinished deletions, oldest first, then the `recent` latest finished ones, newest first. */
  deletions(recent?: number): Promise<DeletionRecord[]>
  finishDeletion(id: number, deleted: number, now: number): Promise<void>
}

interface RuleRow {
  tag: string
  max_age_ms: number | null
  max_bytes: number | null
}
interface DeletionRow {
  id: number
  tag: string
  start_ts: number
  end_ts: number
  uid: number | null
  created: number
  finished: number | null
  deleted: number
}

export function deletionOf(r: DeletionRow, num: (v: unknown) => number = Number): DeletionRecord {
  return {
    id: num(r.id),
    tag: r.tag,
    start: num(r.start_ts),
    end: num(r.end_ts),
    uid: r.uid === null ? null : num(r.uid),
    created: num(r.created),
    finished: r.finished === null ? null : num(r.finished),
    deleted: num(r.deleted),
  }
}

export function ruleOf(r: RuleRow, num: (v: unknown) => number = Number): RetentionRule {
  return { tag: r.tag, maxAgeMs: r.max_age_ms === null ? null : num(r.max_age_ms), maxBytes: r.max_bytes === null ? null : num(r.max_bytes) }
}

/**
 * How `bytes` removed from a tag are taken from its owners: in proportion to what each ingested of it, the remainder
 * to the largest, none past what an owner has. `owners`: [uid, bytes of the tag].
 */
export function usageShares(owners: readonly [number, number][], bytes: number): [number, number][] {
  const total = owners.reduce((s, [, b]) => s + b, 0)
  if (total <= 0 || bytes <= 0) return []
  const take = Math.min(bytes, total)
  const shares: [number, number][] = owners.map(([uid, b]) => [uid, Math.floor((take * b) / total)])
  let left = take - shares.reduce((s, [, b]) => s + b, 0)
  const order = owners.map((o, i) => i).sort((a, b) => owners[b]![1] - owners[a]![1])
  for (const i of order) {
    if (left <= 0) break
    const room = owners[i]![1] - shares[i]![1]
    const more = Math.min(room, left)
    shares[i]![1] += more
    left -= more
  }
  return shares.filter(([, b]) => b > 0)
}

/** A row's usage bytes (entryBytes without the tag's name, added per row). */
const SQLITE_ROW_USAGE = 'length(data) + length(CAST(src AS BLOB)) + 16'

export class SqliteRemovalRepo implements RemovalRepo {
  constructor(private readonly db: Database) {}

  async rules() {
    return this.db.query<RuleRow, []>('SELECT tag, max_age_ms, max_bytes FROM retention_rules ORDER BY tag').all().map((r) => ruleOf(r))
  }
  async setRules(rules: readonly RetentionRule[], now: number) {
    this.db.transaction(() => {
      this.db.run('DELETE FROM retention_rules')
      const put = this.db.query('INSERT INTO retention_rules (tag, max_age_ms, max_bytes, updated) VALUES (?, ?, ?, ?)')
      for (const r of rules) put.run(r.tag, r.maxAgeMs, r.maxBytes, now)
    })()
  }
  async segmentTags() {
    const out = new Map<number, SegmentTagStats[]>()
    for (const r of this.db
      .query<{ seq: number; tag_id: number; count: number; bytes: number; min_ts: number; max_ts: number }, []>(
        'SELECT seq, tag_id, count, bytes, min_ts, max_ts FROM entry_segment_tags ORDER BY seq, tag_id',
      )
      .all()) {
      let list = out.get(r.seq)
      if (!list) out.set(r.seq, (list = []))
      list.push({ tagId: r.tag_id, count: r.count, bytes: r.bytes, minTs: r.min_ts, maxTs: r.max_ts })
    }
    return out
  }
  async putSegmentTags(seq: number, stats: readonly SegmentTagStats[]) {
    this.db.transaction(() => {
      if (!this.db.query('SELECT 1 FROM entry_segments WHERE seq = ?').get(seq)) return
      const put = this.db.query('INSERT OR IGNORE INTO entry_segment_tags (seq, tag_id, count, bytes, min_ts, max_ts) VALUES (?, ?, ?, ?, ?, ?)')
      for (const s of stats) put.run(seq, s.tagId, s.count, s.bytes, s.minTs, s.maxTs)
    })()
  }
  async replaceSegment(
    old: { seq: number; key: string },
    next: { meta: Omit<SegmentMeta, 'seq'>; tags: readonly SegmentTagStats[] } | null,
    removed: readonly RemovedUsage[],
    now: number,
  ) {
    return this.db.transaction(() => {
      if (!this.db.query('SELECT 1 FROM entry_segments WHERE seq = ? AND key = ?').get(old.seq, old.key)) return false
      // The replacement is inserted while the old row still holds its seq, so its seq is above every seq given yet.
      if (next) {
        const s = next.meta
        const { seq } = this.db
          .query<{ seq: number }, [string, number, number, number, number, number, number, number, number, number]>(
            `INSERT INTO entry_segments (key, count, bytes, min_ts, min_tag, min_id, max_ts, max_tag, max_id, created)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
          )
          .get(s.key, s.count, s.bytes, s.min.ts, s.min.tagId, s.min.id, s.max.ts, s.max.tagId, s.max.id, now)!
        const put = this.db.query('INSERT INTO entry_segment_tags (seq, tag_id, count, bytes, min_ts, max_ts) VALUES (?, ?, ?, ?, ?, ?)')
        for (const t of next.tags) put.run(seq, t.tagId, t.count, t.bytes, t.minTs, t.maxTs)
      }
      this.db.query('DELETE FROM entry_segments WHERE seq = ?').run(old.seq)
      this.db.query('DELETE FROM entry_segment_tags WHERE seq = ?').run(old.seq)
      this.db.query('INSERT INTO entry_segment_removals (key, removed) VALUES (?, ?)').run(old.key, now)
      for (const r of removed) this.takeUsage(r.tagId, r.bytes)
      return true
    })()
  }
  async pendingBlobRemovals() {
    return this.db.query<{ id: number; key: string }, []>('SELECT id, key FROM entry_segment_removals WHERE blob_gone = 0 ORDER BY id').all()
  }
  async blobsRemoved(ids: readonly number[]) {
    this.db.transaction(() => {
      const done = this.db.query('UPDATE entry_segment_removals SET blob_gone = 1 WHERE id = ?')
      for (const id of ids) done.run(id)
      // The latest row stays: its id is the change counter searches compare (server/search/segments.ts).
      this.db.run('DELETE FROM entry_segment_removals WHERE blob_gone = 1 AND id < (SELECT max(id) FROM entry_segment_removals)')
    })()
  }
  async deleteRows(tagId: number, start: number, end: number, limit: number) {
    return this.db.transaction(() => {
      const rows = this.db
        .query<{ id: number; usage: number }, [number, number, number, number]>(
          `SELECT id, ${SQLITE_ROW_USAGE} AS usage FROM entries INDEXED BY entries_time_tag
           WHERE ts >= ?2 AND ts < ?3 AND tag_id = ?1 ORDER BY ts, tag_id, id LIMIT ?4`,
        )
        .all(tagId, start, end, limit)
      if (rows.length === 0) return { count: 0, bytes: 0 }
      const remove = this.db.query('DELETE FROM entries WHERE id = ?')
      let usage = this.nameBytes(tagId) * rows.length
      for (const r of rows) {
        remove.run(r.id)
        usage += r.usage
      }
      this.takeUsage(tagId, usage)
      return { count: rows.length, bytes: usage }
    })()
  }
  async rowBytes(tagId: number) {
    const r = this.db.query<{ n: number; usage: number }, [number]>(`SELECT count(*) AS n, coalesce(sum(${SQLITE_ROW_USAGE}), 0) AS usage FROM entries WHERE tag_id = ?`).get(tagId)!
    return r.usage + r.n * this.nameBytes(tagId)
  }

  private nameBytes(tagId: number): number {
    return this.db.query<{ n: number }, [number]>('SELECT length(CAST(name AS BLOB)) AS n FROM ingest_tags WHERE id = ?').get(tagId)?.n ?? 0
  }
  async addDeletion(d: { tag: string; start: number; end: number; uid: number | null }, now: number) {
    return this.db
      .query<{ id: number }, [string, number, number, number | null, number]>(
        'INSERT INTO entry_deletions (tag, start_ts, end_ts, uid, created) VALUES (?, ?, ?, ?, ?) RETURNING id',
      )
      .get(d.tag, d.start, d.end, d.uid, now)!.id
  }
  async deletions(recent = 0) {
    const pending = this.db.query<DeletionRow, []>('SELECT * FROM entry_deletions WHERE finished IS NULL ORDER BY id').all()
    const done = this.db.query<DeletionRow, [number]>('SELECT * FROM entry_deletions WHERE finished IS NOT NULL ORDER BY id DESC LIMIT ?').all(recent)
    return [...pending, ...done].map((r) => deletionOf(r))
  }
  async finishDeletion(id: number, deleted: number, now: number) {
    this.db.query('UPDATE entry_deletions SET finished = ?, deleted = ? WHERE id = ? AND finished IS NULL').run(now, deleted, id)
  }

  /** Inside a transaction: `bytes` of tag `tagId` leave its owners' usage (usageShares). */
  private takeUsage(tagId: number, bytes: number) {
    if (bytes <= 0) return
    const owners = this.db
      .query<{ uid: number; bytes: number }, [number]>('SELECT uid, bytes FROM ingest_usage_tags WHERE tag_id = ? AND bytes > 0')
      .all(tagId)
      .map((r): [number, number] => [r.uid, r.bytes])
    for (const [uid, take] of usageShares(owners, bytes)) {
      this.db.query('UPDATE ingest_usage_tags SET bytes = bytes - ?3 WHERE uid = ?1 AND tag_id = ?2').run(uid, tagId, take)
      this.db.query('UPDATE ingest_usage SET bytes = max(0, bytes - ?2) WHERE uid = ?1').run(uid, take)
    }
  }
}
