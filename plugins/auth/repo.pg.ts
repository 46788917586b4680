// Sessions and the login throttle's attempt counters over PostgreSQL: the same contract as SqliteSessionsRepo (plugins/auth/repo.ts).
import { type PgPool, type PgRow, num, q, run } from '../../server/store/pg'
import { pgToUser, pgUserColumns } from '../users/repo.pg'
import type { LoginReservation, SessionRow, SessionsRepo } from './repo'

const toSession = (r: PgRow): SessionRow => ({
  id: r.id as string,
  uid: r.uid as number,
  created: num(r.created),
  lastHit: num(r.last_hit),
  expires: num(r.expires),
  origin: r.origin as string,
  temp: r.temp as boolean,
})

const COLS = 'id, uid, created, last_hit, expires, origin, temp'

export class PgSessionsRepo implements SessionsRepo {
  constructor(private readonly db: PgPool) {}

  async create(s: SessionRow, passwordHash?: string) {
    // One INSERT ... SELECT, as on SQLite: no row while the account is locked, gone, or has another hash. FOR SHARE
    // makes it wait for a password change, lock or deletion of the account in progress and then check the row that
    // committed; one that starts after it waits until this session is committed, so that its ending of the user's
    // sessions finds it. (Without the lock the session could be inserted after those sessions were ended.)
    const n = await run(
      this.db,
      `INSERT INTO sessions (${COLS}) SELECT $1, uid, $2, $3, $4, $5, $6 FROM users
       WHERE uid = $7 AND NOT locked AND ($8::text IS NULL OR password_hash = $8::text) FOR SHARE`,
      [s.id, s.created, s.lastHit, s.expires, s.origin, s.temp, s.uid, passwordHash ?? null],
    )
    return n > 0
  }
  async getWithUser(id: string) {
    const [r] = await q(
      this.db,
      `SELECT s.id AS id, s.created AS created, s.last_hit AS last_hit, s.expires AS expires, s.origin AS origin, s.temp AS temp, ${pgUserColumns('u')}
       FROM sessions s JOIN users u ON u.uid = s.uid WHERE s.id = $1`,
      [id],
    )
    return r ? { session: toSession(r), user: pgToUser(r) } : undefined
  }
  async touch(id: string, now: number) {
    await run(this.db, 'UPDATE sessions SET last_hit = $1 WHERE id = $2', [now, id])
  }
  async delete(id: string) {
    return (await run(this.db, 'DELETE FROM sessions WHERE id = $1', [id])) > 0
  }
  async deleteForUser(uid: number, keep?: string) {
    return (await q<{ id: string }>(this.db, 'DELETE FROM sessions WHERE uid = $1 AND id <> $2 RETURNING id', [uid, keep ?? ''])).map((r) => r.id)
  }
  async listForUser(uid: number) {
    return (await q(this.db, `SELECT ${COLS} FROM sessions WHERE uid = $1 ORDER BY created`, [uid])).map(toSession)
  }
  async deleteExpired(now: number, idleMs: number) {
    return (
      await q<{ id: string }>(this.db, 'DELETE FROM sessions WHERE expires <= $1 OR last_hit <= $1 - $2 RETURNING id', [now, idleMs])
    ).map((r) => r.id)
  }
  async countLive(now: number, idleMs: number) {
    const [r] = await q<{ n: unknown }>(this.db, 'SELECT COUNT(*) AS n FROM sessions WHERE expires > $1 AND last_hit > $1 - $2', [now, idleMs])
    return num(r!.n)
  }
  async reserveLoginAttempt(subject: string, now: number, windowMs: number, max: number, maxRows: number): Promise<LoginReservation> {
    // SqliteSessionsRepo's statement, with typed parameters. One statement: concurrent reservations of one subject
    // meet on its row (ON CONFLICT waits for the other's insert or update and re-checks the WHERE on the row it
    // committed), so exactly `max` pass, on any number of replicas. The row bound is counted in the statement's
    // snapshot: new subjects reserved at the same moment may pass it together, by at most the statements running
    // at once (a few per replica), which keeps it a bound against floods of made-up names.
    const [r] = await q(
      this.db,
      `INSERT INTO login_attempts (subject, attempts, window_end)
       SELECT $1::text, 1, $2::bigint + $3::bigint
       WHERE EXISTS (SELECT 1 FROM login_attempts WHERE subject = $1::text) OR (SELECT count(*) FROM login_attempts) < $5::bigint
       ON CONFLICT (subject) DO UPDATE SET
         attempts = CASE WHEN login_attempts.window_end <= $2::bigint THEN 1 ELSE login_attempts.attempts + 1 END,
         window_end = CASE WHEN login_attempts.window_end <= $2::bigint THEN $2::bigint + $3::bigint ELSE login_attempts.window_end END
       WHERE login_attempts.window_end <= $2::bigint OR login_attempts.attempts < $4::int
       RETURNING attempts`,
      [subject, now, windowMs, max, maxRows],
    )
    if (r) return { reserved: true }
    const [w] = await q(this.db, 'SELECT window_end FROM login_attempts WHERE subject = $1', [subject])
    return { reserved: false, until: w ? num(w.window_end) : 0 }
  }
  async clearLoginAttempts(subject: string) {
    await run(this.db, 'DELETE FROM login_attempts WHERE subject = $1', [subject])
  }
  async sweepLoginAttempts(now: number) {
    return run(this.db, 'DELETE FROM login_attempts WHERE window_end <= $1', [now])
  }
}
