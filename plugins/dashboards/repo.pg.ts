// Dashboards and their sharing lists over PostgreSQL: the same contract as SqliteDashboardsRepo
// (plugins/dashboards/repo.ts). Ids are BIGINT below 2^53 (docs/api.md "Conventions"): exact as JavaScript numbers.
import { type Pg, type PgPool, type PgRow, isUniqueViolation, num, nums, q, run, tx } from '../../server/store/pg'
import { DASHBOARD_BYTES_SQL } from '../../server/store/quota'
import { checkQuotaAfterWritePg, lockOwner } from '../../server/store/quota.pg'
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

/** Sets the row's stored_bytes from its text members (on every write: the quota sums them); answers them and its owner. */
async function measure(t: Pg, id: number): Promise<{ uid: number; bytes: number }> {
  const [r] = await q<{ uid: number; bytes: unknown }>(
    t,
    `UPDATE dashboards SET stored_bytes = ${DASHBOARD_BYTES_SQL} WHERE id = $1 RETURNING uid, stored_bytes AS bytes`,
    [id],
  )
  return { uid: r!.uid, bytes: num(r!.bytes) }
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
  async create(row: Omit<DashboardRow, 'id'>, quota?: number) {
    // A random id that another replica may draw at the same moment: the insert is the check, and a taken id
    // (a unique violation, about never) draws again.
    for (;;) {
      const id = randomDashboardId()
      try {
        await tx(this.db, async (t) => {
          if (quota !== undefined) await lockOwner(t, row.uid)
          await run(
            t,
            `INSERT INTO dashboards (id, guid, uid, name, description, global, labels, data, created, updated)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
            [id, row.guid, row.uid, row.name, row.description, row.global, JSON.stringify(row.labels), row.data, row.created, row.updated],
          )
          await setGids(t, id, row.gids)
          await checkQuotaAfterWritePg(t, row.uid, quota, (await measure(t, id)).bytes)
        })
        return id
      } catch (e) {
        if (!isUniqueViolation(e)) throw e
      }
    }
  }
  async update(id: number, changes: DashboardChanges, quota?: number) {
    return tx(this.db, async (t) => {
      // The (new) owner's lock before the dashboard's row, in the order of create and of a user's deletion.
      let locked: number | undefined
      if (quota !== undefined) {
        const [owner] = await q<{ uid: number }>(t, 'SELECT uid FROM dashboards WHERE id = $1', [id])
        if (!owner) return undefined
        await lockOwner(t, (locked = changes.uid ?? owner.uid))
      }
      const [before] = await q<{ uid: number; bytes: unknown }>(t, 'SELECT uid, stored_bytes AS bytes FROM dashboards WHERE id = $1 FOR UPDATE', [id])
      if (!before) return undefined
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
      const after = await measure(t, id)
      // Changed owner between the first read and the row lock (another update): lock the one that pays.
      if (quota !== undefined && after.uid !== locked) await lockOwner(t, after.uid)
      await checkQuotaAfterWritePg(t, after.uid, quota, after.bytes - (after.uid === before.uid ? num(before.bytes) : 0))
      return fromDb((await q(t, `SELECT ${COLS} FROM dashboards d WHERE d.id = $1`, [id]))[0]!)
    })
  }
  async delete(id: number) {
    return (await run(this.db, 'DELETE FROM dashboards WHERE id = $1', [id])) > 0
  }
}
