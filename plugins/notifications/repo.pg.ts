// Notifications over PostgreSQL: the same contract as SqliteNotificationsRepo (./repo.ts), through server/store/pg.ts.
import { type PgPool, num, q as pgQuery, run, tx } from '../../server/store/pg'
import {
  INSERT_COLUMNS, NOTIFICATION_COLUMNS, type NewNotification, type NotificationChanges, type NotificationDbRow, type NotificationsRepo,
  insertValues, toNotification, updateClause,
} from './repo'

const q = (db: PgPool, text: string, params: unknown[] = []) => pgQuery<NotificationDbRow>(db, text, params)

/**
 * The advisory lock class of a sender's count (the two-key form: this class, the sender's UID). Under READ
 * COMMITTED two replicas could both count below the limit and both insert; the transaction-scoped lock makes the
 * count and the insert of one sender one step across the cluster, and leaves every other sender unblocked.
 */
const SENDER_LOCK = 0x4e_6f_74_66 // "Notf"

export class PgNotificationsRepo implements NotificationsRepo {
  constructor(private readonly db: PgPool) {}

  async create(n: NewNotification, limit: number, now: number) {
    return tx(this.db, async (t) => {
      await run(t, 'SELECT pg_advisory_xact_lock($1, $2)', [SENDER_LOCK, n.sender])
      const [c] = await pgQuery<{ n: unknown }>(t, 'SELECT COUNT(*) AS n FROM notifications WHERE sender = $1 AND expires > $2', [n.sender, now])
      if (num(c!.n) >= limit) return undefined
      const [r] = await pgQuery<{ id: unknown }>(
        t,
        `INSERT INTO notifications (${INSERT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id`,
        insertValues(n, n.broadcast),
      )
      return num(r!.id)
    })
  }
  async get(id: number) {
    const [r] = await q(this.db, `SELECT ${NOTIFICATION_COLUMNS} FROM notifications WHERE id = $1`, [id])
    return r ? toNotification(r, num) : undefined
  }
  async listFor(uid: number, now: number, after: number) {
    const rows = await q(
      this.db,
      `SELECT ${NOTIFICATION_COLUMNS} FROM notifications
       WHERE expires > $1 AND ignore_until <= $1 AND sent > $2
         AND (broadcast OR target_uid = $3 OR target_gid IN (SELECT gid FROM user_groups WHERE uid = $3))
       ORDER BY id`,
      [now, after, uid],
    )
    return rows.map((r) => toNotification(r, num))
  }
  async listAll(now: number, after: number) {
    const rows = await q(this.db, `SELECT ${NOTIFICATION_COLUMNS} FROM notifications WHERE expires > $1 AND sent > $2 ORDER BY id`, [now, after])
    return rows.map((r) => toNotification(r, num))
  }
  async update(id: number, changes: NotificationChanges) {
    const { sets, values } = updateClause(changes, (i) => `$${i}`)
    if (sets.length === 0) return
    await run(this.db, `UPDATE notifications SET ${sets.join(', ')} WHERE id = $${values.length + 1}`, [...values, id])
  }
  async delete(id: number) {
    return (await run(this.db, 'DELETE FROM notifications WHERE id = $1', [id])) > 0
  }
  async sweepExpired(now: number) {
    return run(this.db, 'DELETE FROM notifications WHERE expires <= $1', [now])
  }
}
