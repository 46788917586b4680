// Dashboards and their sharing lists over PostgreSQL: the same contract as SqliteDashboardsRepo
// (plugins/dashboards/repo.ts). Ids are BIGINT below 2^53 (decisions §1): exact as JavaScript numbers.
import { type Pg, type PgPool, type PgRow, isUniqueViolation, num, nums, q, run, tx } from '../../server/pg'
import { type DashboardChanges, type DashboardRow, type DashboardsRepo, randomDashboardId } from './repo'

const COLS = `d.id AS id, d.guid AS guid, d.uid AS uid, d.name AS name, d.description AS description,
  d.global AS global, d.labels AS labels, d.data AS data, d.created AS created, d.updated AS updated,
  coalesce((SELECT array_agg(g.gid ORDER BY g.gid) FROM dashboard_gids g WHERE g.id = d.id), '{}') AS gids`
const SHARED = 'EXISTS (SELECT 1 FROM dashboard_gids g JOIN user_groups m ON m.gid = g.gid WHERE g.id = d.id AND m.uid = $1) AS shared'
const ORDER = 'ORDER BY d.created, d.id'

function fromDb(r: PgRow): DashboardRow {
  return {
    id: num(r.id),
    guid: r.guid as string,
    uid: r.uid as number,
    name: r.name as string,
    description: r.description as string,
    global: r.global as boolean,
    labels: JSON.parse(r.labels as string) as string[],
    data: r.data as string,
    created: num(r.created),
    updated: num(r.updated),
    gids: nums(r.gids),
  }
}

async function setGids(db: Pg, id: number, gids: number[]) {
  await run(db, 'DELETE FROM dashboard_gids WHERE id = $1', [id])
  if (gids.length > 0)
    await run(db, 'INSERT INTO dashboard_gids (id, gid) SELECT $1, g FROM unnest($2::int[]) AS g ON CONFLICT DO NOTHING', [id, gids])
}

export class PgDashboardsRepo implements DashboardsRepo {
  constructor(private readonly db: PgPool) {}

  async byId(id: number, uid: number) {
    const [r] = await q(this.db, `SELECT ${COLS}, ${SHARED} FROM dashboards d WHERE d.id = $2`, [uid, id])
    return r ? { ...fromDb(r), shared: r.shared as boolean } : undefined
  }
  async byGuid(guid: string, uid: number) {
    const rows = await q(this.db, `SELECT ${COLS}, ${SHARED} FROM dashboards d WHERE d.guid = $2 ${ORDER}`, [uid, guid])
    return rows.map((r) => ({ ...fromDb(r), shared: r.shared as boolean }))
  }
  async listVisible(uid: number) {
    return (
      await q(
        this.db,
        `SELECT ${COLS} FROM dashboards d WHERE d.id IN (
           SELECT id FROM dashboards WHERE uid = $1
           UNION SELECT id FROM dashboards WHERE global
           UNION SELECT g.id FROM user_groups m JOIN dashboard_gids g ON g.gid = m.gid WHERE m.uid = $1)
         ${ORDER}`,
        [uid],
      )
    ).map(fromDb)
  }
  async listAll() {
    return (await q(this.db, `SELECT ${COLS} FROM dashboards d ${ORDER}`)).map(fromDb)
  }
  async listOwned(uid: number) {
    return (await q(this.db, `SELECT ${COLS} FROM dashboards d WHERE d.uid = $1 ${ORDER}`, [uid])).map(fromDb)
  }
  async listShared(gid: number) {
    return (await q(this.db, `SELECT ${COLS} FROM dashboards d WHERE d.id IN (SELECT id FROM dashboard_gids WHERE gid = $1) ${ORDER}`, [gid])).map(
      fromDb,
    )
  }
  async create(row: Omit<DashboardRow, 'id'>) {
    // A random id that another replica may draw at the same moment: the insert is the check, and a taken id
    // (a unique violation, about never) draws again.
    for (;;) {
      const id = randomDashboardId()
      try {
        await tx(this.db, async (t) => {
          await run(
            t,
            `INSERT INTO dashboards (id, guid, uid, name, description, global, labels, data, created, updated)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
            [id, row.guid, row.uid, row.name, row.description, row.global, JSON.stringify(row.labels), row.data, row.created, row.updated],
          )
          await setGids(t, id, row.gids)
        })
        return id
      } catch (e) {
        if (!isUniqueViolation(e)) throw e
      }
    }
  }
  async update(id: number, changes: DashboardChanges) {
    return tx(this.db, async (t) => {
      const values: (string | number | boolean)[] = [changes.updated]
      const sets = ['updated = $1']
      const set = (column: string, v: string | number | boolean) => (values.push(v), sets.push(`${column} = $${values.length}`))
      if (changes.uid !== undefined) set('uid', changes.uid)
      if (changes.name !== undefined) set('name', changes.name)
      if (changes.description !== undefined) set('description', changes.description)
      if (changes.global !== undefined) set('global', changes.global)
      if (changes.labels !== undefined) set('labels', JSON.stringify(changes.labels))
      if (changes.data !== undefined) set('data', changes.data)
      if ((await run(t, `UPDATE dashboards SET ${sets.join(', ')} WHERE id = $${values.length + 1}`, [...values, id])) === 0) return undefined
      if (changes.gids !== undefined) await setGids(t, id, changes.gids)
      return fromDb((await q(t, `SELECT ${COLS} FROM dashboards d WHERE d.id = $1`, [id]))[0]!)
    })
  }
  async delete(id: number) {
    return (await run(this.db, 'DELETE FROM dashboards WHERE id = $1', [id])) > 0
  }
}
