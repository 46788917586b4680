// Sessions (one row per issued JWT) and the login throttle's attempt counters over SQLite.
import type { Database, Statement } from 'bun:sqlite'
import { type UserDbRow, type UserRow, toUser, userColumns } from '../users/repo'
import type { Maybe } from '../../server/store/maybe'

export interface SessionRow {
  id: string
  uid: number
  created: number
  lastHit: number
  expires: number
  origin: string
  temp: boolean
}

/** The answer of a reservation: made, or refused until `until` (0: the table is full, no window to name). */
export type LoginReservation = { reserved: true } | { reserved: false; until: number }

export interface SessionsRepo {
  /**
   * Creates the session while its user exists and is not locked and, when `passwordHash` is given, still has that
   * password hash, in one statement: a login verified against a password that was changed, or an account locked or
   * deleted, while the (slow) check ran gets no session. Answers whether it was created.
   */
  create(session: SessionRow, passwordHash?: string): Promise<boolean>
  /** The session with its user, in one query: this runs on every authenticated request (Maybe: server/store/maybe.ts). */
  getWithUser(id: string): Maybe<{ session: SessionRow; user: UserRow } | undefined>
  touch(id: string, now: number): Maybe<void>
  /** Maybe: an expired session is deleted on the request that finds it (server/store/maybe.ts). */
  delete(id: string): Maybe<boolean>
  /** Deletes every session of the user, or every one but `keep`. */
  deleteForUser(uid: number, keep?: string): Promise<string[]>
  listForUser(uid: number): Promise<SessionRow[]>
  /** Deletes the sessions past their end or idle for idleMs ; answers their ids. */
  deleteExpired(now: number, idleMs: number): Promise<string[]>
  /** How many sessions are live at `now`: neither past their end nor idle for idleMs (the complement of deleteExpired). */
  countLive(now: number, idleMs: number): Promise<number>
  /**
   * Reserves one login attempt of `subject` before its password is checked. Counting and checking are one
   * statement, so parallel requests (also on other replicas of one store) cannot all pass a check made before any
   * of them was counted. A window that has ended (window_end <= now) starts afresh with this attempt and ends at
   * now + windowMs. Refused, changing nothing, when the subject already has `max` attempts in its window, or when
   * it has no live row and the table already holds `maxRows` rows (the bound against floods of made-up names).
   */
  reserveLoginAttempt(subject: string, now: number, windowMs: number, max: number, maxRows: number): Promise<LoginReservation>
  /** Forgets the subject's attempts (a successful login). */
  clearLoginAttempts(subject: string): Promise<void>
  /** Deletes the rows whose window has ended; answers how many. */
  sweepLoginAttempts(now: number): Promise<number>
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
    insert: Statement<unknown, [string, number, number, number, string, number, number, string | null]>
    getWithUser: Statement<SessionDbRow & UserDbRow, [string]>
    touch: Statement<unknown, [number, string]>
    del: Statement<unknown, [string]>
    delUser: Statement<{ id: string }, [number, string]>
    listUser: Statement<SessionDbRow, [number]>
    delExpired: Statement<{ id: string }, [number, number]>
    countLive: Statement<{ n: number }, [number, number]>
    reserve: Statement<{ attempts: number }, [string, number, number, number, number]>
    windowEnd: Statement<{ window_end: number }, [string]>
    clearAttempts: Statement<unknown, [string]>
    sweepAttempts: Statement<unknown, [number]>
  }

  constructor(db: Database) {
    const cols = 'id, uid, created, last_hit, expires, origin, temp'
    this.q = {
      insert: db.query(
        `INSERT INTO sessions (${cols}) SELECT ?1, uid, ?2, ?3, ?4, ?5, ?6 FROM users
         WHERE uid = ?7 AND locked = 0 AND (?8 IS NULL OR password_hash = ?8)`,
      ),
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
      countLive: db.query('SELECT COUNT(*) AS n FROM sessions WHERE expires > ?1 AND last_hit > ?1 - ?2'),
      // Plain SQL that PostgreSQL runs as is ($1..$5 for ?1..?5): INSERT ... SELECT ... WHERE supplies no row when
      // a new subject would pass the row bound; ON CONFLICT ... DO UPDATE ... WHERE updates no row (so RETURNING
      // answers none) when the subject's live window is full. The count runs only for subjects without a row.
      reserve: db.query(`
        INSERT INTO login_attempts (subject, attempts, window_end)
        SELECT ?1, 1, ?2 + ?3
        WHERE EXISTS (SELECT 1 FROM login_attempts WHERE subject = ?1) OR (SELECT count(*) FROM login_attempts) < ?5
        ON CONFLICT (subject) DO UPDATE SET
          attempts = CASE WHEN login_attempts.window_end <= ?2 THEN 1 ELSE login_attempts.attempts + 1 END,
          window_end = CASE WHEN login_attempts.window_end <= ?2 THEN ?2 + ?3 ELSE login_attempts.window_end END
        WHERE login_attempts.window_end <= ?2 OR login_attempts.attempts < ?4
        RETURNING attempts`),
      windowEnd: db.query('SELECT window_end FROM login_attempts WHERE subject = ?'),
      clearAttempts: db.query('DELETE FROM login_attempts WHERE subject = ?'),
      sweepAttempts: db.query('DELETE FROM login_attempts WHERE window_end <= ?'),
    }
  }

  async create(s: SessionRow, passwordHash?: string) {
    return this.q.insert.run(s.id, s.created, s.lastHit, s.expires, s.origin, s.temp ? 1 : 0, s.uid, passwordHash ?? null).changes > 0
  }
  getWithUser(id: string) {
    const r = this.q.getWithUser.get(id)
    return r ? { session: toSession(r), user: toUser(r) } : undefined
  }
  touch(id: string, now: number) {
    this.q.touch.run(now, id)
  }
  delete(id: string) {
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
  async countLive(now: number, idleMs: number) {
    return this.q.countLive.get(now, idleMs)?.n ?? 0
  }
  async reserveLoginAttempt(subject: string, now: number, windowMs: number, max: number, maxRows: number): Promise<LoginReservation> {
    if (this.q.reserve.get(subject, now, windowMs, max, maxRows)) return { reserved: true }
    return { reserved: false, until: this.q.windowEnd.get(subject)?.window_end ?? 0 }
  }
  async clearLoginAttempts(subject: string) {
    this.q.clearAttempts.run(subject)
  }
  async sweepLoginAttempts(now: number) {
    return this.q.sweepAttempts.run(now).changes
  }
}
