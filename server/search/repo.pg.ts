// Saved searches and the search history over PostgreSQL: the same contract as SqliteSearchesRepo
// (server/search/repo.ts).
import { type PgPool, type PgRow, num, q, run, tx } from '../store/pg'
import { checkQuotaPg, lockOwner } from '../store/quota.pg'
import type { HistoryRow, ImportInfo, LaunchInfo, SavedSearchRow, SearchesRepo } from './repo'

const COLUMNS = `id, uid, gid, state, user_query, effective_query, start_range, end_range, started, finished, last_update,
  store_size, index_size, item_count, metadata, import, launch_info, no_history, error, results_key, index_key`

function fromDb(r: PgRow): SavedSearchRow {
  return {
    id: r.id as string,
    uid: r.uid as number,
    gid: r.gid as number,
    state: r.state as 'saving' | 'saved',
    userQuery: r.user_query as string,
    effectiveQuery: r.effective_query as string,
    startRange: num(r.start_range),
    endRange: num(r.end_range),
    started: num(r.started),
    finished: num(r.finished),
    lastUpdate: num(r.last_update),
    storeSize: num(r.store_size),
    indexSize: num(r.index_size),
    itemCount: num(r.item_count),
    metadata: r.metadata === null ? null : JSON.parse(r.metadata as string),
    import: r.import === null ? null : (JSON.parse(r.import as string) as ImportInfo),
    launchInfo: JSON.parse(r.launch_info as string) as LaunchInfo,
    noHistory: r.no_history as boolean,
    error: r.error as string,
    resultsKey: r.results_key as string | null,
    indexKey: r.index_key as string | null,
  }
}

export class PgSearchesRepo implements SearchesRepo {
  constructor(private readonly db: PgPool) {}

  async listSaved() {
    return (await q(this.db, `SELECT ${COLUMNS} FROM saved_searches ORDER BY started, id`)).map(fromDb)
  }
  async putSaved(r: SavedSearchRow, quota?: number) {
    const cols = COLUMNS.split(',').map((c) => c.trim())
    await tx(this.db, async (t) => {
      if (r.state === 'saved' && quota !== undefined) {
        await lockOwner(t, r.uid)
        const [counted] = await q<{ state: string; bytes: unknown }>(
          t,
          'SELECT state, store_size + index_size AS bytes FROM saved_searches WHERE id = $1 FOR UPDATE',
          [r.id],
        )
        const before = counted?.state === 'saved' ? num(counted.bytes) : 0
        await checkQuotaPg(t, r.uid, quota, r.storeSize + r.indexSize - before)
      }
      await run(
        t,
        `INSERT INTO saved_searches (${cols.join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')})
         ON CONFLICT (id) DO UPDATE SET ${cols.filter((c) => c !== 'id').map((c) => `${c} = excluded.${c}`).join(', ')}`,
        [
          r.id, r.uid, r.gid, r.state, r.userQuery, r.effectiveQuery, r.startRange, r.endRange, r.started, r.finished, r.lastUpdate,
          r.storeSize, r.indexSize, r.itemCount, r.metadata === null || r.metadata === undefined ? null : JSON.stringify(r.metadata),
          r.import === null ? null : JSON.stringify(r.import), JSON.stringify(r.launchInfo), r.noHistory, r.error,
          r.resultsKey, r.indexKey,
        ],
      )
    })
  }
  async deleteSaved(id: string) {
    const [r] = await q(this.db, `DELETE FROM saved_searches WHERE id = $1 RETURNING ${COLUMNS}`, [id])
    return r ? fromDb(r) : undefined
  }
  async getSaved(id: string) {
    const [r] = await q(this.db, `SELECT ${COLUMNS} FROM saved_searches WHERE id = $1`, [id])
    return r ? fromDb(r) : undefined
  }
  async savedExists(id: string) {
    return (await q(this.db, 'SELECT 1 AS one FROM saved_searches WHERE id = $1', [id])).length > 0
  }
  /** Adds a launch and keeps only the user's newest `keep` (one statement: PostgreSQL runs both parts at once). */
  async addHistory(h: HistoryRow, keep: number) {
    await run(
      this.db,
      `WITH added AS (
         INSERT INTO search_history (uid, gid, user_query, effective_query, launched) VALUES ($1, $2, $3, $4, $5) RETURNING id
       )
       DELETE FROM search_history WHERE uid = $1 AND id IN
         (SELECT id FROM search_history WHERE uid = $1 ORDER BY launched DESC, id DESC OFFSET $6::bigint - 1)
         AND id NOT IN (SELECT id FROM added)`,
      [h.uid, h.gid, h.userQuery, h.effectiveQuery, h.launched, keep],
    )
  }
  async history(uid: number, limit: number) {
    const rows = await q(
      this.db,
      'SELECT uid, gid, user_query, effective_query, launched FROM search_history WHERE uid = $1 ORDER BY launched DESC, id DESC LIMIT $2',
      [uid, limit],
    )
    return rows.map((r) => ({
      uid: r.uid as number, gid: r.gid as number, userQuery: r.user_query as string, effectiveQuery: r.effective_query as string,
      launched: num(r.launched),
    }))
  }
  async blobReferences() {
    return q<{ key: string; item: string }>(
      this.db,
      `SELECT results_key AS key, 'search ' || id AS item FROM saved_searches WHERE results_key IS NOT NULL
       UNION ALL SELECT index_key AS key, 'search ' || id AS item FROM saved_searches WHERE index_key IS NOT NULL`,
    )
  }
}
