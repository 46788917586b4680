// Dashboards and their sharing lists over SQLite. Plain objects in and out; no HTTP here. `data` is JSON text
// kept exactly as the client sent it.
import type { Database, Statement } from 'bun:sqlite'
import { DASHBOARD_BYTES_SQL, checkQuotaAfterWriteSqlite } from '../../server/store/quota'
import type { Maybe } from '../../server/store/maybe'

export interface DashboardRow {
  id: number
  guid: string
  uid: number
  name: string
  description: string
  global: boolean
  labels: string[]
  /** The Data member's JSON text as sent. */
  data: string
  created: number
  updated: number
  /** The sharing list, ascending. */
  gids: number[]
}

/** A dashboard as one user asks for it: `shared` when the user is a member of a group in its sharing list. */
export interface DashboardFor extends DashboardRow {
  shared: boolean
}

export interface DashboardChanges {
  uid?: number
  name?: string
  description?: string
  global?: boolean
  labels?: string[]
  data?: string
  gids?: number[]
  updated: number
}

export interface DashboardsRepo {
  /** The dashboard with this id, as `uid` sees it. */
  byId(id: number, uid: number): Maybe<DashboardFor | undefined>
  /** Every dashboard carrying this GUID, as `uid` sees them. */
  byGuid(guid: string, uid: number): Maybe<DashboardFor[]>
  /** Owned by the user, shared with one of the user's groups, or global. */
  listVisible(uid: number): Maybe<DashboardRow[]>
  /** Every dashboard (admin view). */
  listAll(): Promise<DashboardRow[]>
  /** Owned by the user (not those reached through groups). */
  listOwned(uid: number): Promise<DashboardRow[]>
  /** Shared with the group. */
  listShared(gid: number): Promise<DashboardRow[]>
  /**
   * Stores a new dashboard under a fresh random id; answers the id. `quota`: the owner's storage quota, checked in
   * the same transaction (QuotaExceeded; undefined: not checked).
   */
  create(row: Omit<DashboardRow, 'id'>, quota?: number): Promise<number>
  /**
   * Changes fields and the sharing list in one transaction; undefined when the dashboard is gone. `quota`: the
   * (new) owner's storage quota, checked in the same transaction for the bytes the change adds.
   */
  update(id: number, changes: DashboardChanges, quota?: number): Promise<DashboardRow | undefined>
  delete(id: number): Promise<boolean>
}

interface DbRow {
  id: number
  guid: string
  uid: number
  name: string
  description: string
  global: number
  labels: string
  data: string
  created: number
  updated: number
  gids: string
}

function fromDb(r: DbRow): DashboardRow {
  return {
    id: r.id,
    guid: r.guid,
    uid: r.uid,
    name: r.name,
    description: r.description,
    global: r.global === 1,
    labels: JSON.parse(r.labels) as string[],
    data: r.data,
    created: r.created,
    updated: r.updated,
    gids: JSON.parse(r.gids) as number[],
  }
}

/** A row as its reader sees it (one object, no copy: this runs on every dashboard read). */
function forUser(r: DbRow & { shared: number }): DashboardFor {
  const d = fromDb(r) as DashboardFor
  d.shared = r.shared === 1
  return d
}

/** Dashboard ids: random positive integers below 2^53 (docs/api.md "Conventions"), so JSON clients hold them exactly. */
export function randomDashboardId(): number {
  const [hi, lo] = crypto.getRandomValues(new Uint32Array(2)) as unknown as [number, number]
  return (hi & 0x1fffff) * 2 ** 32 + lo || 1
}

// As plugins/resources/repo.ts: the sharing list comes along as a JSON array; `= +?` on user_groups.
const COLS = `d.id AS id, d.guid AS guid, d.uid AS uid, d.name AS name, d.description AS description,
  d.global AS global, d.labels AS labels, d.data AS data, d.created AS created, d.updated AS updated,
  (SELECT coalesce(json_group_array(gid), '[]') FROM (SELECT g.gid AS gid FROM dashboard_gids g WHERE g.id = d.id ORDER BY g.gid)) AS gids`
const SHARED = `EXISTS (SELECT 1 FROM dashboard_gids g JOIN user_groups m ON m.gid = g.gid WHERE g.id = d.id AND m.uid = +?1) AS shared`
const ORDER = 'ORDER BY d.created, d.id'

/**
 * Dashboards user ?1 sees: a union of three index searches (own, global, shared with a group of the user); an
 * OR of the three conditions would scan every dashboard. Exported for the query-plan check of bench/listing.sh.
 */
export const VISIBLE_DASHBOARDS_SQL = `SELECT ${COLS} FROM dashboards d WHERE d.id IN (
    SELECT id FROM dashboards WHERE uid = ?1
    UNION SELECT id FROM dashboards WHERE global = 1
    UNION SELECT g.id FROM user_groups m JOIN dashboard_gids g ON g.gid = m.gid WHERE m.uid = +?1)
  ${ORDER}`

