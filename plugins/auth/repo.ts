// Sessions (one row per issued JWT) and login-failure counters over SQLite.
import type { Database, Statement } from 'bun:sqlite'
import { type UserDbRow, type UserRow, toUser, userColumns } from '../users/repo'

export interface SessionRow {
  id: string
  uid: number
  created: number
  lastHit: number
  expires: number
  origin: string
  temp: boolean
}

export interface LoginFailureRow {
  failures: number
  windowStart: number
}

export interface SessionsRepo {
  create(session: SessionRow): Promise<void>
  /** The session with its user, in one query: this runs on every authenticated request. */
  getWithUser(id: string): Promise<{ session: SessionRow; user: UserRow } | undefined>
  touch(id: string, now: number): Promise<void>
  delete(id: string): Promise<boolean>
  /** Deletes every session of the user, or every one but `keep`. */
  deleteForUser(uid: number, keep?: string): Promise<string[]>
  listForUser(uid: number): Promise<SessionRow[]>
  /** Deletes the sessions past their end or idle for idleMs ; answers their ids. */
  deleteExpired(now: number, idleMs: number): Promise<string[]>
  getFailures(username: string): Promise<LoginFailureRow | undefined>
  /** Counts one failed login; a window older than windowMs starts afresh. Answers the count in the window. */
  recordFailure(username: string, now: number, windowMs: number): Promise<number>
  clearFailures(username: string): Promise<void>
}

interface SessionDbRow {
  id: string
  uid: number
  created: number
  last_hit: number
  expires: number
  origin: string
  temp: number
}

const toSession = (r: SessionDbRow): SessionRow => ({
  id: r.id, uid: r.uid, created: r.created, lastHit: r.last_hit, expires: r.expires, origin: r.origin, temp: r.temp === 1,
})

export class SqliteSessionsRepo implements SessionsRepo {
  private readonly q: {
    insert: Statement<unknown, [string, number, number, number, number, string, number]>
    getWithUser: Statement<SessionDbRow & UserDbRow, [string]>
    touch: Statement<unknown, [number, string]>
    del: Statement<unknown, [string]>
    delUser: Statement<{ id: string }, [number, string]>
    listUser: Statement<SessionDbRow, [number]>
    delExpired: Statement<{ id: string }, [number, number]>
    getFail: Statement<{ failures: number; window_start: number }, [string]>
    recordFail: Statement<{ failures: number }, [string, number, number]>
    clearFail: Statement<unknown, [string]>
    pruneFail: Statement<unknown, [number]>
  }

  constructor(db: Database) {
    const cols = 'id, uid, created, last_hit, expires, origin, temp'
    this.q = {
      insert: db.query(`INSERT INTO sessions (${cols}) VALUES (?, ?, ?, ?, ?, ?, ?)`),
      getWithUser: db.query(
        // `= +?`: see plugins/groups/repo.ts; a join with a bare parameter measured twice as slow here.
        `SELECT s.id AS id, s.created AS created, s.last_hit AS last_hit, s.expires AS expires, s.origin AS origin, s.temp AS temp, ${userColumns('u')}
         FROM sessions s JOIN users u ON u.uid = s.uid WHERE s.id = +?`,
      ),
      touch: db.query('UPDATE sessions SET last_hit = ? WHERE id = ?'),
      del: db.query('DELETE FROM sessions WHERE id = ?'),
      delUser: db.query('DELETE FROM sessions WHERE uid = ? AND id != ? RETURNING id'),
      listUser: db.query(`SELECT ${cols} FROM sessions WHERE uid = ? ORDER BY created`),
      delExpired: db.query('DELETE FROM sessions WHERE expires <= ?1 OR last_hit <= ?1 - ?2 RETURNING id'),
      getFail: db.query('SELECT failures, window_start FROM login_failures WHERE username = ?'),
      recordFail: db.query(`
        INSERT INTO login_failures (username, failures, window_start) VALUES (?1, 1, ?2)
        ON CONFLICT (username) DO UPDATE SET
          failures = CASE WHEN window_start <= ?2 - ?3 THEN 1 ELSE failures + 1 END,
          window_start = CASE WHEN window_start <= ?2 - ?3 THEN ?2 ELSE window_start END
        RETURNING failures`),
      clearFail: db.query('DELETE FROM login_failures WHERE username = ?'),
      pruneFail: db.query('DELETE FROM login_failures WHERE window_start <= ?'),
    }
  }

  async create(s: SessionRow) {
    this.q.insert.run(s.id, s.uid, s.created, s.lastHit, s.expires, s.origin, s.temp ? 1 : 0)
  }
  async getWithUser(id: string) {
    const r = this.q.getWithUser.get(id)
    return r ? { session: toSession(r), user: toUser(r) } : undefined
  }
  async touch(id: string, now: number) {
    this.q.touch.run(now, id)
  }
  async delete(id: string) {
    return this.q.del.run(id).changes > 0
  }
  async deleteForUser(uid: number, keep?: string) {
    return this.q.delUser.all(uid, keep ?? '').map((r) => r.id)
  }
  async listForUser(uid: number) {
    return this.q.listUser.all(uid).map(toSession)
  }
  async deleteExpired(now: number, idleMs: number) {
    return this.q.delExpired.all(now, idleMs).map((r) => r.id)
  }
  async getFailures(username: string) {
    const r = this.q.getFail.get(username)
    return r ? { failures: r.failures, windowStart: r.window_start } : undefined
  }
  async recordFailure(username: string, now: number, windowMs: number) {
    this.q.pruneFail.run(now - windowMs)
    return this.q.recordFail.get(username, now, windowMs)!.failures
  }
  async clearFailures(username: string) {
    this.q.clearFail.run(username)
  }
}
