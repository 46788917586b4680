// Search library entries and their sharing lists over PostgreSQL: the same contract as SqliteLibraryRepo
// (plugins/library/repo.ts).
import { type Pg, type PgPool, type PgRow, num, nums, q, run, tx } from '../../server/store/pg'
import { LIBRARY_BYTES_SQL } from '../../server/store/quota'
import { checkQuotaAfterWritePg, lockOwner } from '../../server/store/quota.pg'
import type { LibraryChanges, LibraryRepo, LibraryRow } from './repo'

const COLS = `l.thing_uuid AS thing_uuid, l.guid AS guid, l.uid AS uid, l.name AS name, l.description AS description,
  l.query AS query, l.global AS global, l.labels AS labels, l.metadata AS metadata, l.updated AS updated,
  coalesce((SELECT array_agg(g.gid ORDER BY g.gid) FROM library_gids g WHERE g.thing_uuid = l.thing_uuid), '{}') AS gids`
const SHARED = 'EXISTS (SELECT 1 FROM library_gids g JOIN user_groups m ON m.gid = g.gid WHERE g.thing_uuid = l.thing_uuid AND m.uid = $1) AS shared'
const ORDER = 'ORDER BY l.updated, l.thing_uuid'

function fromDb(r: PgRow): LibraryRow {
  return {
    thingUuid: r.thing_uuid as string,
    guid: r.guid as string,
    uid: r.uid as number,
    name: r.name as string,
    description: r.description as string,
    query: r.query as string,
    global: r.global as boolean,
    labels: JSON.parse(r.labels as string) as string[],
    metadata: r.metadata as string | null,
    updated: num(r.updated),
    gids: nums(r.gids),
  }
}

/** Sets the row's stored_bytes from its text members (on every write: the quota sums them); answers them and its owner. */
async function measure(t: Pg, thingUuid: string): Promise<{ uid: number; bytes: number }> {
  const [r] = await q<{ uid: number; bytes: unknown }>(
    t,
    `UPDATE library SET stored_bytes = ${LIBRARY_BYTES_SQL} WHERE thing_uuid = $1 RETURNING uid, stored_bytes AS bytes`,
    [thingUuid],
  )
  return { uid: r!.uid, bytes: num(r!.bytes) }
}

async function setGids(db: Pg, id: string, gids: number[]) {
  await run(db, 'DELETE FROM library_gids WHERE thing_uuid = $1', [id])
  if (gids.length > 0)
    await run(db, 'INSERT INTO library_gids (thing_uuid, gid) SELECT $1, g FROM unnest($2::int[]) AS g ON CONFLICT DO NOTHING', [id, gids])
}

export class PgLibraryRepo implements LibraryRepo {
  constructor(private readonly db: PgPool) {}

  async byThing(thingUuid: string, uid: number) {
    const [r] = await q(this.db, `SELECT ${COLS}, ${SHARED} FROM library l WHERE l.thing_uuid = $2`, [uid, thingUuid])
    return r ? { ...fromDb(r), shared: r.shared as boolean } : undefined
  }
  async byGuid(guid: string, uid: number) {
    const rows = await q(this.db, `SELECT ${COLS}, ${SHARED} FROM library l WHERE l.guid = $2 ${ORDER}`, [uid, guid])
    return rows.map((r) => ({ ...fromDb(r), shared: r.shared as boolean }))
  }
  async listOwned(uid: number) {
    return (await q(this.db, `SELECT ${COLS} FROM library l WHERE l.uid = $1 ${ORDER}`, [uid])).map(fromDb)
  }
  async listAll() {
    return (await q(this.db, `SELECT ${COLS} FROM library l ${ORDER}`)).map(fromDb)
  }
  async create(row: LibraryRow, quota?: number) {
    await tx(this.db, async (t) => {
      if (quota !== undefined) await lockOwner(t, row.uid)
      await run(
        t,
        `INSERT INTO library (thing_uuid, guid, uid, name, description, query, global, labels, metadata, updated)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [row.thingUuid, row.guid, row.uid, row.name, row.description, row.query, row.global, JSON.stringify(row.labels), row.metadata, row.updated],
      )
      await setGids(t, row.thingUuid, row.gids)
      await checkQuotaAfterWritePg(t, row.uid, quota, (await measure(t, row.thingUuid)).bytes)
    })
  }
  async update(thingUuid: string, changes: LibraryChanges, quota?: number) {
    return tx(this.db, async (t) => {
      // The (new) owner's lock before the entry's row, in the order of create and of a user's deletion.
      let locked: number | undefined
      if (quota !== undefined) {
        const [owner] = await q<{ uid: number }>(t, 'SELECT uid FROM library WHERE thing_uuid = $1', [thingUuid])
        if (!owner) return undefined
        await lockOwner(t, (locked = changes.uid ?? owner.uid))
      }
      const [before] = await q<{ uid: number; bytes: unknown }>(
        t,
        'SELECT uid, stored_bytes AS bytes FROM library WHERE thing_uuid = $1 FOR UPDATE',
        [thingUuid],
      )
      if (!before) return undefined
      const values: (string | number | boolean | null)[] = [changes.updated]
      const sets = ['updated = $1']
      const set = (column: string, v: string | number | boolean | null) => (values.push(v), sets.push(`${column} = $${values.length}`))
      if (changes.uid !== undefined) set('uid', changes.uid)
      if (changes.name !== undefined) set('name', changes.name)
      if (changes.description !== undefined) set('description', changes.description)
      if (changes.query !== undefined) set('query', changes.query)
      if (changes.global !== undefined) set('global', changes.global)
      if (changes.labels !== undefined) set('labels', JSON.stringify(changes.labels))
      if (changes.metadata !== undefined) set('metadata', changes.metadata)
      if ((await run(t, `UPDATE library SET ${sets.join(', ')} WHERE thing_uuid = $${values.length + 1}`, [...values, thingUuid])) === 0)
        return undefined
      if (changes.gids !== undefined) await setGids(t, thingUuid, changes.gids)
      const after = await measure(t, thingUuid)
      // Changed owner between the first read and the row lock (another update): lock the one that pays.
      if (quota !== undefined && after.uid !== locked) await lockOwner(t, after.uid)
      await checkQuotaAfterWritePg(t, after.uid, quota, after.bytes - (after.uid === before.uid ? num(before.bytes) : 0))
      return fromDb((await q(t, `SELECT ${COLS} FROM library l WHERE l.thing_uuid = $1`, [thingUuid]))[0]!)
    })
  }
  async delete(thingUuid: string) {
    return (await run(this.db, 'DELETE FROM library WHERE thing_uuid = $1', [thingUuid])) > 0
  }
}
