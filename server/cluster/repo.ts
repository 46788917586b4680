// The replica registry and the search records of a cluster over SQLite (server/cluster/index.ts says what they
// mean). Plain objects in and out. On SQLite one process owns the store, so the registry holds just it.
import type { Database } from 'bun:sqlite'

export interface ReplicaRow {
  /** Random per start. */
  id: string
  /** Its key in the status objects: host:port. */
  name: string
  /** The origin other replicas reach it at (http(s)://host:port). */
  address: string
  /** Its sysDesc object, as JSON text. */
  description: string
  started: number
  heartbeat: number
}

/** The record of a search held in memory by its owner replica; `data` is JSON (server/cluster/records.ts). */
export interface SearchRecordRow {
  id: string
  owner: string
  uid: number
  gid: number
  started: number
  data: string
  updated: number
}

export interface ClusterRepo {
  /** Inserts or replaces the replica's row. */
  register(r: ReplicaRow): Promise<void>
  /** Refreshes the heartbeat; false when the row is gone (it was swept as dead: the caller registers again). */
  heartbeat(id: string, now: number): Promise<boolean>
  /** Replicas whose heartbeat is at or after `since`, oldest start first. */
  live(since: number): Promise<ReplicaRow[]>
  /** Removes a replica and its search records (a clean stop). */
  leave(id: string): Promise<void>
  /** Removes replicas whose heartbeat is before `before`, and every search record whose owner is not live at `since`. */
  sweep(before: number, since: number): Promise<void>
  /**
   * Writes the owner's records: inserts, or replaces a record of the same owner. A record another replica owns
   * is left as it is (ids are random; two replicas never publish one search).
   */
  putRecords(rows: SearchRecordRow[]): Promise<void>
  deleteRecords(owner: string, ids: string[]): Promise<void>
  /**
   * Makes `row.owner` the owner of the search: succeeds when nobody owns it, or its owner is not live at `since`,
   * or is `from` (an owner found unreachable). False when another live replica owns it.
   */
  claim(row: SearchRecordRow, since: number, from?: string): Promise<boolean>
  /** Records whose owner is live at `since`. */
  liveRecords(since: number): Promise<SearchRecordRow[]>
  /** The live owner of a search: its id and address; undefined when no live replica holds it. */
  ownerOf(id: string, since: number): Promise<{ owner: string; address: string } | undefined>
  /**
   * Marks the saving searches (saved_searches rows in state 'saving') whose record no replica live at `since` holds:
   * their results were in the working files of a replica that died. Each gets `error` (unless its error already
   * starts with it), a finish time (its last update when it had none) and no results; an import younger than
   * `importsBefore` is left alone (its importer writes the row before it publishes the search). One conditional
   * statement: a row that became 'saved', or whose search a live replica published meanwhile, is not touched.
   * Answers the ids marked.
   */
  failOrphanedSaves(since: number, error: string, importsBefore: number): Promise<string[]>
}

/** The statement of failOrphanedSaves for both engines (placeholders: error, its length, since, importsBefore). */
export const failOrphansSql = (p: (n: number) => string) =>
  `UPDATE saved_searches SET error = ${p(1)}, finished = CASE WHEN finished = 0 THEN last_update ELSE finished END,
     store_size = 0, index_size = 0, item_count = 0
   WHERE state = 'saving' AND substr(error, 1, ${p(2)}) <> ${p(1)}
     AND id NOT IN (SELECT id FROM search_records WHERE owner IN (SELECT id FROM replicas WHERE heartbeat >= ${p(3)}))
     AND (import IS NULL OR last_update < ${p(4)})
   RETURNING id`

const REPLICA_COLUMNS = 'id, name, address, description, started, heartbeat'
const RECORD_COLUMNS = 'id, owner, uid, gid, started, data, updated'
const LIVE_OWNER = 'owner IN (SELECT id FROM replicas WHERE heartbeat >= ?)'

