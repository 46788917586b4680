// Auto-extractor definitions and their sharing lists over PostgreSQL: the same contract as SqliteAutoExtractorsRepo
// (plugins/autoextractors/repo.ts).
import { type Pg, type PgPool, type PgRow, num, nums, q, run, tx } from '../../server/store/pg'
import type { AutoExtractorChanges, AutoExtractorRow, AutoExtractorsRepo } from './repo'

const COLS = `a.uuid AS uuid, a.uid AS uid, a.name AS name, a.description AS description, a.labels AS labels,
  a.global AS global, a.tags AS tags, a.module AS module, a.params AS params, a.args AS args, a.updated AS updated,
  coalesce((SELECT array_agg(g.gid ORDER BY g.gid) FROM autoextractor_gids g WHERE g.uuid = a.uuid), '{}') AS gids`
const SHARED_EXPR = 'EXISTS (SELECT 1 FROM autoextractor_gids g JOIN user_groups m ON m.gid = g.gid WHERE g.uuid = a.uuid AND m.uid = $1)'
const ORDER = 'ORDER BY a.updated, a.uuid'

function fromDb(r: PgRow): AutoExtractorRow {
  return {
    uuid: r.uuid as string,
    uid: r.uid as number,
    name: r.name as string,
    description: r.description as string,
    labels: JSON.parse(r.labels as string) as string[],
    global: r.global as boolean,
    tags: JSON.parse(r.tags as string) as string[],
    module: r.module as string,
    params: r.params as string,
    args: r.args as string,
    updated: num(r.updated),
    gids: nums(r.gids),
  }
}

async function setGids(db: Pg, uuid: string, gids: number[]) {
  await run(db, 'DELETE FROM autoextractor_gids WHERE uuid = $1', [uuid])
  if (gids.length > 0)
    await run(db, 'INSERT INTO autoextractor_gids (uuid, gid) SELECT $1, g FROM unnest($2::int[]) AS g ON CONFLICT DO NOTHING', [uuid, gids])
}

export class PgAutoExtractorsRepo implements AutoExtractorsRepo {
  constructor(private readonly db: PgPool) {}

  async get(uuid: string, uid: number) {
    const [r] = await q(this.db, `SELECT ${COLS}, ${SHARED_EXPR} AS shared FROM autoextractors a WHERE a.uuid = $2`, [uid, uuid])
    return r ? { ...fromDb(r), shared: r.shared as boolean } : undefined
  }
  async listReachable(uid: number) {
    const rows = await q(
      this.db,
      `SELECT ${COLS}, ${SHARED_EXPR} AS shared FROM autoextractors a WHERE a.uid = $1 OR a.global OR ${SHARED_EXPR} ${ORDER}`,
      [uid],
    )
    return rows.map((r) => ({ ...fromDb(r), shared: r.shared as boolean }))
  }
  async listAll() {
    return (await q(this.db, `SELECT ${COLS} FROM autoextractors a ${ORDER}`)).map(fromDb)
  }
  async create(row: AutoExtractorRow) {
    await tx(this.db, async (t) => {
      await run(
        t,
        `INSERT INTO autoextractors (uuid, uid, name, description, labels, global, tags, module, params, args, updated)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [row.uuid, row.uid, row.name, row.description, JSON.stringify(row.labels), row.global, JSON.stringify(row.tags), row.module, row.params, row.args, row.updated],
      )
      await setGids(t, row.uuid, row.gids)
    })
  }
  async update(uuid: string, changes: AutoExtractorChanges) {
    return tx(this.db, async (t) => {
      const values: (string | number | boolean)[] = [changes.updated]
      const sets = ['updated = $1']
      const set = (column: string, v: string | number | boolean | undefined) => {
        if (v !== undefined) (values.push(v), sets.push(`${column} = $${values.length}`))
      }
      set('uid', changes.uid)
      set('name', changes.name)
      set('description', changes.description)
      set('labels', changes.labels && JSON.stringify(changes.labels))
      set('global', changes.global)
      set('tags', changes.tags && JSON.stringify(changes.tags))
      set('module', changes.module)
      set('params', changes.params)
      set('args', changes.args)
      if ((await run(t, `UPDATE autoextractors SET ${sets.join(', ')} WHERE uuid = $${values.length + 1}`, [...values, uuid])) === 0) return undefined
      if (changes.gids !== undefined) await setGids(t, uuid, changes.gids)
      return fromDb((await q(t, `SELECT ${COLS} FROM autoextractors a WHERE a.uuid = $1`, [uuid]))[0]!)
    })
  }
  async delete(uuid: string) {
    return (await run(this.db, 'DELETE FROM autoextractors WHERE uuid = $1', [uuid])) > 0
  }
}
