// Notifications over SQLite. Plain objects in and out; no HTTP here. Times are ms since the epoch, 0 unset.
import type { Database, Statement } from 'bun:sqlite'

export interface NotificationRow {
  id: number
  /** The UID that sent it. */
  sender: number
  /** Exactly one of: broadcast, uid > 0 (one user), gid > 0 (one group). */
  broadcast: boolean
  uid: number
  gid: number
  /** The client's own number for the kind of notification (Go's uint32 `Type`); 0: none. */
  type: number
  level: string
  link: string
  msg: string
  sent: number
  /** Always set: a notification without one gets the default lifetime when sent. */
  expires: number
  /** Hidden from its recipients' listings until then; 0: not hidden. */
  ignoreUntil: number
}

export type NewNotification = Omit<NotificationRow, 'id'>
export type NotificationChanges = Partial<Pick<NotificationRow, 'type' | 'level' | 'link' | 'msg' | 'expires' | 'ignoreUntil'>>

export interface NotificationsRepo {
  /**
   * Stores the notification unless its sender already has `limit` unexpired ones at `now`; the check and the insert
   * are one atomic step, so concurrent creates (on any replica) cannot pass the limit together. Answers the new id,
   * or undefined when at the limit.
   */
  create(n: NewNotification, limit: number, now: number): Promise<number | undefined>
  get(id: number): Promise<NotificationRow | undefined>
  /**
   * What `uid` is shown at `now`: unexpired, not ignored, sent after `after`, and broadcast, sent to `uid`, or sent
   * to a group `uid` is a member of. In id order.
   */
  listFor(uid: number, now: number, after: number): Promise<NotificationRow[]>
  /** Every unexpired notification sent after `after`, ignored ones too (the admin view). In id order. */
  listAll(now: number, after: number): Promise<NotificationRow[]>
  update(id: number, changes: NotificationChanges): Promise<void>
  delete(id: number): Promise<boolean>
  /** Deletes every notification expired at `now`; answers how many. Idempotent, so any replica may run it. */
  sweepExpired(now: number): Promise<number>
}

export interface NotificationDbRow {
  id: number
  sender: number
  broadcast: number | boolean
  target_uid: number | null
  target_gid: number | null
  type: number
  level: string
  link: string
  msg: string
  sent: number
  expires: number
  ignore_until: number
}

export const NOTIFICATION_COLUMNS = 'id, sender, broadcast, target_uid, target_gid, type, level, link, msg, sent, expires, ignore_until'

/** `num` turns the store's integers (PostgreSQL's BIGINT arrive as strings) into numbers. */
export function toNotification(r: NotificationDbRow, num: (v: unknown) => number = Number): NotificationRow {
  return {
    id: num(r.id),
    sender: num(r.sender),
    broadcast: r.broadcast === true || Number(r.broadcast) !== 0,
    uid: r.target_uid === null ? 0 : num(r.target_uid),
    gid: r.target_gid === null ? 0 : num(r.target_gid),
    type: num(r.type),
    level: r.level,
    link: r.link,
    msg: r.msg,
    sent: num(r.sent),
    expires: num(r.expires),
    ignoreUntil: num(r.ignore_until),
  }
}

type Value = string | number | boolean | null

/** The SET clause of an update, with `param(i)` writing the i-th (1-based) placeholder of the dialect. */
export function updateClause(changes: NotificationChanges, param: (i: number) => string): { sets: string[]; values: Value[] } {
  const sets: string[] = []
  const values: Value[] = []
  const set = (column: string, v: Value) => (values.push(v), sets.push(`${column} = ${param(values.length)}`))
  if (changes.type !== undefined) set('type', changes.type)
  if (changes.level !== undefined) set('level', changes.level)
  if (changes.link !== undefined) set('link', changes.link)
  if (changes.msg !== undefined) set('msg', changes.msg)
  if (changes.expires !== undefined) set('expires', changes.expires)
  if (changes.ignoreUntil !== undefined) set('ignore_until', changes.ignoreUntil)
  return { sets, values }
}

/** The insert's values in NOTIFICATION_COLUMNS order, without the id. */
export function insertValues(n: NewNotification, broadcast: number | boolean): Value[] {
  return [n.sender, broadcast, n.uid || null, n.gid || null, n.type, n.level, n.link, n.msg, n.sent, n.expires, n.ignoreUntil]
}

export const INSERT_COLUMNS = NOTIFICATION_COLUMNS.replace('id, ', '')

export class SqliteNotificationsRepo implements NotificationsRepo {
  private readonly q: {
    insert: Statement<unknown, Value[]>
    get: Statement<NotificationDbRow, [number]>
    listFor: Statement<NotificationDbRow, [number, number, number, number, number]>
    listAll: Statement<NotificationDbRow, [number, number]>
    del: Statement<unknown, [number]>
    sweep: Statement<unknown, [number]>
  }

  constructor(private readonly db: Database) {
    this.q = {
      // One statement: SQLite runs it under the database's write lock, so the count and the insert are atomic.
      insert: db.query(
        `INSERT INTO notifications (${INSERT_COLUMNS})
         SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
         WHERE (SELECT COUNT(*) FROM notifications WHERE sender = ? AND expires > ?) < ?`,
      ),
      get: db.query(`SELECT ${NOTIFICATION_COLUMNS} FROM notifications WHERE id = ?`),
      listFor: db.query(
        `SELECT ${NOTIFICATION_COLUMNS} FROM notifications
         WHERE expires > ? AND ignore_until <= ? AND sent > ?
           AND (broadcast <> 0 OR target_uid = ? OR target_gid IN (SELECT gid FROM user_groups WHERE uid = ?))
         ORDER BY id`,
      ),
      listAll: db.query(`SELECT ${NOTIFICATION_COLUMNS} FROM notifications WHERE expires > ? AND sent > ? ORDER BY id`),
      del: db.query('DELETE FROM notifications WHERE id = ?'),
      sweep: db.query('DELETE FROM notifications WHERE expires <= ?'),
    }
  }

  async create(n: NewNotification, limit: number, now: number) {
    const r = this.q.insert.run(...insertValues(n, n.broadcast ? 1 : 0), n.sender, now, limit)
    return r.changes > 0 ? Number(r.lastInsertRowid) : undefined
  }
  async get(id: number) {
    const r = this.q.get.get(id)
    return r ? toNotification(r) : undefined
  }
  async listFor(uid: number, now: number, after: number) {
    return this.q.listFor.all(now, now, after, uid, uid).map((r) => toNotification(r))
  }
  async listAll(now: number, after: number) {
    return this.q.listAll.all(now, after).map((r) => toNotification(r))
  }
  async update(id: number, changes: NotificationChanges) {
    const { sets, values } = updateClause(changes, () => '?')
    if (sets.length === 0) return
    this.db.run(`UPDATE notifications SET ${sets.join(', ')} WHERE id = ?`, [...values, id])
  }
  async delete(id: number) {
    return this.q.del.run(id).changes > 0
  }
  async sweepExpired(now: number) {
    return this.q.sweep.run(now).changes
  }
}
