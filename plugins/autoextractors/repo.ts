// Auto-extractor definitions and their sharing lists over SQLite. Plain objects in and out; no HTTP here.
import type { Database, Statement } from 'bun:sqlite'

export interface AutoExtractorRow {
  uuid: string
  uid: number
  name: string
  description: string
  labels: string[]
  global: boolean
  /** The tags the definition applies to, at least one, without repeats, in the order given. */
  tags: string[]
  module: string
  params: string
  args: string
  updated: number
  /** The sharing list, ascending. */
  gids: number[]
}

/** A definition as one user sees it: `shared` when the user is a member of a group in its sharing list. */
export interface AutoExtractorFor extends AutoExtractorRow {
  shared: boolean
}

export interface AutoExtractorChanges {
  uid?: number
  name?: string
  description?: string
  labels?: string[]
  global?: boolean
  tags?: string[]
  module?: string
  params?: string
  args?: string
  gids?: number[]
  updated: number
}

export interface AutoExtractorsRepo {
  /** The definition with this UUID, as `uid` sees it. */
  get(uuid: string, uid: number): Promise<AutoExtractorFor | undefined>
  /** Every definition `uid` reaches: its own, those shared with a group of it, and global ones. */
  listReachable(uid: number): Promise<AutoExtractorFor[]>
  /** Every definition (admin view). */
  listAll(): Promise<AutoExtractorRow[]>
  create(row: AutoExtractorRow): Promise<void>
  /** Changes fields and the sharing list in one transaction; undefined when the definition is gone. */
  update(uuid: string, changes: AutoExtractorChanges): Promise<AutoExtractorRow | undefined>
  delete(uuid: string): Promise<boolean>
}

interface DbRow {
  uuid: string
  uid: number
  name: string
  description: string
  labels: string
  global: number
  tags: string
  module: string
  params: string
  args: string
  updated: number
  gids: string
}

function fromDb(r: DbRow): AutoExtractorRow {
  return {
    uuid: r.uuid,
    uid: r.uid,
    name: r.name,
    description: r.description,
    labels: JSON.parse(r.labels) as string[],
    global: r.global === 1,
    tags: JSON.parse(r.tags) as string[],
    module: r.module,
    params: r.params,
    args: r.args,
    updated: r.updated,
    gids: JSON.parse(r.gids) as number[],
  }
}

const COLS = `a.uuid AS uuid, a.uid AS uid, a.name AS name, a.description AS description, a.labels AS labels,
  a.global AS global, a.tags AS tags, a.module AS module, a.params AS params, a.args AS args, a.updated AS updated,
  (SELECT coalesce(json_group_array(gid), '[]') FROM (SELECT g.gid AS gid FROM autoextractor_gids g WHERE g.uuid = a.uuid ORDER BY g.gid)) AS gids`
const SHARED_EXPR = 'EXISTS (SELECT 1 FROM autoextractor_gids g JOIN user_groups m ON m.gid = g.gid WHERE g.uuid = a.uuid AND m.uid = +?1)'
const ORDER = 'ORDER BY a.updated, a.uuid'

export class SqliteAutoExtractorsRepo implements AutoExtractorsRepo {
  private readonly q: {
    get: Statement<DbRow & { shared: number }, [number, string]>
    plain: Statement<DbRow, [string]>
    reachable: Statement<DbRow & { shared: number }, [number]>
    all: Statement<DbRow, []>
    insert: Statement<unknown, [string, number, string, string, string, number, string, string, string, string, number]>
    addGid: Statement<unknown, [string, number]>
    clearGids: Statement<unknown, [string]>
    del: Statement<unknown, [string]>
  }

  constructor(private readonly db: Database) {
    this.q = {
      get: db.query(`SELECT ${COLS}, ${SHARED_EXPR} AS shared FROM autoextractors a WHERE a.uuid = ?2`),
      plain: db.query(`SELECT ${COLS} FROM autoextractors a WHERE a.uuid = ?`),
      reachable: db.query(
        `SELECT * FROM (SELECT ${COLS}, ${SHARED_EXPR} AS shared FROM autoextractors a) AS a
         WHERE a.uid = ?1 OR a.shared OR a.global = 1 ${ORDER}`,
      ),
      all: db.query(`SELECT ${COLS} FROM autoextractors a ${ORDER}`),
      insert: db.query(
        `INSERT INTO autoextractors (uuid, uid, name, description, labels, global, tags, module, params, args, updated)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      addGid: db.query('INSERT OR IGNORE INTO autoextractor_gids (uuid, gid) VALUES (?, ?)'),
      clearGids: db.query('DELETE FROM autoextractor_gids WHERE uuid = ?'),
      del: db.query('DELETE FROM autoextractors WHERE uuid = ?'),
    }
  }

  async get(uuid: string, uid: number) {
    const r = this.q.get.get(uid, uuid)
    return r ? { ...fromDb(r), shared: r.shared === 1 } : undefined
  }
  async listReachable(uid: number) {
    return this.q.reachable.all(uid).map((r) => ({ ...fromDb(r), shared: r.shared === 1 }))
  }
  async listAll() {
    return this.q.all.all().map(fromDb)
  }
  async create(row: AutoExtractorRow) {
    this.db.transaction(() => {
      this.q.insert.run(
        row.uuid, row.uid, row.name, row.description, JSON.stringify(row.labels), row.global ? 1 : 0, JSON.stringify(row.tags),
        row.module, row.params, row.args, row.updated,
      )
      for (const gid of row.gids) this.q.addGid.run(row.uuid, gid)
    })()
  }
  async update(uuid: string, changes: AutoExtractorChanges) {
    return this.db.transaction(() => {
      const sets = ['updated = ?']
      const values: (string | number)[] = [changes.updated]
      const set = (column: string, v: string | number | undefined) => {
        if (v !== undefined) (sets.push(`${column} = ?`), values.push(v))
      }
      set('uid', changes.uid)
      set('name', changes.name)
      set('description', changes.description)
      set('labels', changes.labels && JSON.stringify(changes.labels))
      set('global', changes.global === undefined ? undefined : changes.global ? 1 : 0)
      set('tags', changes.tags && JSON.stringify(changes.tags))
      set('module', changes.module)
      set('params', changes.params)
      set('args', changes.args)
      if (this.db.run(`UPDATE autoextractors SET ${sets.join(', ')} WHERE uuid = ?`, [...values, uuid]).changes === 0) return undefined
      if (changes.gids !== undefined) {
        this.q.clearGids.run(uuid)
        for (const gid of changes.gids) this.q.addGid.run(uuid, gid)
      }
      return fromDb(this.q.plain.get(uuid)!)
    })()
  }
  async delete(uuid: string) {
    return this.q.del.run(uuid).changes > 0
  }
}
