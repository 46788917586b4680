// Resource metadata and sharing lists over SQLite. Plain objects in and out; no HTTP, no blob store here.
import type { Database, Statement } from 'bun:sqlite'
import { checkQuotaSqlite } from '../../server/store/quota'

export interface ResourceRow {
  guid: string
  uid: number
  name: string
  description: string
  global: boolean
  version: number
  size: number
  hash: string
  /** Where the contents live in the blob store; null while the resource has never had contents. */
  blobKey: string | null
  modified: number
  domain: number
  labels: string[]
  /** The sharing list, ascending. */
  gids: number[]
}

/** A new resource: every field of the row, as it is first stored. */
export type NewResource = ResourceRow

export interface ResourceChanges {
  name?: string
  description?: string
  global?: boolean
  gids?: number[]
  modified: number
}

export interface ResourcesRepo {
  /** Every blob key the metadata points at, with the item that holds it (for the blob sweep). */
  blobReferences(): Promise<{ key: string; item: string }[]>
  get(guid: string): Promise<ResourceRow | undefined>
  /** Every resource (admin view). */
  listAll(): Promise<ResourceRow[]>
  /** Resources the user owns, reaches through a group of the sharing list, or that are global. */
  listVisible(uid: number): Promise<ResourceRow[]>
  /** Whether the user is a member of one of the groups in the resource's sharing list. */
  sharedWith(guid: string, uid: number): Promise<boolean>
  /**
   * Inserts the resource. `quota`: the owner's storage quota, checked in the same transaction (QuotaExceeded when
   * the row's size would take the owner past it; undefined: not checked).
   */
  create(row: NewResource, quota?: number): Promise<void>
  /** Changes metadata and the sharing list in one transaction; undefined when the resource is gone. */
  update(guid: string, changes: ResourceChanges): Promise<ResourceRow | undefined>
  /**
   * Points the resource at new contents and bumps its version, in one transaction. Answers the updated row and
   * the key it pointed at before (for the caller to delete), or undefined when the resource is gone. `quota`: the
   * owner's storage quota, checked in the same transaction for the new size minus the old (QuotaExceeded).
   */
  setContents(
    guid: string,
    contents: { blobKey: string; size: number; hash: string; modified: number },
    quota?: number,
  ): Promise<{ row: ResourceRow; oldKey: string | null } | undefined>
  /** Deletes the resource and its sharing list; answers the deleted row (for its blob key). */
  delete(guid: string): Promise<ResourceRow | undefined>
}

interface DbRow {
  guid: string
  uid: number
  name: string
  description: string
  global: number
  version: number
  size: number
  hash: string
  blob_key: string | null
  modified: number
  domain: number
  labels: string
  gids: string
}

function fromDb(r: DbRow): ResourceRow {
  return {
    guid: r.guid,
    uid: r.uid,
    name: r.name,
    description: r.description,
    global: r.global === 1,
    version: r.version,
    size: r.size,
    hash: r.hash,
    blobKey: r.blob_key,
    modified: r.modified,
    domain: r.domain,
    labels: JSON.parse(r.labels) as string[],
    gids: JSON.parse(r.gids) as number[],
  }
}

export class SqliteResourcesRepo implements ResourcesRepo {
  private readonly q: {
    get: Statement<DbRow, [string]>
    all: Statement<DbRow, []>
    visible: Statement<DbRow, [number]>
    shared: Statement<{ one: number }, [string, number]>
    insert: Statement<unknown, [string, number, string, string, number, number, number, string, string | null, number, number, string]>
    addGid: Statement<unknown, [string, number]>
    clearGids: Statement<unknown, [string]>
    setContents: Statement<unknown, [string, number, string, number, string]>
    del: Statement<unknown, [string]>
  }

