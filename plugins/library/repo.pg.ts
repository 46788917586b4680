// Search library entries and their sharing lists over PostgreSQL: the same contract as SqliteLibraryRepo
// (plugins/library/repo.ts).
import { type Pg, type PgPool, type PgRow, num, nums, q, run, tx } from '../../server/pg'
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
  async create(row: LibraryRow) {
    await tx(this.db, async (t) => {
      await run(
        t,
        `INSERT INTO library (thing_uuid, guid, uid, name, description, query, global, labels, metadata, updated)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [row.thingUuid, row.guid, row.uid, row.name, row.description, row.query, row.global, JSON.stringify(row.labels), row.metadata, row.updated],
      )
      await setGids(t, row.thingUuid, row.gids)
    })
  }
  async update(thingUuid: string, changes: LibraryChanges) {
    return tx(this.db, async (t) => {
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
      return fromDb((await q(t, `SELECT ${COLS} FROM library l WHERE l.thing_uuid = $1`, [thingUuid]))[0]!)
    })
  }
  async delete(thingUuid: string) {
    return (await run(this.db, 'DELETE FROM library WHERE thing_uuid = $1', [thingUuid])) > 0
  }
}