export class SqliteDashboardsRepo implements DashboardsRepo {
  private readonly q: {
    byId: Statement<DbRow & { shared: number }, [number, number]>
    byGuid: Statement<DbRow & { shared: number }, [number, string]>
    get: Statement<DbRow, [number]>
    visible: Statement<DbRow, [number]>
    all: Statement<DbRow, []>
    owned: Statement<DbRow, [number]>
    shared: Statement<DbRow, [number]>
    exists: Statement<{ one: number }, [number]>
    insert: Statement<unknown, [number, string, number, string, string, number, string, string, number, number]>
    addGid: Statement<unknown, [number, number]>
    clearGids: Statement<unknown, [number]>
    del: Statement<unknown, [number]>
  }

  constructor(private readonly db: Database) {
    this.q = {
      byId: db.query(`SELECT ${COLS}, ${SHARED} FROM dashboards d WHERE d.id = ?2`),
      byGuid: db.query(`SELECT ${COLS}, ${SHARED} FROM dashboards d WHERE d.guid = ?2 ${ORDER}`),
      get: db.query(`SELECT ${COLS} FROM dashboards d WHERE d.id = ?`),
      visible: db.query(VISIBLE_DASHBOARDS_SQL),
      all: db.query(`SELECT ${COLS} FROM dashboards d ${ORDER}`),
      owned: db.query(`SELECT ${COLS} FROM dashboards d WHERE d.uid = ? ${ORDER}`),
      shared: db.query(`SELECT ${COLS} FROM dashboards d WHERE d.id IN (SELECT id FROM dashboard_gids WHERE gid = ?) ${ORDER}`),
      exists: db.query('SELECT 1 AS one FROM dashboards WHERE id = ?'),
      insert: db.query(
        `INSERT INTO dashboards (id, guid, uid, name, description, global, labels, data, created, updated)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      addGid: db.query('INSERT OR IGNORE INTO dashboard_gids (id, gid) VALUES (?, ?)'),
      clearGids: db.query('DELETE FROM dashboard_gids WHERE id = ?'),
      del: db.query('DELETE FROM dashboards WHERE id = ?'),
    }
  }

  byId(id: number, uid: number) {
    const r = this.q.byId.get(uid, id)
    return r ? forUser(r) : undefined
  }
  byGuid(guid: string, uid: number) {
    return this.q.byGuid.all(uid, guid).map(forUser)
  }
  listVisible(uid: number) {
    return this.q.visible.all(uid).map(fromDb)
  }
  async listAll() {
    return this.q.all.all().map(fromDb)
  }
  async listOwned(uid: number) {
    return this.q.owned.all(uid).map(fromDb)
  }
  async listShared(gid: number) {
    return this.q.shared.all(gid).map(fromDb)
  }
  async create(row: Omit<DashboardRow, 'id'>, quota?: number) {
    return this.db.transaction(() => {
      let id = randomDashboardId()
      while (this.q.exists.get(id)) id = randomDashboardId()
      this.q.insert.run(
        id, row.guid, row.uid, row.name, row.description, row.global ? 1 : 0, JSON.stringify(row.labels), row.data, row.created, row.updated,
      )
      for (const gid of row.gids) this.q.addGid.run(id, gid)
      checkQuotaAfterWriteSqlite(this.db, row.uid, quota, this.measure(id).bytes)
      return id
    })()
  }
  /** Sets the row's stored_bytes from its text members; answers them and its owner. */
  private measure(id: number): { uid: number; bytes: number } {
    return this.db
      .query<{ uid: number; bytes: number }, [number]>(`UPDATE dashboards SET stored_bytes = ${DASHBOARD_BYTES_SQL} WHERE id = ? RETURNING uid, stored_bytes AS bytes`)
      .get(id)!
  }

  async update(id: number, changes: DashboardChanges, quota?: number) {
    return this.db.transaction(() => {
      const before = this.db.query<{ uid: number; bytes: number }, [number]>('SELECT uid, stored_bytes AS bytes FROM dashboards WHERE id = ?').get(id)
      if (!before) return undefined
      const sets = ['updated = ?']
      const values: (string | number)[] = [changes.updated]
      if (changes.uid !== undefined) (sets.push('uid = ?'), values.push(changes.uid))
      if (changes.name !== undefined) (sets.push('name = ?'), values.push(changes.name))
      if (changes.description !== undefined) (sets.push('description = ?'), values.push(changes.description))
      if (changes.global !== undefined) (sets.push('global = ?'), values.push(changes.global ? 1 : 0))
      if (changes.labels !== undefined) (sets.push('labels = ?'), values.push(JSON.stringify(changes.labels)))
      if (changes.data !== undefined) (sets.push('data = ?'), values.push(changes.data))
      this.db.run(`UPDATE dashboards SET ${sets.join(', ')} WHERE id = ?`, [...values, id])
      if (changes.gids !== undefined) {
        this.q.clearGids.run(id)
        for (const gid of changes.gids) this.q.addGid.run(id, gid)
      }
      const after = this.measure(id)
      checkQuotaAfterWriteSqlite(this.db, after.uid, quota, after.bytes - (after.uid === before.uid ? before.bytes : 0))
      return fromDb(this.q.get.get(id)!)
    })()
  }
  async delete(id: number) {
    return this.q.del.run(id).changes > 0
  }
}
