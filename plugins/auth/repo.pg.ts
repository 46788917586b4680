// Sessions and login-failure counters over PostgreSQL: the same contract as SqliteSessionsRepo (plugins/auth/repo.ts).
import { type PgPool, type PgRow, num, q, run, tx } from '../../server/pg'
import { pgToUser, pgUserColumns } from '../users/repo.pg'
import type { LoginFailureRow, SessionRow, SessionsRepo } from './repo'

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
/** login_failures is keyed by the name folded as SQLite's NOCASE folds it (ASCII letters only). */
const KEY = 'lower($1::text COLLATE "C")'

export class PgSessionsRepo implements SessionsRepo {
  constructor(private readonly db: PgPool) {}

  async create(s: SessionRow) {
    await run(this.db, `INSERT INTO sessions (${COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
      s.id, s.uid, s.created, s.lastHit, s.expires, s.origin, s.temp,
    ])
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
  async getFailures(username: string) {
    const [r] = await q(this.db, `SELECT failures, window_start FROM login_failures WHERE username = ${KEY}`, [username])
    return r ? ({ failures: r.failures as number, windowStart: num(r.window_start) } satisfies LoginFailureRow) : undefined
  }
  async recordFailure(username: string, now: number, windowMs: number) {
    return tx(this.db, async (t) => {
      await run(t, 'DELETE FROM login_failures WHERE window_start <= $1', [now - windowMs])
      const [r] = await q<{ failures: number }>(
        t,
        `INSERT INTO login_failures (username, failures, window_start) VALUES (${KEY}, 1, $2)
         ON CONFLICT (username) DO UPDATE SET
           failures = CASE WHEN login_failures.window_start <= $2 - $3 THEN 1 ELSE login_failures.failures + 1 END,
           window_start = CASE WHEN login_failures.window_start <= $2 - $3 THEN $2 ELSE login_failures.window_start END
         RETURNING failures`,
        [username, now, windowMs],
      )
      return r!.failures
    })
  }
  async clearFailures(username: string) {
    await run(this.db, `DELETE FROM login_failures WHERE username = ${KEY}`, [username])
  }
}
