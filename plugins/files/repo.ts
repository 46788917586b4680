// User file metadata and sharing lists over SQLite. Plain objects in and out; no HTTP, no blob store here.
import type { Database, Statement } from 'bun:sqlite'
import { checkQuotaSqlite } from '../../server/store/quota'

export interface FileRow {
  thingUuid: string
  guid: string
  uid: number
  name: string
  description: string
  global: boolean
  size: number
  /** The detected content type; "empty" for an empty file. */
  type: string
  labels: string[]
  updated: number
  /** Where the contents live in the blob store (every file has one, also an empty file). */
  blobKey: string
  /** The sharing list, ascending. */
  gids: number[]
}

/** A file with a given GUID, and whether the asking user reaches it through one of its groups. */
export interface FileCandidate extends FileRow {
  shared: boolean
}

export interface FileChanges {
  uid?: number
  name?: string
  description?: string
  global?: boolean
  gids?: number[]
  labels?: string[]
  updated: number
}

export interface FilesRepo {
  /** Every blob key the metadata points at, with the item that holds it (for the blob sweep). */
  blobReferences(): Promise<{ key: string; item: string }[]>
  get(thingUuid: string): Promise<FileRow | undefined>
  /** Every file with this GUID, each marked with whether the user is a member of a group it is shared with. */
  byGuid(guid: string, uid: number): Promise<FileCandidate[]>
  /** Whether the user is a member of one of the groups in the file's sharing list. */
  sharedWith(thingUuid: string, uid: number): Promise<boolean>
  /** Every file (admin view). */
  listAll(): Promise<FileRow[]>
  /** Files the user owns, reaches through a group of the sharing list, or that are global. */
  listVisible(uid: number): Promise<FileRow[]>
  /** Inserts the file; `quota`: the owner's storage quota, checked in the same transaction (QuotaExceeded). */
  create(row: FileRow, quota?: number): Promise<void>
  /** Changes metadata and the sharing list in one transaction; undefined when the file is gone. */
  update(thingUuid: string, changes: FileChanges): Promise<FileRow | undefined>
  /**
   * Points the file at new contents in one transaction. Answers the updated row and the key it pointed at
   * before (for the caller to delete), or undefined when the file is gone. `quota`: the owner's storage quota,
   * checked in the same transaction for the new size minus the old (QuotaExceeded).
   */
  setContents(
    thingUuid: string,
    contents: { blobKey: string; size: number; type: string; updated: number },
    quota?: number,
  ): Promise<{ row: FileRow; oldKey: string } | undefined>
  /** Deletes the file and its sharing list; answers the deleted row (for its blob key). */
  delete(thingUuid: string): Promise<FileRow | undefined>
}

interface DbRow {
  thing_uuid: string
  guid: string
  uid: number
  name: string
  description: string
  global: number
  size: number
  type: string
  labels: string
  updated: number
  blob_key: string
  gids: string
}

function fromDb(r: DbRow): FileRow {
  return {
    thingUuid: r.thing_uuid,
    guid: r.guid,
    uid: r.uid,
    name: r.name,
    description: r.description,
    global: r.global === 1,
    size: r.size,
    type: r.type,
    labels: JSON.parse(r.labels) as string[],
    updated: r.updated,
    blobKey: r.blob_key,
    gids: JSON.parse(r.gids) as number[],
  }
}

export class SqliteFilesRepo implements FilesRepo {
  private readonly q: {
    get: Statement<DbRow, [string]>
    byGuid: Statement<DbRow & { shared: number }, [number, string]>
    shared: Statement<{ one: number }, [string, number]>
    all: Statement<DbRow, []>
    visible: Statement<DbRow, [number]>
    insert: Statement<unknown, [string, string, number, string, string, number, number, string, string, number, string]>
    addGid: Statement<unknown, [string, number]>
    clearGids: Statement<unknown, [string]>
    setContents: Statement<unknown, [string, number, string, number, string]>
    del: Statement<unknown, [string]>
  }

