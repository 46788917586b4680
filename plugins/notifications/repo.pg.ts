// Notifications over PostgreSQL: the same contract as SqliteNotificationsRepo (./repo.ts), for the PostgreSQL
// store (server/store.pg.ts: `notifications: new PgNotificationsRepo(sql)`; migration server/migrations-pg/012).
// Written before that store was merged, so it speaks to Bun.SQL directly through the few calls server/pg.ts wraps
// (`unsafe` with $n parameters, `begin` for a transaction); after the merge these can become pg.ts's q/run/num/tx.
import type { SQL } from 'bun'
import {
  INSERT_COLUMNS, NOTIFICATION_COLUMNS, type NewNotification, type NotificationChanges, type NotificationDbRow, type NotificationsRepo,
  insertValues, toNotification, updateClause,
} from './repo'

type Pg = Pick<SQL, 'unsafe'>

/** BIGINT arrives as a decimal string; every one stored here (ids, times in ms, a uint32) is a safe integer. */
function num(v: unknown): number {
  const n = typeof v === 'number' ? v : Number(v as string)
  if (!Number.isSafeInteger(n)) throw new Error(`the store answered ${String(v)} where a safe integer was expected`)
  return n
}

async function q(db: Pg, text: string, params: unknown[] = []): Promise<NotificationDbRow[]> {
  return (await db.unsafe(text, params as never[])) as unknown as NotificationDbRow[]
}

async function run(db: Pg, text: string, params: unknown[] = []): Promise<number> {
  return ((await db.unsafe(text, params as never[])) as unknown as { count: number }).count ?? 0
}

/**
 * The advisory lock class of a sender's count (the two-key form: this class, the sender's UID). Under READ
 * COMMITTED two replicas could both count below the limit and both insert; the transaction-scoped lock makes the
 * count and the insert of one sender one step across the cluster, and leaves every other sender unblocked.
 */
const SENDER_LOCK = 0x4e_6f_74_66 // "Notf"

export class PgNotificationsRepo implements NotificationsRepo {
  constructor(private readonly db: SQL) {}

  async create(n: NewNotification, limit: number, now: number) {
    return (await this.db.begin(async (t) => {
      await t.unsafe('SELECT pg_advisory_xact_lock($1, $2)', [SENDER_LOCK, n.sender])
      const [c] = (await t.unsafe('SELECT COUNT(*) AS n FROM notifications WHERE sender = $1 AND expires > $2', [n.sender, now])) as { n: unknown }[]
      if (num(c!.n) >= limit) return undefined
      const [r] = (await t.unsafe(
        `INSERT INTO notifications (${INSERT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id`,
        insertValues(n, n.broadcast) as never[],
      )) as { id: unknown }[]
      return num(r!.id)
    })) as number | undefined
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
