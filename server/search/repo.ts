// Saved searches and the search history over SQLite. Plain objects in and out; no HTTP, no blob store here.
import type { Database, Statement } from 'bun:sqlite'
import { checkQuotaSqlite } from '../store/quota'
import { formatTime } from '../runtime/time'

export interface ImportInfo {
  time: number
  batchName: string
  batchInfo: string
}

export interface LaunchInfo {
  /** Whether the search was launched with Background set. */
  background: boolean
  /** How the launch was authenticated: 'session' or 'token'. */
  client: 'session' | 'token'
}

/** What is known about a search besides its state: the details record of docs/api.md "Searches". */
export interface SearchRecord {
  id: string
  uid: number
  /** The group the search is shared with (the owner's default search group at launch); 0: none. */
  gid: number
  userQuery: string
  effectiveQuery: string
  startRange: number
  endRange: number
  started: number
  /** 0 while unfinished. */
  finished: number
  lastUpdate: number
  storeSize: number
  indexSize: number
  itemCount: number
  /** Any JSON value given at launch or on save; null when none. */
  metadata: unknown
  import: ImportInfo | null
  launchInfo: LaunchInfo
  noHistory: boolean
  /** Why the search failed; '' when it did not. */
  error: string
}

/**
 * The query and times of a search as the wire writes them (the search detail of docs/api.md "Searches", and an
 * archive's description).
 */
export function searchQueryAndTimes(r: SearchRecord) {
  return {
    UserQuery: r.userQuery,
    EffectiveQuery: r.effectiveQuery,
    StartRange: formatTime(r.startRange),
    EndRange: formatTime(r.endRange),
    Started: formatTime(r.started),
    Finished: formatTime(r.finished),
  }
}

export interface SavedSearchRow extends SearchRecord {
  state: 'saving' | 'saved'
  /** Blob keys of the results and their index once in the blob store (state 'saved'). */
  resultsKey: string | null
  indexKey: string | null
}

/** The blob keys a saved search's results and index are stored under (the same on every replica and at every start). */
export const searchBlobKeys = (id: string) => ({ results: `searches/${id}/results`, index: `searches/${id}/index` })

export interface HistoryRow {
  uid: number
  gid: number
  userQuery: string
  effectiveQuery: string
  launched: number
}

export interface SearchesRepo {
  listSaved(): Promise<SavedSearchRow[]>
  /**
   * Inserts or replaces the row of a saved search. `quota`: the owner's storage quota, checked in the same
   * transaction when the row becomes 'saved' (a 'saving' row does not count yet): QuotaExceeded when its results
   * and index would take the owner past it.
   */
  putSaved(row: SavedSearchRow, quota?: number): Promise<void>
  deleteSaved(id: string): Promise<SavedSearchRow | undefined>
  /** Whether any saved search has this id (ids of searches in memory are checked by the manager). */
  savedExists(id: string): Promise<boolean>
  /** The row of one saved (or saving) search. */
  getSaved(id: string): Promise<SavedSearchRow | undefined>
  /**
   * Records a launch and drops the user's launches older than their newest `keep` (launched, then insertion order):
   * launches are user input, so each user's history is bounded.
   */
  addHistory(row: HistoryRow, keep: number): Promise<void>
  /** The user's launches, newest first. */
  history(uid: number, limit: number): Promise<HistoryRow[]>
  blobReferences(): Promise<{ key: string; item: string }[]>
}

interface DbRow {
  id: string
  uid: number
  gid: number
  state: 'saving' | 'saved'
  user_query: string
  effective_query: string
  start_range: number
  end_range: number
  started: number
  finished: number
  last_update: number
  store_size: number
  index_size: number
  item_count: number
  metadata: string | null
  import: string | null
  launch_info: string
  no_history: number
  error: string
  results_key: string | null
  index_key: string | null
}

const COLUMNS = `id, uid, gid, state, user_query, effective_query, start_range, end_range, started, finished, last_update,
  store_size, index_size, item_count, metadata, import, launch_info, no_history, error, results_key, index_key`

function fromDb(r: DbRow): SavedSearchRow {
  return {
    id: r.id,
    uid: r.uid,
    gid: r.gid,
    state: r.state,
    userQuery: r.user_query,
    effectiveQuery: r.effective_query,
    startRange: r.start_range,
    endRange: r.end_range,
    started: r.started,
    finished: r.finished,
    lastUpdate: r.last_update,
    storeSize: r.store_size,
    indexSize: r.index_size,
    itemCount: r.item_count,
    metadata: r.metadata === null ? null : JSON.parse(r.metadata),
    import: r.import === null ? null : (JSON.parse(r.import) as ImportInfo),
    launchInfo: JSON.parse(r.launch_info) as LaunchInfo,
    noHistory: r.no_history === 1,
    error: r.error,
    resultsKey: r.results_key,
    indexKey: r.index_key,
  }
}