  constructor(private readonly db: Database) {
    // As plugins/resources/repo.ts: the sharing list comes along as a JSON array; `= +?` on user_groups.
    const cols = `f.thing_uuid AS thing_uuid, f.guid AS guid, f.uid AS uid, f.name AS name, f.description AS description,
      f.global AS global, f.size AS size, f.type AS type, f.labels AS labels, f.updated AS updated, f.blob_key AS blob_key,
      (SELECT coalesce(json_group_array(gid), '[]') FROM (SELECT g.gid AS gid FROM user_file_gids g WHERE g.thing_uuid = f.thing_uuid ORDER BY g.gid)) AS gids`
    const sharedExpr = `EXISTS (SELECT 1 FROM user_file_gids g JOIN user_groups m ON m.gid = g.gid WHERE g.thing_uuid = f.thing_uuid AND m.uid = +?1)`
    this.q = {
      get: db.query(`SELECT ${cols} FROM user_files f WHERE f.thing_uuid = ?`),
      byGuid: db.query(`SELECT ${cols}, ${sharedExpr} AS shared FROM user_files f WHERE f.guid = ?2 ORDER BY f.updated, f.thing_uuid`),
      shared: db.query(
        'SELECT 1 AS one FROM user_file_gids g JOIN user_groups m ON m.gid = g.gid WHERE g.thing_uuid = ? AND m.uid = +? LIMIT 1',
      ),
      all: db.query(`SELECT ${cols} FROM user_files f ORDER BY f.updated, f.thing_uuid`),
      visible: db.query(
        `SELECT ${cols} FROM user_files f WHERE f.thing_uuid IN (
           SELECT thing_uuid FROM user_files WHERE uid = ?1
           UNION SELECT thing_uuid FROM user_files WHERE global = 1
           UNION SELECT g.thing_uuid FROM user_groups m JOIN user_file_gids g ON g.gid = m.gid WHERE m.uid = +?1)
         ORDER BY f.updated, f.thing_uuid`,
      ),
      insert: db.query(
        `INSERT INTO user_files (thing_uuid, guid, uid, name, description, global, size, type, labels, updated, blob_key)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      addGid: db.query('INSERT OR IGNORE INTO user_file_gids (thing_uuid, gid) VALUES (?, ?)'),
      clearGids: db.query('DELETE FROM user_file_gids WHERE thing_uuid = ?'),
      setContents: db.query('UPDATE user_files SET blob_key = ?, size = ?, type = ?, updated = ? WHERE thing_uuid = ?'),
      del: db.query('DELETE FROM user_files WHERE thing_uuid = ?'),
    }
  }

  async blobReferences() {
    return this.db
      .query<{ key: string; item: string }, []>("SELECT blob_key AS key, 'file ' || thing_uuid AS item FROM user_files WHERE blob_key IS NOT NULL")
      .all()
  }
  async get(thingUuid: string) {
    const r = this.q.get.get(thingUuid)
    return r ? fromDb(r) : undefined
  }
  async byGuid(guid: string, uid: number) {
    return this.q.byGuid.all(uid, guid).map((r) => ({ ...fromDb(r), shared: r.shared === 1 }))
  }
  async sharedWith(thingUuid: string, uid: number) {
    return this.q.shared.get(thingUuid, uid) !== null
  }
  async listAll() {
    return this.q.all.all().map(fromDb)
  }
  async listVisible(uid: number) {
    return this.q.visible.all(uid).map(fromDb)
  }
  async create(row: FileRow, quota?: number) {
    this.db.transaction(() => {
      checkQuotaSqlite(this.db, row.uid, quota, row.size)
      this.q.insert.run(
        row.thingUuid, row.guid, row.uid, row.name, row.description, row.global ? 1 : 0, row.size, row.type,
        JSON.stringify(row.labels), row.updated, row.blobKey,
      )
      for (const gid of row.gids) this.q.addGid.run(row.thingUuid, gid)
    })()
  }
  async update(thingUuid: string, changes: FileChanges) {
    return this.db.transaction(() => {
      if (!this.q.get.get(thingUuid)) return undefined
      const sets = ['updated = ?']
      const values: (string | number)[] = [changes.updated]
      if (changes.uid !== undefined) (sets.push('uid = ?'), values.push(changes.uid))
      if (changes.name !== undefined) (sets.push('name = ?'), values.push(changes.name))
      if (changes.description !== undefined) (sets.push('description = ?'), values.push(changes.description))
      if (changes.global !== undefined) (sets.push('global = ?'), values.push(changes.global ? 1 : 0))
      if (changes.labels !== undefined) (sets.push('labels = ?'), values.push(JSON.stringify(changes.labels)))
      this.db.run(`UPDATE user_files SET ${sets.join(', ')} WHERE thing_uuid = ?`, [...values, thingUuid])
      if (changes.gids !== undefined) {
        this.q.clearGids.run(thingUuid)
        for (const gid of changes.gids) this.q.addGid.run(thingUuid, gid)
      }
      return fromDb(this.q.get.get(thingUuid)!)
    })()
  }
  async setContents(thingUuid: string, c: { blobKey: string; size: number; type: string; updated: number }, quota?: number) {
    return this.db.transaction(() => {
      const before = this.q.get.get(thingUuid)
      if (!before) return undefined
      checkQuotaSqlite(this.db, before.uid, quota, c.size - before.size)
      this.q.setContents.run(c.blobKey, c.size, c.type, c.updated, thingUuid)
      return { row: fromDb(this.q.get.get(thingUuid)!), oldKey: before.blob_key }
    })()
  }
  async delete(thingUuid: string) {
    return this.db.transaction(() => {
      const before = this.q.get.get(thingUuid)
      if (!before) return undefined
      this.q.del.run(thingUuid)
      return fromDb(before)
    })()
  }
}
