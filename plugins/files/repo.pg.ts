// User file metadata and sharing lists over PostgreSQL: the same contract as SqliteFilesRepo (plugins/files/repo.ts).
import { type Pg, type PgPool, type PgRow, num, nums, q, run, tx } from '../../server/store/pg'
import { checkQuotaPg, lockOwner } from '../../server/store/quota.pg'
import type { FileChanges, FileRow, FilesRepo } from './repo'

const COLS = `f.thing_uuid AS thing_uuid, f.guid AS guid, f.uid AS uid, f.name AS name, f.description AS description,
  f.global AS global, f.size AS size, f.type AS type, f.labels AS labels, f.updated AS updated, f.blob_key AS blob_key,
  coalesce((SELECT array_agg(g.gid ORDER BY g.gid) FROM user_file_gids g WHERE g.thing_uuid = f.thing_uuid), '{}') AS gids`
const SHARED = 'EXISTS (SELECT 1 FROM user_file_gids g JOIN user_groups m ON m.gid = g.gid WHERE g.thing_uuid = f.thing_uuid AND m.uid = $1) AS shared'
const ORDER = 'ORDER BY f.updated, f.thing_uuid'

function fromDb(r: PgRow): FileRow {
  return {
    thingUuid: r.thing_uuid as string,
    guid: r.guid as string,
    uid: r.uid as number,
    name: r.name as string,
    description: r.description as string,
    global: r.global as boolean,
    size: num(r.size),
    type: r.type as string,
    labels: JSON.parse(r.labels as string) as string[],
    updated: num(r.updated),
    blobKey: r.blob_key as string,
    gids: nums(r.gids),
  }
}

const get = async (db: Pg, id: string) => (await q(db, `SELECT ${COLS} FROM user_files f WHERE f.thing_uuid = $1`, [id]))[0]

async function setGids(db: Pg, id: string, gids: number[]) {
  await run(db, 'DELETE FROM user_file_gids WHERE thing_uuid = $1', [id])
  if (gids.length > 0)
    await run(db, 'INSERT INTO user_file_gids (thing_uuid, gid) SELECT $1, g FROM unnest($2::int[]) AS g ON CONFLICT DO NOTHING', [id, gids])
}

export class PgFilesRepo implements FilesRepo {
  constructor(private readonly db: PgPool) {}

  async blobReferences() {
    return q<{ key: string; item: string }>(
      this.db,
      "SELECT blob_key AS key, 'file ' || thing_uuid AS item FROM user_files WHERE blob_key IS NOT NULL",
    )
  }
  async get(thingUuid: string) {
    const r = await get(this.db, thingUuid)
    return r ? fromDb(r) : undefined
  }
  async byGuid(guid: string, uid: number) {
    const rows = await q(this.db, `SELECT ${COLS}, ${SHARED} FROM user_files f WHERE f.guid = $2 ${ORDER}`, [uid, guid])
    return rows.map((r) => ({ ...fromDb(r), shared: r.shared as boolean }))
  }
  async sharedWith(thingUuid: string, uid: number) {
    const rows = await q(
      this.db,
      'SELECT 1 AS one FROM user_file_gids g JOIN user_groups m ON m.gid = g.gid WHERE g.thing_uuid = $1 AND m.uid = $2 LIMIT 1',
      [thingUuid, uid],
    )
    return rows.length > 0
  }
  async listAll() {
    return (await q(this.db, `SELECT ${COLS} FROM user_files f ${ORDER}`)).map(fromDb)
  }
  async listVisible(uid: number) {
    return (
      await q(
        this.db,
        `SELECT ${COLS} FROM user_files f WHERE f.thing_uuid IN (
           SELECT thing_uuid FROM user_files WHERE uid = $1
           UNION SELECT thing_uuid FROM user_files WHERE global
           UNION SELECT g.thing_uuid FROM user_groups m JOIN user_file_gids g ON g.gid = m.gid WHERE m.uid = $1)
         ${ORDER}`,
        [uid],
      )
    ).map(fromDb)
  }
  async create(row: FileRow, quota?: number) {
    await tx(this.db, async (t) => {
      if (quota !== undefined) {
        await lockOwner(t, row.uid)
        await checkQuotaPg(t, row.uid, quota, row.size)
      }
      await run(
        t,
        `INSERT INTO user_files (thing_uuid, guid, uid, name, description, global, size, type, labels, updated, blob_key)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [row.thingUuid, row.guid, row.uid, row.name, row.description, row.global, row.size, row.type, JSON.stringify(row.labels), row.updated, row.blobKey],
      )
      await setGids(t, row.thingUuid, row.gids)
    })
  }
  async update(thingUuid: string, changes: FileChanges) {
    return tx(this.db, async (t) => {
      const values: (string | number | boolean)[] = [changes.updated]
      const sets = ['updated = $1']
      const set = (column: string, v: string | number | boolean) => (values.push(v), sets.push(`${column} = $${values.length}`))
      if (changes.uid !== undefined) set('uid', changes.uid)
      if (changes.name !== undefined) set('name', changes.name)
      if (changes.description !== undefined) set('description', changes.description)
      if (changes.global !== undefined) set('global', changes.global)
      if (changes.labels !== undefined) set('labels', JSON.stringify(changes.labels))
      if ((await run(t, `UPDATE user_files SET ${sets.join(', ')} WHERE thing_uuid = $${values.length + 1}`, [...values, thingUuid])) === 0)
        return undefined
      if (changes.gids !== undefined) await setGids(t, thingUuid, changes.gids)
      return fromDb((await get(t, thingUuid))!)
    })
  }
  async setContents(thingUuid: string, c: { blobKey: string; size: number; type: string; updated: number }, quota?: number) {
    return tx(this.db, async (t) => {
      // The owner's lock before the file's (as in create and in a user's deletion). The file may change owner in
      // between (a metadata update): then the new owner is locked too before the check.
      let locked: number | undefined
      if (quota !== undefined) {
        const [owner] = await q<{ uid: number }>(t, 'SELECT uid FROM user_files WHERE thing_uuid = $1', [thingUuid])
        if (owner) await lockOwner(t, (locked = owner.uid))
      }
      const [before] = await q<{ blob_key: string; size: unknown; uid: number }>(
        t,
        'SELECT blob_key, size, uid FROM user_files WHERE thing_uuid = $1 FOR UPDATE',
        [thingUuid],
      )
      if (!before) return undefined
      if (quota !== undefined && before.uid !== locked) await lockOwner(t, before.uid)
      await checkQuotaPg(t, before.uid, quota, c.size - num(before.size))
      await run(t, 'UPDATE user_files SET blob_key = $1, size = $2, type = $3, updated = $4 WHERE thing_uuid = $5', [
        c.blobKey, c.size, c.type, c.updated, thingUuid,
      ])
      return { row: fromDb((await get(t, thingUuid))!), oldKey: before.blob_key }
    })
  }
  async delete(thingUuid: string) {
    return tx(this.db, async (t) => {
      const before = await get(t, thingUuid)
      if (!before) return undefined
      if ((await run(t, 'DELETE FROM user_files WHERE thing_uuid = $1', [thingUuid])) === 0) return undefined
      return fromDb(before)
    })
  }
}
