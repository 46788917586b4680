// What retention and deletion need of the store, over PostgreSQL: the same contract as SqliteRemovalRepo
// (server/search/retention-repo.ts).
import { type PgPool, type Pg, num, q, run, tx } from '../store/pg'
import type { SegmentMeta } from './segment'
import { type RemovalRepo, type RemovedUsage, type RetentionRule, type SegmentTagStats, deletionOf, ruleOf, usageShares } from './retention-repo'

export class PgRemovalRepo implements RemovalRepo {
  constructor(private readonly db: PgPool) {}

  async rules() {
    return (await q<Parameters<typeof ruleOf>[0]>(this.db, 'SELECT tag, max_age_ms, max_bytes FROM retention_rules ORDER BY tag')).map((r) => ruleOf(r, num))
  }
  async setRules(rules: readonly RetentionRule[], now: number) {
    await tx(this.db, async (t) => {
      await run(t, 'DELETE FROM retention_rules')
      for (const r of rules)
        await run(t, 'INSERT INTO retention_rules (tag, max_age_ms, max_bytes, updated) VALUES ($1, $2, $3, $4)', [r.tag, r.maxAgeMs, r.maxBytes, now])
    })
  }
  async segmentTags() {
    const out = new Map<number, SegmentTagStats[]>()
    for (const r of await q(this.db, 'SELECT seq, tag_id, count, bytes, min_ts, max_ts FROM entry_segment_tags ORDER BY seq, tag_id')) {
      const seq = num(r.seq)
      let list = out.get(seq)
      if (!list) out.set(seq, (list = []))
      list.push({ tagId: num(r.tag_id), count: num(r.count), bytes: num(r.bytes), minTs: num(r.min_ts), maxTs: num(r.max_ts) })
    }
    return out
  }
  async putSegmentTags(seq: number, stats: readonly SegmentTagStats[]) {
    await tx(this.db, async (t) => {
      // The segment's row is locked against a replacement that would unregister it meanwhile.
      if ((await q(t, 'SELECT 1 FROM entry_segments WHERE seq = $1 FOR SHARE', [seq])).length === 0) return
      for (const s of stats)
        await run(
          t,
          'INSERT INTO entry_segment_tags (seq, tag_id, count, bytes, min_ts, max_ts) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING',
          [seq, s.tagId, s.count, s.bytes, s.minTs, s.maxTs],
        )
    })
  }
  async replaceSegment(
    old: { seq: number; key: string },
    next: { meta: Omit<SegmentMeta, 'seq'>; tags: readonly SegmentTagStats[] } | null,
    removed: readonly RemovedUsage[],
    now: number,
  ) {
    return tx(this.db, async (t) => {
      // The registrations' turn (server/search/segments.pg.ts): the new seq and the journal's id are drawn in commit
      // order, which the searches' check of the segment list relies on.
      await run(t, 'LOCK TABLE entry_segments IN SHARE ROW EXCLUSIVE MODE')
      if ((await run(t, 'DELETE FROM entry_segments WHERE seq = $1 AND key = $2', [old.seq, old.key])) !== 1) return false
      await run(t, 'DELETE FROM entry_segment_tags WHERE seq = $1', [old.seq])
      if (next) {
        const s = next.meta
        const [row] = await q(
          t,
          `INSERT INTO entry_segments (key, count, bytes, min_ts, min_tag, min_id, max_ts, max_tag, max_id, created)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING seq`,
          [s.key, s.count, s.bytes, s.min.ts, s.min.tagId, s.min.id, s.max.ts, s.max.tagId, s.max.id, now],
        )
        for (const g of next.tags)
          await run(t, 'INSERT INTO entry_segment_tags (seq, tag_id, count, bytes, min_ts, max_ts) VALUES ($1, $2, $3, $4, $5, $6)', [
            num(row!.seq),
            g.tagId,
            g.count,
            g.bytes,
            g.minTs,
            g.maxTs,
          ])
      }
      await run(t, 'INSERT INTO entry_segment_removals (key, removed) VALUES ($1, $2)', [old.key, now])
      for (const r of removed) await takeUsage(t, r.tagId, r.bytes)
      return true
    })
  }
  async pendingBlobRemovals() {
    return (await q(this.db, 'SELECT id, key FROM entry_segment_removals WHERE NOT blob_gone ORDER BY id')).map((r) => ({ id: num(r.id), key: r.key as string }))
  }
  async blobsRemoved(ids: readonly number[]) {
    await tx(this.db, async (t) => {
      await run(t, 'UPDATE entry_segment_removals SET blob_gone = true WHERE id = ANY($1::bigint[])', [[...ids]])
      // The latest row stays: its id is the change counter searches compare (server/search/segments.ts).
      await run(t, 'DELETE FROM entry_segment_removals WHERE blob_gone AND id < (SELECT max(id) FROM entry_segment_removals)')
    })
  }
  async deleteRows(tagId: number, start: number, end: number, limit: number) {
    // Rows a compaction is moving are waited for (their locks): once it commits they are in its segment, which the
    // caller's later look at the segment list finds.
    return tx(this.db, async (t) => {
      const [r] = await q(
        t,
        `WITH gone AS (
           DELETE FROM entries WHERE id IN (
             SELECT id FROM entries WHERE ts >= $2 AND ts < $3 AND tag_id = $1 ORDER BY ts, tag_id, id LIMIT $4 FOR UPDATE)
           RETURNING octet_length(data) + octet_length(src) + 16 AS usage)
         SELECT count(*) AS n, coalesce(sum(usage), 0) AS usage FROM gone`,
        [tagId, start, end, limit],
      )
      const count = num(r!.n)
      if (count === 0) return { count: 0, bytes: 0 }
      const usage = num(r!.usage) + (await nameBytes(t, tagId)) * count
      await takeUsage(t, tagId, usage)
      return { count, bytes: usage }
    })
  }
  async rowBytes(tagId: number) {
    const [r] = await q(this.db, 'SELECT count(*) AS n, coalesce(sum(octet_length(data) + octet_length(src) + 16), 0) AS usage FROM entries WHERE tag_id = $1', [tagId])
    return num(r!.usage) + num(r!.n) * (await nameBytes(this.db, tagId))
  }
  async addDeletion(d: { tag: string; start: number; end: number; uid: number | null }, now: number) {
    return num(
      (await q(this.db, 'INSERT INTO entry_deletions (tag, start_ts, end_ts, uid, created) VALUES ($1, $2, $3, $4, $5) RETURNING id', [d.tag, d.start, d.end, d.uid, now]))[0]!
        .id,
    )
  }
  async deletions(recent = 0) {
    const pending = await q<Parameters<typeof deletionOf>[0]>(this.db, 'SELECT * FROM entry_deletions WHERE finished IS NULL ORDER BY id')
    const done = await q<Parameters<typeof deletionOf>[0]>(this.db, 'SELECT * FROM entry_deletions WHERE finished IS NOT NULL ORDER BY id DESC LIMIT $1', [recent])
    return [...pending, ...done].map((r) => deletionOf(r, num))
  }
  async finishDeletion(id: number, deleted: number, now: number) {
    await run(this.db, 'UPDATE entry_deletions SET finished = $1, deleted = $2 WHERE id = $3 AND finished IS NULL', [now, deleted, id])
  }
}

