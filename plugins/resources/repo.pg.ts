// Resource metadata and sharing lists over PostgreSQL: the same contract as SqliteResourcesRepo
// (plugins/resources/repo.ts).
import { type Pg, type PgPool, type PgRow, num, nums, q, run, tx } from '../../server/store/pg'
import { checkQuotaPg, lockOwner } from '../../server/store/quota.pg'
import type { NewResource, ResourceChanges, ResourceRow, ResourcesRepo } from './repo'

// The sharing list comes along as an array, so a listing is one query.
const COLS = `r.guid AS guid, r.uid AS uid, r.name AS name, r.description AS description, r.global AS global,
  r.version AS version, r.size AS size, r.hash AS hash, r.blob_key AS blob_key, r.modified AS modified,
  r.domain AS domain, r.labels AS labels,
  coalesce((SELECT array_agg(a.gid ORDER BY a.gid) FROM resource_acl a WHERE a.guid = r.guid), '{}') AS gids`
const ORDER = 'ORDER BY r.modified, r.guid'

function fromDb(r: PgRow): ResourceRow {
  return {
    guid: r.guid as string,
    uid: r.uid as number,
    name: r.name as string,
    description: r.description as string,
    global: r.global as boolean,
    version: num(r.version),
    size: num(r.size),
    hash: r.hash as string,
    blobKey: r.blob_key as string | null,
    modified: num(r.modified),
    domain: num(r.domain),
    labels: JSON.parse(r.labels as string) as string[],
    gids: nums(r.gids),
  }
}

const get = async (db: Pg, guid: string) => (await q(db, `SELECT ${COLS} FROM resources r WHERE r.guid = $1`, [guid]))[0]

async function setGids(db: Pg, guid: string, gids: number[]) {
  await run(db, 'DELETE FROM resource_acl WHERE guid = $1', [guid])
  if (gids.length > 0)
    await run(db, 'INSERT INTO resource_acl (guid, gid) SELECT $1, g FROM unnest($2::int[]) AS g ON CONFLICT DO NOTHING', [guid, gids])
}

export class PgResourcesRepo implements ResourcesRepo {
  constructor(private readonly db: PgPool) {}

  async blobReferences() {
    return q<{ key: string; item: string }>(
      this.db,
      "SELECT blob_key AS key, 'resource ' || guid AS item FROM resources WHERE blob_key IS NOT NULL",
    )
  }
  async get(guid: string) {
    const r = await get(this.db, guid)
    return r ? fromDb(r) : undefined
  }
  async listAll() {
    return (await q(this.db, `SELECT ${COLS} FROM resources r ${ORDER}`)).map(fromDb)
  }
  async listVisible(uid: number) {
    // A union of three index searches (own, global, shared with a group of the user), as on SQLite.
    return (
      await q(
        this.db,
        `SELECT ${COLS} FROM resources r WHERE r.guid IN (
           SELECT guid FROM resources WHERE uid = $1
           UNION SELECT guid FROM resources WHERE global
           UNION SELECT a.guid FROM user_groups m JOIN resource_acl a ON a.gid = m.gid WHERE m.uid = $1)
         ${ORDER}`,
        [uid],
      )
    ).map(fromDb)
  }
  async sharedWith(guid: string, uid: number) {
    const rows = await q(
      this.db,
      'SELECT 1 AS one FROM resource_acl a JOIN user_groups m ON m.gid = a.gid WHERE a.guid = $1 AND m.uid = $2 LIMIT 1',
      [guid, uid],
    )
    return rows.length > 0
  }
  async create(row: NewResource, quota?: number) {
    await tx(this.db, async (t) => {
      if (quota !== undefined) {
        await lockOwner(t, row.uid)
        await checkQuotaPg(t, row.uid, quota, row.size)
      }
      await run(
        t,
        `INSERT INTO resources (guid, uid, name, description, global, version, size, hash, blob_key, modified, domain, labels)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
        [row.guid, row.uid, row.name, row.description, row.global, row.version, row.size, row.hash, row.blobKey, row.modified, row.domain, JSON.stringify(row.labels)],
      )
      await setGids(t, row.guid, row.gids)
    })
  }
  async update(guid: string, changes: ResourceChanges) {
    return tx(this.db, async (t) => {
      const values: (string | number | boolean)[] = [changes.modified]
      const sets = ['modified = $1']
      const set = (column: string, v: string | number | boolean) => (values.push(v), sets.push(`${column} = $${values.length}`))
      if (changes.name !== undefined) set('name', changes.name)
      if (changes.description !== undefined) set('description', changes.description)
      if (changes.global !== undefined) set('global', changes.global)
      // The UPDATE locks the row, so a concurrent delete cannot slip between it and the sharing-list change.
      if ((await run(t, `UPDATE resources SET ${sets.join(', ')} WHERE guid = $${values.length + 1}`, [...values, guid])) === 0) return undefined
      if (changes.gids !== undefined) await setGids(t, guid, changes.gids)
      return fromDb((await get(t, guid))!)
    })
  }
  async setContents(guid: string, c: { blobKey: string; size: number; hash: string; modified: number }, quota?: number) {
    return tx(this.db, async (t) => {
      // The owner's lock comes before the resource's (as in create and in a user's deletion), so no two
      // transactions take them in opposite orders. A resource never changes owner.
      if (quota !== undefined) {
        const [owner] = await q<{ uid: number }>(t, 'SELECT uid FROM resources WHERE guid = $1', [guid])
        if (owner) await lockOwner(t, owner.uid)
      }
      const [before] = await q<{ blob_key: string | null; size: unknown; uid: number }>(
        t,
        'SELECT blob_key, size, uid FROM resources WHERE guid = $1 FOR UPDATE',
        [guid],
      )
      if (!before) return undefined
      await checkQuotaPg(t, before.uid, quota, c.size - num(before.size))
      await run(t, 'UPDATE resources SET blob_key = $1, size = $2, hash = $3, modified = $4, version = version + 1 WHERE guid = $5', [
        c.blobKey, c.size, c.hash, c.modified, guid,
      ])
      return { row: fromDb((await get(t, guid))!), oldKey: before.blob_key }
    })
  }
  async delete(guid: string) {
    return tx(this.db, async (t) => {
      const before = await get(t, guid)
      if (!before) return undefined
      if ((await run(t, 'DELETE FROM resources WHERE guid = $1', [guid])) === 0) return undefined
      return fromDb(before)
    })
  }
}