  constructor(private readonly db: Database) {
    // The sharing list comes along as a JSON array, so a listing is one query. `= +?` on user_groups as in
    // plugins/groups/repo.ts: a bare parameter there costs about a re-plan per call on this SQLite.
    const cols = `r.guid AS guid, r.uid AS uid, r.name AS name, r.description AS description, r.global AS global,
      r.version AS version, r.size AS size, r.hash AS hash, r.blob_key AS blob_key, r.modified AS modified,
      r.domain AS domain, r.labels AS labels,
      (SELECT coalesce(json_group_array(gid), '[]') FROM (SELECT a.gid AS gid FROM resource_acl a WHERE a.guid = r.guid ORDER BY a.gid)) AS gids`
    this.q = {
      get: db.query(`SELECT ${cols} FROM resources r WHERE r.guid = ?`),
      all: db.query(`SELECT ${cols} FROM resources r ORDER BY r.modified, r.guid`),
      // A union of three index searches (own, global, shared with a group of the user); an OR of the three
      // conditions would scan every resource.
      visible: db.query(
        `SELECT ${cols} FROM resources r WHERE r.guid IN (
           SELECT guid FROM resources WHERE uid = ?1
           UNION SELECT guid FROM resources WHERE global = 1
           UNION SELECT a.guid FROM user_groups m JOIN resource_acl a ON a.gid = m.gid WHERE m.uid = +?1)
         ORDER BY r.modified, r.guid`,
      ),
      shared: db.query(
        'SELECT 1 AS one FROM resource_acl a JOIN user_groups m ON m.gid = a.gid WHERE a.guid = ? AND m.uid = +? LIMIT 1',
      ),
      insert: db.query(
        `INSERT INTO resources (guid, uid, name, description, global, version, size, hash, blob_key, modified, domain, labels)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      addGid: db.query('INSERT OR IGNORE INTO resource_acl (guid, gid) VALUES (?, ?)'),
      clearGids: db.query('DELETE FROM resource_acl WHERE guid = ?'),
      setContents: db.query('UPDATE resources SET blob_key = ?, size = ?, hash = ?, modified = ?, version = version + 1 WHERE guid = ?'),
      del: db.query('DELETE FROM resources WHERE guid = ?'),
    }
  }

  async blobReferences() {
    return this.db
      .query<{ key: string; item: string }, []>("SELECT blob_key AS key, 'resource ' || guid AS item FROM resources WHERE blob_key IS NOT NULL")
      .all()
  }
  async get(guid: string) {
    const r = this.q.get.get(guid)
    return r ? fromDb(r) : undefined
  }
  async listAll() {
    return this.q.all.all().map(fromDb)
  }
  async listVisible(uid: number) {
    return this.q.visible.all(uid).map(fromDb)
  }
  async sharedWith(guid: string, uid: number) {
    return this.q.shared.get(guid, uid) !== null
  }
  async create(row: NewResource, quota?: number) {
    this.db.transaction(() => {
      checkQuotaSqlite(this.db, row.uid, quota, row.size)
      this.q.insert.run(
        row.guid, row.uid, row.name, row.description, row.global ? 1 : 0, row.version, row.size, row.hash,
        row.blobKey, row.modified, row.domain, JSON.stringify(row.labels),
      )
      for (const gid of row.gids) this.q.addGid.run(row.guid, gid)
    })()
  }
  async update(guid: string, changes: ResourceChanges) {
    return this.db.transaction(() => {
      if (!this.q.get.get(guid)) return undefined
      const sets = ['modified = ?']
      const values: (string | number)[] = [changes.modified]
      if (changes.name !== undefined) (sets.push('name = ?'), values.push(changes.name))
      if (changes.description !== undefined) (sets.push('description = ?'), values.push(changes.description))
      if (changes.global !== undefined) (sets.push('global = ?'), values.push(changes.global ? 1 : 0))
      this.db.run(`UPDATE resources SET ${sets.join(', ')} WHERE guid = ?`, [...values, guid])
      if (changes.gids !== undefined) {
        this.q.clearGids.run(guid)
        for (const gid of changes.gids) this.q.addGid.run(guid, gid)
      }
      return fromDb(this.q.get.get(guid)!)
    })()
  }
  async setContents(guid: string, c: { blobKey: string; size: number; hash: string; modified: number }, quota?: number) {
    return this.db.transaction(() => {
      const before = this.q.get.get(guid)
      if (!before) return undefined
      checkQuotaSqlite(this.db, before.uid, quota, c.size - before.size)
      this.q.setContents.run(c.blobKey, c.size, c.hash, c.modified, guid)
      return { row: fromDb(this.q.get.get(guid)!), oldKey: before.blob_key }
    })()
  }
  async delete(guid: string) {
    return this.db.transaction(() => {
      const before = this.q.get.get(guid)
      if (!before) return undefined
      this.q.del.run(guid)
      return fromDb(before)
    })()
  }
}
