// Search library entries and their sharing lists over SQLite. Plain objects in and out; no HTTP here.
// `metadata` is JSON text kept exactly as the client sent it, null when there is none.
import type { Database, Statement } from 'bun:sqlite'
import { LIBRARY_BYTES_SQL, checkQuotaAfterWriteSqlite } from '../../server/store/quota'

export interface LibraryRow {
  thingUuid: string
  guid: string
  uid: number
  name: string
  description: string
  query: string
  global: boolean
  labels: string[]
  /** The Metadata member's JSON text as sent; null when none was. */
  metadata: string | null
  updated: number
  /** The sharing list, ascending. */
  gids: number[]
}

/** An entry as one user asks for it: `shared` when the user is a member of a group in its sharing list. */
export interface LibraryFor extends LibraryRow {
  shared: boolean
}

export interface LibraryChanges {
  uid?: number
  name?: string
  description?: string
  query?: string
  global?: boolean
  labels?: string[]
  /** null clears it. */
  metadata?: string | null
  gids?: number[]
  updated: number
}

export interface LibraryRepo {
  /** The entry with this ThingUUID, as `uid` sees it. */
  byThing(thingUuid: string, uid: number): Promise<LibraryFor | undefined>
  /** Every entry carrying this GUID, as `uid` sees them. */
  byGuid(guid: string, uid: number): Promise<LibraryFor[]>
  /** The user's own entries. */
  listOwned(uid: number): Promise<LibraryRow[]>
  /** Every entry (admin view). */
  listAll(): Promise<LibraryRow[]>
  /** Inserts the entry; `quota`: the owner's storage quota, checked in the same transaction (QuotaExceeded). */
  create(row: LibraryRow, quota?: number): Promise<void>
  /** Changes fields and the sharing list in one transaction; undefined when the entry is gone. */
  /** `quota`: the (new) owner's storage quota, checked in the same transaction for the bytes the change adds. */
  update(thingUuid: string, changes: LibraryChanges, quota?: number): Promise<LibraryRow | undefined>
  delete(thingUuid: string): Promise<boolean>
}

interface DbRow {
  thing_uuid: string
  guid: string
  uid: number
  name: string
  description: string
  query: string
  global: number
  labels: string
  metadata: string | null
  updated: number
  gids: string
}

function fromDb(r: DbRow): LibraryRow {
  return {
    thingUuid: r.thing_uuid,
    guid: r.guid,
    uid: r.uid,
    name: r.name,
    description: r.description,
    query: r.query,
    global: r.global === 1,
    labels: JSON.parse(r.labels) as string[],
    metadata: r.metadata,
    updated: r.updated,
    gids: JSON.parse(r.gids) as number[],
  }
}

// As plugins/resources/repo.ts: the sharing list comes along as a JSON array; `= +?` on user_groups.
const COLS = `l.thing_uuid AS thing_uuid, l.guid AS guid, l.uid AS uid, l.name AS name, l.description AS description,
  l.query AS query, l.global AS global, l.labels AS labels, l.metadata AS metadata, l.updated AS updated,
  (SELECT coalesce(json_group_array(gid), '[]') FROM (SELECT g.gid AS gid FROM library_gids g WHERE g.thing_uuid = l.thing_uuid ORDER BY g.gid)) AS gids`
const SHARED = `EXISTS (SELECT 1 FROM library_gids g JOIN user_groups m ON m.gid = g.gid WHERE g.thing_uuid = l.thing_uuid AND m.uid = +?1) AS shared`
const ORDER = 'ORDER BY l.updated, l.thing_uuid'

/** The entries user ?1 owns, by the owner index. Exported for the query-plan check of bench/listing.sh. */
export const OWNED_ENTRIES_SQL = `SELECT ${COLS} FROM library l WHERE l.uid = ?1 ${ORDER}`

export class SqliteLibraryRepo implements LibraryRepo {
  private readonly q: {
    byThing: Statement<DbRow & { shared: number }, [number, string]>
    byGuid: Statement<DbRow & { shared: number }, [number, string]>
    get: Statement<DbRow, [string]>
    owned: Statement<DbRow, [number]>
    all: Statement<DbRow, []>
    insert: Statement<unknown, [string, string, number, string, string, string, number, string, string | null, number]>
    addGid: Statement<unknown, [string, number]>
    clearGids: Statement<unknown, [string]>
    del: Statement<unknown, [string]>
  }