/**
 * Inside a transaction: `bytes` of tag `tagId` leave its owners' usage (usageShares), under their rows' locks. The
 * ingest_usage rows are locked first, in uid order, then ingest_usage_tags: the order an ingest takes them in
 * (server/search/entries.pg.ts), so the two never wait for each other in a cycle.
 */
async function takeUsage(t: Pg, tagId: number, bytes: number): Promise<void> {
  if (bytes <= 0) return
  await q(t, 'SELECT uid FROM ingest_usage WHERE uid IN (SELECT uid FROM ingest_usage_tags WHERE tag_id = $1) ORDER BY uid FOR UPDATE', [tagId])
  const owners = (await q(t, 'SELECT uid, bytes FROM ingest_usage_tags WHERE tag_id = $1 AND bytes > 0 ORDER BY uid FOR UPDATE', [tagId])).map(
    (r): [number, number] => [num(r.uid), num(r.bytes)],
  )
  for (const [uid, take] of usageShares(owners, bytes)) {
    await run(t, 'UPDATE ingest_usage_tags SET bytes = bytes - $3 WHERE uid = $1 AND tag_id = $2', [uid, tagId, take])
    await run(t, 'UPDATE ingest_usage SET bytes = greatest(0, bytes - $2) WHERE uid = $1', [uid, take])
  }
}

async function nameBytes(t: Pg, tagId: number): Promise<number> {
  const [r] = await q(t, 'SELECT octet_length(name) AS n FROM ingest_tags WHERE id = $1', [tagId])
  return r ? num(r.n) : 0
}
