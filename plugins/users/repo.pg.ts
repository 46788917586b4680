// Users and their preferences over PostgreSQL: the same contract as SqliteUsersRepo (plugins/users/repo.ts).
import { type PgPool, type PgRow, insertWithNextId, num, numOrNull, pgUniqueWrite, q, run, tx } from '../../server/store/pg'
import type { NewUser, PreferenceRow, UserChanges, UserRow, UsersRepo } from './repo'

const COLUMNS = 'uid, username, name, email, password_hash, admin, locked, search_gid, last_active'

/** The user columns under a table alias, for queries of other repositories that join users. */
export const pgUserColumns = (alias: string) => COLUMNS.split(', ').map((c) => `${alias}.${c} AS ${c}`).join(', ')

/** Names are unique without regard to ASCII case (SQLite's NOCASE): compare the folded forms, by the index. */
export const NAME_KEY = (column: string, param: string) => `lower(${column}) = lower(${param}::text COLLATE "C")`

export function pgToUser(r: PgRow): UserRow {
  return {
    uid: r.uid as number,
    username: r.username as string,
    name: r.name as string,
    email: r.email as string,
    passwordHash: r.password_hash as string,
    admin: r.admin as boolean,
    locked: r.locked as boolean,
    defaultGid: numOrNull(r.search_gid),
    lastActive: num(r.last_active),
  }
}

const toPref = (r: PgRow): PreferenceRow => ({ uid: r.uid as number, name: r.name as string, data: r.data as string, updated: num(r.updated) })

export class PgUsersRepo implements UsersRepo {
  constructor(private readonly db: PgPool) {}

  async count() {
    return (await q<{ n: number }>(this.db, 'SELECT count(*)::int AS n FROM users'))[0]!.n
  }
  async get(uid: number) {
    const [r] = await q(this.db, `SELECT ${COLUMNS} FROM users WHERE uid = $1`, [uid])
    return r ? pgToUser(r) : undefined
  }
  async getByName(username: string) {
    const [r] = await q(this.db, `SELECT ${COLUMNS} FROM users WHERE ${NAME_KEY('username', '$1')}`, [username])
    return r ? pgToUser(r) : undefined
  }
  async list() {
    return (await q(this.db, `SELECT ${COLUMNS} FROM users ORDER BY uid`)).map(pgToUser)
  }
  async create(u: NewUser, now: number) {
    return insertWithNextId(
      this.db,
      'users',
      'INSERT INTO users (uid, username, name, email, password_hash, admin, created) VALUES ($1, $2, $3, $4, $5, $6, $7)',
      [u.username, u.name, u.email, u.passwordHash, u.admin, now],
    )
  }
  async update(uid: number, changes: UserChanges) {
    const columns: Record<keyof UserChanges, string> = {
      username: 'username', name: 'name', email: 'email', admin: 'admin', locked: 'locked',
    }
    const sets: string[] = []
    const values: (string | boolean)[] = []
    for (const [key, column] of Object.entries(columns) as [keyof UserChanges, string][]) {
      const v = changes[key]
      if (v === undefined) continue
      values.push(v)
      sets.push(`${column} = $${values.length}`)
    }
    if (sets.length === 0) return
    await pgUniqueWrite(() =>
      tx(this.db, async (t) => {
        await run(t, `UPDATE users SET ${sets.join(', ')} WHERE uid = $${values.length + 1}`, [...values, uid])
        if (changes.locked === true) await run(t, 'DELETE FROM sessions WHERE uid = $1', [uid])
      }),
    )
  }
  async setPasswordHash(uid: number, hash: string) {
    await run(this.db, 'UPDATE users SET password_hash = $1 WHERE uid = $2', [hash, uid])
  }
  async setDefaultGid(uid: number, gid: number | null) {
    await run(this.db, 'UPDATE users SET search_gid = $1 WHERE uid = $2', [gid, uid])
  }
  async touch(uid: number, now: number) {
    await run(this.db, 'UPDATE users SET last_active = $1 WHERE uid = $2', [now, uid])
  }
  async delete(uid: number) {
    // sessions, memberships and preferences go with the row (ON DELETE CASCADE)
    return (await run(this.db, 'DELETE FROM users WHERE uid = $1', [uid])) > 0
  }
  async getPreference(uid: number, name: string) {
    const [r] = await q(this.db, 'SELECT uid, name, data, updated FROM preferences WHERE uid = $1 AND name = $2', [uid, name])
    return r ? toPref(r) : undefined
  }
  async setPreference(uid: number, name: string, data: string, now: number) {
    await run(
      this.db,
      `INSERT INTO preferences (uid, name, data, updated) VALUES ($1, $2, $3, $4)
       ON CONFLICT (uid, name) DO UPDATE SET data = excluded.data, updated = excluded.updated`,
      [uid, name, data, now],
    )
  }
  async deletePreference(uid: number, name: string) {
    await run(this.db, 'DELETE FROM preferences WHERE uid = $1 AND name = $2', [uid, name])
  }
  async listPreferences() {
    return (await q(this.db, 'SELECT uid, name, data, updated FROM preferences ORDER BY uid, name')).map(toPref)
  }
}