  constructor(private readonly db: Database) {
    this.q = {
      byThing: db.query(`SELECT ${COLS}, ${SHARED} FROM library l WHERE l.thing_uuid = ?2`),
      byGuid: db.query(`SELECT ${COLS}, ${SHARED} FROM library l WHERE l.guid = ?2 ${ORDER}`),
      get: db.query(`SELECT ${COLS} FROM library l WHERE l.thing_uuid = ?`),
      owned: db.query(OWNED_ENTRIES_SQL),
      all: db.query(`SELECT ${COLS} FROM library l ${ORDER}`),
      insert: db.query(
        `INSERT INTO library (thing_uuid, guid, uid, name, description, query, global, labels, metadata, updated)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      addGid: db.query('INSERT OR IGNORE INTO library_gids (thing_uuid, gid) VALUES (?, ?)'),
      clearGids: db.query('DELETE FROM library_gids WHERE thing_uuid = ?'),
      del: db.query('DELETE FROM library WHERE thing_uuid = ?'),
    }
  }

  async byThing(thingUuid: string, uid: number) {
    const r = this.q.byThing.get(uid, thingUuid)
    return r ? { ...fromDb(r), shared: r.shared === 1 } : undefined
  }
  async byGuid(guid: string, uid: number) {
    return this.q.byGuid.all(uid, guid).map((r) => ({ ...fromDb(r), shared: r.shared === 1 }))
  }
  async listOwned(uid: number) {
    return this.q.owned.all(uid).map(fromDb)
  }
  async listAll() {
    return this.q.all.all().map(fromDb)
  }
  async create(row: LibraryRow, quota?: number) {
    this.db.transaction(() => {
      this.q.insert.run(
        row.thingUuid, row.guid, row.uid, row.name, row.description, row.query, row.global ? 1 : 0, JSON.stringify(row.labels),
        row.metadata, row.updated,
      )
      for (const gid of row.gids) this.q.addGid.run(row.thingUuid, gid)
      checkQuotaAfterWriteSqlite(this.db, row.uid, quota, this.measure(row.thingUuid).bytes)
    })()
  }
  /** Sets the row's stored_bytes from its text members; answers them and its owner. */
  private measure(thingUuid: string): { uid: number; bytes: number } {
    return this.db
      .query<{ uid: number; bytes: number }, [string]>(
        `UPDATE library SET stored_bytes = ${LIBRARY_BYTES_SQL} WHERE thing_uuid = ? RETURNING uid, stored_bytes AS bytes`,
      )
      .get(thingUuid)!
  }
  async update(thingUuid: string, changes: LibraryChanges, quota?: number) {
    return this.db.transaction(() => {
      const before = this.db
        .query<{ uid: number; bytes: number }, [string]>('SELECT uid, stored_bytes AS bytes FROM library WHERE thing_uuid = ?')
        .get(thingUuid)
      if (!before) return undefined
      const sets = ['updated = ?']
      const values: (string | number | null)[] = [changes.updated]
      if (changes.uid !== undefined) (sets.push('uid = ?'), values.push(changes.uid))
      if (changes.name !== undefined) (sets.push('name = ?'), values.push(changes.name))
      if (changes.description !== undefined) (sets.push('description = ?'), values.push(changes.description))
      if (changes.query !== undefined) (sets.push('query = ?'), values.push(changes.query))
      if (changes.global !== undefined) (sets.push('global = ?'), values.push(changes.global ? 1 : 0))
      if (changes.labels !== undefined) (sets.push('labels = ?'), values.push(JSON.stringify(changes.labels)))
      if (changes.metadata !== undefined) (sets.push('metadata = ?'), values.push(changes.metadata))
      this.db.run(`UPDATE library SET ${sets.join(', ')} WHERE thing_uuid = ?`, [...values, thingUuid])
      if (changes.gids !== undefined) {
        this.q.clearGids.run(thingUuid)
        for (const gid of changes.gids) this.q.addGid.run(thingUuid, gid)
      }
      const after = this.measure(thingUuid)
      checkQuotaAfterWriteSqlite(this.db, after.uid, quota, after.bytes - (after.uid === before.uid ? before.bytes : 0))
      return fromDb(this.q.get.get(thingUuid)!)
    })()
  }
  async delete(thingUuid: string) {
    return this.q.del.run(thingUuid).changes > 0
  }
}