export class SqliteClusterRepo implements ClusterRepo {
  constructor(private readonly db: Database) {}

  async register(r: ReplicaRow) {
    // One process per SQLite store (the data directory lock): rows of earlier runs are this process's past.
    this.db.transaction(() => {
      this.db.run('DELETE FROM search_records WHERE owner <> ?', [r.id])
      this.db.run('DELETE FROM replicas WHERE id <> ?', [r.id])
      this.db.run(`INSERT OR REPLACE INTO replicas (${REPLICA_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`, [
        r.id, r.name, r.address, r.description, r.started, r.heartbeat,
      ])
    })()
  }
  async heartbeat(id: string, now: number) {
    return this.db.run('UPDATE replicas SET heartbeat = ? WHERE id = ?', [now, id]).changes > 0
  }
  async live(since: number) {
    return this.db.query<ReplicaRow, [number]>(`SELECT ${REPLICA_COLUMNS} FROM replicas WHERE heartbeat >= ? ORDER BY started, id`).all(since)
  }
  async leave(id: string) {
    this.db.transaction(() => {
      this.db.run('DELETE FROM search_records WHERE owner = ?', [id])
      this.db.run('DELETE FROM replicas WHERE id = ?', [id])
    })()
  }
  async sweep(before: number, since: number) {
    this.db.transaction(() => {
      this.db.run('DELETE FROM replicas WHERE heartbeat < ?', [before])
      this.db.run(`DELETE FROM search_records WHERE NOT ${LIVE_OWNER}`, [since])
    })()
  }
  async putRecords(rows: SearchRecordRow[]) {
    const put = this.db.query(
      `INSERT INTO search_records (${RECORD_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
       ON CONFLICT (id) DO UPDATE SET uid = excluded.uid, gid = excluded.gid, started = excluded.started, data = excluded.data,
         updated = excluded.updated WHERE search_records.owner = excluded.owner`,
    )
    this.db.transaction(() => {
      for (const r of rows) put.run(r.id, r.owner, r.uid, r.gid, r.started, r.data, r.updated)
    })()
  }
  async deleteRecords(owner: string, ids: string[]) {
    const del = this.db.query('DELETE FROM search_records WHERE owner = ? AND id = ?')
    this.db.transaction(() => {
      for (const id of ids) del.run(owner, id)
    })()
  }
  async claim(r: SearchRecordRow, since: number, from?: string) {
    const won = this.db
      .query(
        `INSERT INTO search_records (${RECORD_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, uid = excluded.uid, gid = excluded.gid, started = excluded.started,
           data = excluded.data, updated = excluded.updated
         WHERE search_records.owner = excluded.owner OR search_records.owner = ?8
           OR search_records.owner NOT IN (SELECT id FROM replicas WHERE heartbeat >= ?9)
         RETURNING id`,
      )
      .all(r.id, r.owner, r.uid, r.gid, r.started, r.data, r.updated, from ?? r.owner, since)
    return won.length > 0
  }
  async liveRecords(since: number) {
    return this.db.query<SearchRecordRow, [number]>(`SELECT ${RECORD_COLUMNS} FROM search_records WHERE ${LIVE_OWNER} ORDER BY started, id`).all(since)
  }
  async ownerOf(id: string, since: number) {
    return (
      this.db
        .query<{ owner: string; address: string }, [string, number]>(
          'SELECT r.owner AS owner, p.address AS address FROM search_records r JOIN replicas p ON p.id = r.owner WHERE r.id = ? AND p.heartbeat >= ?',
        )
        .get(id, since) ?? undefined
    )
  }
  async failOrphanedSaves(since: number, error: string, importsBefore: number) {
    return this.db
      .query<{ id: string }, [string, number, number, number]>(failOrphansSql((n) => `?${n}`))
      .all(error, error.length, since, importsBefore)
      .map((r) => r.id)
  }
}
