// The replica registry and the search records over PostgreSQL: the same contract as SqliteClusterRepo
// (server/cluster/repo.ts), except that several replicas share the store, so registering leaves the others alone.
import { type PgPool, type PgRow, num, q, run, tx } from '../store/pg'
import { type ClusterRepo, type ReplicaRow, type SearchRecordRow, failOrphansSql } from './repo'

const REPLICA_COLUMNS = 'id, name, address, description, started, heartbeat'
const RECORD_COLUMNS = 'id, owner, uid, gid, started, data, updated'

const replica = (r: PgRow): ReplicaRow => ({
  id: r.id as string,
  name: r.name as string,
  address: r.address as string,
  description: r.description as string,
  started: num(r.started),
  heartbeat: num(r.heartbeat),
})
const record = (r: PgRow): SearchRecordRow => ({
  id: r.id as string,
  owner: r.owner as string,
  uid: r.uid as number,
  gid: r.gid as number,
  started: num(r.started),
  data: r.data as string,
  updated: num(r.updated),
})

export class PgClusterRepo implements ClusterRepo {
  constructor(private readonly db: PgPool) {}

  async register(r: ReplicaRow) {
    await run(
      this.db,
      `INSERT INTO replicas (${REPLICA_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (id) DO UPDATE SET name = excluded.name, address = excluded.address, description = excluded.description,
         started = excluded.started, heartbeat = excluded.heartbeat`,
      [r.id, r.name, r.address, r.description, r.started, r.heartbeat],
    )
  }
  async heartbeat(id: string, now: number) {
    return (await run(this.db, 'UPDATE replicas SET heartbeat = $1 WHERE id = $2', [now, id])) > 0
  }
  async live(since: number) {
    return (await q(this.db, `SELECT ${REPLICA_COLUMNS} FROM replicas WHERE heartbeat >= $1 ORDER BY started, id`, [since])).map(replica)
  }
  async leave(id: string) {
    await tx(this.db, async (t) => {
      await run(t, 'DELETE FROM search_records WHERE owner = $1', [id])
      await run(t, 'DELETE FROM replicas WHERE id = $1', [id])
    })
  }
  async sweep(before: number, since: number) {
    await tx(this.db, async (t) => {
      await run(t, 'DELETE FROM replicas WHERE heartbeat < $1', [before])
      await run(t, 'DELETE FROM search_records WHERE owner NOT IN (SELECT id FROM replicas WHERE heartbeat >= $1)', [since])
    })
  }
  async putRecords(rows: SearchRecordRow[]) {
    if (rows.length === 0) return
    await tx(this.db, async (t) => {
      for (const r of rows)
        await run(
          t,
          `INSERT INTO search_records (${RECORD_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT (id) DO UPDATE SET uid = excluded.uid, gid = excluded.gid, started = excluded.started, data = excluded.data,
             updated = excluded.updated WHERE search_records.owner = excluded.owner`,
          [r.id, r.owner, r.uid, r.gid, r.started, r.data, r.updated],
        )
    })
  }
  async deleteRecords(owner: string, ids: string[]) {
    if (ids.length === 0) return
    await tx(this.db, async (t) => {
      for (const id of ids) await run(t, 'DELETE FROM search_records WHERE owner = $1 AND id = $2', [owner, id])
    })
  }
  async claim(r: SearchRecordRow, since: number, from?: string) {
    const won = await q(
      this.db,
      `INSERT INTO search_records (${RECORD_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, uid = excluded.uid, gid = excluded.gid, started = excluded.started,
         data = excluded.data, updated = excluded.updated
       WHERE search_records.owner = excluded.owner OR search_records.owner = $8
         OR search_records.owner NOT IN (SELECT id FROM replicas WHERE heartbeat >= $9)
       RETURNING id`,
      [r.id, r.owner, r.uid, r.gid, r.started, r.data, r.updated, from ?? r.owner, since],
    )
    return won.length > 0
  }
  async liveRecords(since: number) {
    return (
      await q(
        this.db,
        `SELECT ${RECORD_COLUMNS} FROM search_records WHERE owner IN (SELECT id FROM replicas WHERE heartbeat >= $1) ORDER BY started, id`,
        [since],
      )
    ).map(record)
  }
  async ownerOf(id: string, since: number) {
    const [r] = await q<{ owner: string; address: string }>(
      this.db,
      'SELECT r.owner AS owner, p.address AS address FROM search_records r JOIN replicas p ON p.id = r.owner WHERE r.id = $1 AND p.heartbeat >= $2',
      [id, since],
    )
    return r
  }
  async failOrphanedSaves(since: number, error: string, importsBefore: number) {
    const rows = await q<{ id: string }>(this.db, failOrphansSql((n) => `$${n}`), [error, error.length, since, importsBefore])
    return rows.map((r) => r.id)
  }
}