export class SqliteSearchesRepo implements SearchesRepo {
  private readonly q: {
    list: Statement<DbRow, []>
    get: Statement<DbRow, [string]>
    put: Statement<unknown, (string | number | null)[]>
    del: Statement<unknown, [string]>
    addHistory: Statement<unknown, [number, number, string, string, number]>
    pruneHistory: Statement<unknown, [number, number]>
    history: Statement<{ uid: number; gid: number; user_query: string; effective_query: string; launched: number }, [number, number]>
  }

  constructor(private readonly db: Database) {
    this.q = {
      list: db.query(`SELECT ${COLUMNS} FROM saved_searches ORDER BY started, id`),
      get: db.query(`SELECT ${COLUMNS} FROM saved_searches WHERE id = ?`),
      put: db.query(`INSERT OR REPLACE INTO saved_searches (${COLUMNS}) VALUES (${COLUMNS.split(',').map(() => '?').join(', ')})`),
      del: db.query('DELETE FROM saved_searches WHERE id = ?'),
      addHistory: db.query('INSERT INTO search_history (uid, gid, user_query, effective_query, launched) VALUES (?, ?, ?, ?, ?)'),
      // LIMIT with a large count, not -1: the same SQL runs on PostgreSQL, which has no LIMIT -1.
      pruneHistory: db.query(
        `DELETE FROM search_history WHERE uid = ?1 AND id IN
           (SELECT id FROM search_history WHERE uid = ?1 ORDER BY launched DESC, id DESC LIMIT 1000000000 OFFSET ?2)`,
      ),
      history: db.query(
        'SELECT uid, gid, user_query, effective_query, launched FROM search_history WHERE uid = ? ORDER BY launched DESC, id DESC LIMIT ?',
      ),
    }
  }

  async listSaved() {
    return this.q.list.all().map(fromDb)
  }
  async putSaved(r: SavedSearchRow, quota?: number) {
    this.db.transaction(() => {
      if (r.state === 'saved') {
        const counted = this.q.get.get(r.id)
        const before = counted?.state === 'saved' ? counted.store_size + counted.index_size : 0
        checkQuotaSqlite(this.db, r.uid, quota, r.storeSize + r.indexSize - before)
      }
      this.q.put.run(
        r.id, r.uid, r.gid, r.state, r.userQuery, r.effectiveQuery, r.startRange, r.endRange, r.started, r.finished, r.lastUpdate,
        r.storeSize, r.indexSize, r.itemCount, r.metadata === null || r.metadata === undefined ? null : JSON.stringify(r.metadata),
        r.import === null ? null : JSON.stringify(r.import), JSON.stringify(r.launchInfo), r.noHistory ? 1 : 0, r.error,
        r.resultsKey, r.indexKey,
      )
    })()
  }
  async deleteSaved(id: string) {
    return this.db.transaction(() => {
      const before = this.q.get.get(id)
      if (!before) return undefined
      this.q.del.run(id)
      return fromDb(before)
    })()
  }
  async savedExists(id: string) {
    return this.q.get.get(id) !== null
  }
  async getSaved(id: string) {
    const r = this.q.get.get(id)
    return r ? fromDb(r) : undefined
  }
  async addHistory(h: HistoryRow, keep: number) {
    this.db.transaction(() => {
      this.q.addHistory.run(h.uid, h.gid, h.userQuery, h.effectiveQuery, h.launched)
      this.q.pruneHistory.run(h.uid, keep)
    })()
  }
  async history(uid: number, limit: number) {
    return this.q.history.all(uid, limit).map((r) => ({
      uid: r.uid, gid: r.gid, userQuery: r.user_query, effectiveQuery: r.effective_query, launched: r.launched,
    }))
  }
  async blobReferences() {
    return this.db
      .query<{ key: string; item: string }, []>(
        `SELECT results_key AS key, 'search ' || id AS item FROM saved_searches WHERE results_key IS NOT NULL
         UNION ALL SELECT index_key AS key, 'search ' || id AS item FROM saved_searches WHERE index_key IS NOT NULL`,
      )
      .all()
  }
}
