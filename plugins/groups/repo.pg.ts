// Groups and memberships over PostgreSQL: the same contract as SqliteGroupsRepo (plugins/groups/repo.ts).
import { type PgPool, insertWithNextId, pgUniqueWrite, q, run, tx } from '../../server/store/pg'
import type { GroupRow, GroupsRepo } from './repo'

const COLS = 'g.gid AS gid, g.name AS name, g.description AS description'

export class PgGroupsRepo implements GroupsRepo {
  constructor(private readonly db: PgPool) {}

  async get(gid: number) {
    return (await q<GroupRow>(this.db, `SELECT ${COLS} FROM groups g WHERE gid = $1`, [gid]))[0]
  }
  async list() {
    return q<GroupRow>(this.db, `SELECT ${COLS} FROM groups g ORDER BY gid`)
  }
  async create(name: string, description: string) {
    return insertWithNextId(this.db, 'groups', 'INSERT INTO groups (gid, name, description) VALUES ($1, $2, $3)', [name, description])
  }
  async update(gid: number, changes: Partial<Pick<GroupRow, 'name' | 'description'>>) {
    const sets: string[] = []
    const values: string[] = []
    if (changes.name !== undefined) (values.push(changes.name), sets.push(`name = $${values.length}`))
    if (changes.description !== undefined) (values.push(changes.description), sets.push(`description = $${values.length}`))
    if (sets.length === 0) return
    await pgUniqueWrite(() => run(this.db, `UPDATE groups SET ${sets.join(', ')} WHERE gid = $${values.length + 1}`, [...values, gid]))
  }
  async delete(gid: number) {
    // Memberships go by ON DELETE CASCADE, default search groups by ON DELETE SET NULL, sharing lists by the
    // trigger functions of their migrations.
    return (await run(this.db, 'DELETE FROM groups WHERE gid = $1', [gid])) > 0
  }
  async groupsOf(uid: number) {
    return q<GroupRow>(this.db, `SELECT ${COLS} FROM user_groups m JOIN groups g ON g.gid = m.gid WHERE m.uid = $1 ORDER BY m.gid`, [uid])
  }
  async allMemberships() {
    const byUid = new Map<number, GroupRow[]>()
    const rows = await q<GroupRow & { uid: number }>(
      this.db,
      `SELECT m.uid AS uid, ${COLS} FROM user_groups m JOIN groups g ON g.gid = m.gid ORDER BY m.uid, g.gid`,
    )
    for (const { uid, ...g } of rows) {
      const list = byUid.get(uid)
      if (list) list.push(g)
      else byUid.set(uid, [g])
    }
    return byUid
  }
  async isMember(uid: number, gid: number) {
    return (await q(this.db, 'SELECT 1 AS one FROM user_groups WHERE uid = $1 AND gid = $2', [uid, gid])).length > 0
  }
  async memberUids(gid: number) {
    return (await q<{ uid: number }>(this.db, 'SELECT uid FROM user_groups WHERE gid = $1 ORDER BY uid', [gid])).map((r) => r.uid)
  }
  async addMember(uid: number, gids: number[]) {
    if (gids.length === 0) return
    // One statement is one transaction: every membership or none.
    await run(
      this.db,
      'INSERT INTO user_groups (uid, gid) SELECT $1, g FROM unnest($2::int[]) AS g ON CONFLICT DO NOTHING',
      [uid, gids],
    )
  }
  async removeMember(uid: number, gid: number) {
    return tx(this.db, async (t) => {
      const removed = (await run(t, 'DELETE FROM user_groups WHERE uid = $1 AND gid = $2', [uid, gid])) > 0
      await run(t, 'UPDATE users SET search_gid = NULL WHERE uid = $1 AND search_gid = $2', [uid, gid])
      return removed
    })
  }
}
