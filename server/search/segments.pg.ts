// The segment list of the embedded engine over PostgreSQL: the same contract as SqliteSegmentsRepo
// (server/search/segments.ts).
import { type PgPool, num, q, run, tx } from '../store/pg'
import type { SegmentMeta } from './segment'
import { SEGMENT_COLUMNS, type SegmentsRepo, segmentOf } from './segments'

export class PgSegmentsRepo implements SegmentsRepo {
  constructor(private readonly db: PgPool) {}

  async latest() {
    return num((await q<{ seq: unknown }>(this.db, 'SELECT coalesce(max(seq), 0) AS seq FROM entry_segments'))[0]!.seq)
  }
  async state() {
    const [r] = await q<{ seq: unknown; removed: unknown }>(
      this.db,
      'SELECT coalesce((SELECT max(seq) FROM entry_segments), 0) AS seq, coalesce((SELECT max(id) FROM entry_segment_removals), 0) AS removed',
    )
    return { seq: num(r!.seq), removed: num(r!.removed) }
  }
  async listAfter(seq: number) {
    return (await q<Parameters<typeof segmentOf>[0]>(this.db, `SELECT ${SEGMENT_COLUMNS} FROM entry_segments WHERE seq > $1 ORDER BY seq`, [seq])).map((r) =>
      segmentOf(r, num),
    )
  }
  async register(s: Omit<SegmentMeta, 'seq'>, rowIds: readonly number[], created: number) {
    const gone = new Error('rows gone')
    try {
      await tx(this.db, async (t) => {
        // Registrations take turns (the lock conflicts with itself, not with readers), and the seq is drawn after the
        // turn is taken: seqs commit in increasing order, which SegmentedEntries relies on (latest, listAfter).
        await run(t, 'LOCK TABLE entry_segments IN SHARE ROW EXCLUSIVE MODE')
        // Another compaction deleting the same rows holds their locks until it ends; then these find them gone.
        const deleted = await run(t, 'DELETE FROM entries WHERE id = ANY($1::bigint[])', [[...rowIds]])
        if (deleted !== rowIds.length) throw gone
        await run(
          t,
          `INSERT INTO entry_segments (key, count, bytes, min_ts, min_tag, min_id, max_ts, max_tag, max_id, created)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
          [s.key, s.count, s.bytes, s.min.ts, s.min.tagId, s.min.id, s.max.ts, s.max.tagId, s.max.id, created],
        )
      })
      return true
    } catch (e) {
      if (e === gone) return false
      throw e
    }
  }
  async blobReferences() {
    return q<{ key: string; item: string }>(this.db, "SELECT key, 'entry segment ' || seq AS item FROM entry_segments")
  }
}
