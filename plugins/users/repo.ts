// Users and their preferences over SQLite. Plain objects in and out; no HTTP here.
import type { Database, Statement } from 'bun:sqlite'
import { uniqueWrite } from '../../server/store/db'
import type { Maybe } from '../../server/store/maybe'

export interface UserRow {
  uid: number
  username: string
  name: string
  email: string
  passwordHash: string
  admin: boolean
  locked: boolean
  defaultGid: number | null
  lastActive: number
}

export interface NewUser {
  username: string
  name: string
  email: string
  passwordHash: string
  admin: boolean
}

export type UserChanges = Partial<Pick<UserRow, 'username' | 'name' | 'email' | 'admin' | 'locked'>>

export interface PreferenceRow {
  uid: number
  name: string
  data: string
  updated: number
}

export interface UsersRepo {
  count(): Promise<number>
  get(uid: number): Promise<UserRow | undefined>
  getByName(username: string): Promise<UserRow | undefined>
  list(): Promise<UserRow[]>
  /** Throws UniqueViolation when the name is taken. */
  create(user: NewUser, now: number): Promise<number>
  /** Applies the changes; locking also ends every session of the user, in the same transaction. Throws UniqueViolation on a taken name. */
  update(uid: number, changes: UserChanges): Promise<void>
  setPasswordHash(uid: number, hash: string): Promise<void>
  setDefaultGid(uid: number, gid: number | null): Promise<void>
  /** On the request path once a second per session (Maybe: server/store/maybe.ts). */
  touch(uid: number, now: number): Maybe<void>
  /** Deletes the user with their sessions, memberships and preferences. */
  delete(uid: number): Promise<boolean>
  getPreference(uid: number, name: string): Promise<PreferenceRow | undefined>
  setPreference(uid: number, name: string, data: string, now: number): Promise<void>
  deletePreference(uid: number, name: string): Promise<void>
  listPreferences(): Promise<PreferenceRow[]>
}

export interface UserDbRow {
  uid: number
  username: string
  name: string
  email: string
  password_hash: string
  admin: number
  locked: number
  search_gid: number | null
  last_active: number
}

const COLUMNS = 'uid, username, name, email, password_hash, admin, locked, search_gid, last_active'

/** The user columns under a table alias, for queries of other repositories that join users. */
export const userColumns = (alias: string) => COLUMNS.split(', ').map((c) => `${alias}.${c} AS ${c}`).join(', ')

export function toUser(r: UserDbRow): UserRow {
  return {
    uid: r.uid,
    username: r.username,
    name: r.name,
    email: r.email,
    passwordHash: r.password_hash,
    admin: r.admin === 1,
    locked: r.locked === 1,
    defaultGid: r.search_gid,
    lastActive: r.last_active,
  }
}

export class SqliteUsersRepo implements UsersRepo {
  private readonly q: {
    count: Statement<{ n: number }, []>
    get: Statement<UserDbRow, [number]>
    getByName: Statement<UserDbRow, [string]>
    list: Statement<UserDbRow, []>
    insert: Statement<{ uid: number }, [string, string, string, string, number, number]>
    setPassword: Statement<unknown, [string, number]>
    setDefaultGid: Statement<unknown, [number | null, number]>
    touch: Statement<unknown, [number, number]>
    del: Statement<unknown, [number]>
    endSessions: Statement<unknown, [number]>
    getPref: Statement<PreferenceRow, [number, string]>
    setPref: Statement<unknown, [number, string, string, number]>
    delPref: Statement<unknown, [number, string]>
    listPrefs: Statement<PreferenceRow, []>
  }

  constructor(private readonly db: Database) {
    this.q = {
      count: db.query('SELECT count(*) AS n FROM users'),
      get: db.query(`SELECT ${COLUMNS} FROM users WHERE uid = ?`),
      getByName: db.query(`SELECT ${COLUMNS} FROM users WHERE username = ?`),
      list: db.query(`SELECT ${COLUMNS} FROM users ORDER BY uid`),
      insert: db.query(
        'INSERT INTO users (username, name, email, password_hash, admin, created) VALUES (?, ?, ?, ?, ?, ?) RETURNING uid',
      ),
      setPassword: db.query('UPDATE users SET password_hash = ? WHERE uid = ?'),
      setDefaultGid: db.query('UPDATE users SET search_gid = ? WHERE uid = ?'),
      touch: db.query('UPDATE users SET last_active = ? WHERE uid = ?'),
      del: db.query('DELETE FROM users WHERE uid = ?'),
      endSessions: db.query('DELETE FROM sessions WHERE uid = ?'),
      getPref: db.query('SELECT uid, name, data, updated FROM preferences WHERE uid = ? AND name = ?'),
      setPref: db.query(
        'INSERT INTO preferences (uid, name, data, updated) VALUES (?, ?, ?, ?) ON CONFLICT (uid, name) DO UPDATE SET data = excluded.data, updated = excluded.updated',
      ),
      delPref: db.query('DELETE FROM preferences WHERE uid = ? AND name = ?'),
      listPrefs: db.query('SELECT uid, name, data, updated FROM preferences ORDER BY uid, name'),
    }
  }

  async count() {
    return this.q.count.get()!.n
  }
  async get(uid: number) {
    const r = this.q.get.get(uid)
    return r ? toUser(r) : undefined
  }
  async getByName(username: string) {
    const r = this.q.getByName.get(username)
    return r ? toUser(r) : undefined
  }
  async list() {
    return this.q.list.all().map(toUser)
  }
  async create(u: NewUser, now: number) {
    return uniqueWrite(() => this.q.insert.get(u.username, u.name, u.email, u.passwordHash, u.admin ? 1 : 0, now)!.uid)
  }
  async update(uid: number, changes: UserChanges) {
    const columns: Record<keyof UserChanges, string> = {
      username: 'username', name: 'name', email: 'email', admin: 'admin', locked: 'locked',
    }
    const sets: string[] = []
    const values: (string | number)[] = []
    for (const [key, column] of Object.entries(columns) as [keyof UserChanges, string][]) {
      const v = changes[key]
      if (v === undefined) continue
      sets.push(`${column} = ?`)
      values.push(typeof v === 'boolean' ? (v ? 1 : 0) : v)
    }
    if (sets.length === 0) return
    this.db.transaction(() => {
      uniqueWrite(() => this.db.run(`UPDATE users SET ${sets.join(', ')} WHERE uid = ?`, [...values, uid]))
      if (changes.locked === true) this.q.endSessions.run(uid)
    })()
  }
  async setPasswordHash(uid: number, hash: string) {
    this.q.setPassword.run(hash, uid)
  }
  async setDefaultGid(uid: number, gid: number | null) {
    this.q.setDefaultGid.run(gid, uid)
  }
  touch(uid: number, now: number) {
    this.q.touch.run(now, uid)
  }
  async delete(uid: number) {
    // sessions, memberships and preferences go with the row (ON DELETE CASCADE)
    return this.q.del.run(uid).changes > 0
  }
  async getPreference(uid: number, name: string) {
    return this.q.getPref.get(uid, name) ?? undefined
  }
  async setPreference(uid: number, name: string, data: string, now: number) {
    this.q.setPref.run(uid, name, data, now)
  }
  async deletePreference(uid: number, name: string) {
    this.q.delPref.run(uid, name)
  }
  async listPreferences() {
    return this.q.listPrefs.all()
  }
}
