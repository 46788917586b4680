// Per-user storage quotas (QUARRY_USER_QUOTA). What a user stores is computed from the store, never from process
// memory, so every replica sharing a store sees the same usage: the contents of the user's resources and user
// files, the results (plus their index) of the user's saved and imported searches, the text of the user's
// dashboards and library entries, and the entries the user ingested (server/search/entries.ts entryBytes). A search
// that is still SAVING counts once it is SAVED. Preferences (two JSON values per user, each bounded by
// QUARRY_MAX_BODY_SIZE) and search history are not counted.
//
// Guarantees:
// - A write that adds bytes to a user's items is refused (QuotaExceeded, 413 on the wire) when the owner's usage
//   after it would exceed the quota; a replacement counts its new size minus the old one, so shrinking is always
//   allowed, also for a user who is over the quota (after the quota was lowered).
// - The check that decides is made inside the transaction that commits the row (`checkQuotaSqlite` in the repos),
//   so two uploads that each fit the remaining quota cannot together exceed it. A streaming upload is also bounded
//   by the remaining quota while it streams (so nothing much larger is written first), and the blob of a refused
//   commit is deleted by its route.
//   On PostgreSQL (READ COMMITTED) two such transactions would each see the sum without the other's row: there the
//   guarded write first locks the owner's row (`lockOwner` in server/store/quota.pg.ts: FOR NO KEY UPDATE, which excludes
//   the other guarded writes but not the foreign-key checks of unrelated inserts), so commits for one owner run one
//   after the other. SQLite runs one write transaction at a time, which gives the same.
// - A running search's results are bounded by its owner's quota (server/search/manager.ts): they are working files,
//   not stored bytes, but a search that could never be saved has no reason to grow past it.
// - Items owned by an admin account are counted but never refused: the admin sets the quota and may delete any
//   item, so a quota on them would only stop the operator (decided in docs/security.md).
import type { Database } from 'bun:sqlite'
import type { Config } from '../runtime/config'
import { Errors } from '../http/errors'

/** Store-neutral refusal of a write that would take its owner over the quota (thrown by repos, like UniqueViolation). */
export class QuotaExceeded extends Error {
  override name = 'QuotaExceeded'
  constructor(
    readonly limit: number,
    /** Bytes the owner stores now, without the write. */
    readonly used: number,
    /** Bytes the write would add (its new size minus what it replaces). */
    readonly adding: number,
  ) {
    super(`storing ${adding} more bytes would exceed the storage quota of ${limit} bytes (${used} bytes in use)`)
  }
}

/**
 * A user's stored bytes, one row, five indexed sums (covering indexes of migration 009): contents of resources and
 * user files, results plus index of SAVED searches, and the text of dashboards and library entries (bounded per
 * request by QUARRY_MAX_BODY_SIZE, but not in number); and the running total of the entries the user ingested
 * (migration 018). Plain SQL; PostgreSQL runs it with `$1` for `?1`.
 */
export const USAGE_SQL = `SELECT
  (SELECT coalesce(sum(size), 0) FROM resources WHERE uid = ?1)
  + (SELECT coalesce(sum(size), 0) FROM user_files WHERE uid = ?1)
  + (SELECT coalesce(sum(store_size + index_size), 0) FROM saved_searches WHERE uid = ?1 AND state = 'saved')
  + (SELECT coalesce(sum(stored_bytes), 0) FROM dashboards WHERE uid = ?1)
  + (SELECT coalesce(sum(stored_bytes), 0) FROM library WHERE uid = ?1)
  + (SELECT coalesce(sum(bytes), 0) FROM ingest_usage WHERE uid = ?1) AS used`

/** The bytes a dashboard row stores (its stored_bytes column; migration 009 fills it the same way). */
export const DASHBOARD_BYTES_SQL = 'octet_length(name) + octet_length(description) + octet_length(labels) + octet_length(data)'
/** The bytes a library entry stores (its stored_bytes column). */
export const LIBRARY_BYTES_SQL =
  'octet_length(name) + octet_length(description) + octet_length(query) + octet_length(labels) + coalesce(octet_length(metadata), 0)'

export interface QuotaRepo {
  /** Bytes the user stores now (see USAGE_SQL). */
  usage(uid: number): Promise<number>
}

export function sqliteUsage(db: Database, uid: number): number {
  return db.query<{ used: number }, [number]>(USAGE_SQL).get(uid)?.used ?? 0
}

/**
 * The check a guarded repo write makes inside its transaction: throws QuotaExceeded when `adding` bytes (new size
 * minus old) would take the owner past `limit`. `limit` undefined: no quota for this write.
 */
export function checkQuotaSqlite(db: Database, uid: number, limit: number | undefined, adding: number): void {
  if (limit === undefined || adding <= 0) return
  const used = sqliteUsage(db, uid)
  if (used + adding > limit) throw new QuotaExceeded(limit, used, adding)
}

/**
 * The same check made after the write, in its transaction, for writes whose size the store computes (dashboards,
 * library): throwing rolls the write back. `adding`: the row's new stored bytes minus its old ones.
 */
export function checkQuotaAfterWriteSqlite(db: Database, uid: number, limit: number | undefined, adding: number): void {
  if (limit === undefined || adding <= 0) return
  const used = sqliteUsage(db, uid)
  if (used > limit) throw new QuotaExceeded(limit, used - adding, adding)
}

/** Runs a store write; an exceeded quota becomes 413 naming it (as conflictOnDuplicate does for 409). */
export async function quotaChecked<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write()
  } catch (e) {
    if (e instanceof QuotaExceeded) throw quotaRefusal(e)
    throw e
  }
}

export class SqliteQuotaRepo implements QuotaRepo {
  constructor(private readonly db: Database) {}
  async usage(uid: number) {
    return sqliteUsage(this.db, uid)
  }
}

/** The quota that binds an owner's items, and what they use now. */
export interface OwnerQuota {
  limit: number
  used: number
}

/**
 * The quota rules over the store, for routes and the search manager. `limitFor` answers undefined when nothing is
 * refused: no quota configured (QUARRY_USER_QUOTA=unlimited), or the owner is an admin.
 */
export class Quotas {
  constructor(
    private readonly config: Pick<Config, 'userQuotaBytes'>,
    private readonly store: { quota: QuotaRepo; users: { get(uid: number): Promise<{ admin: boolean } | undefined> } },
  ) {}

  async limitFor(owner: number | { admin: boolean }): Promise<number | undefined> {
    const limit = this.config.userQuotaBytes
    if (limit === undefined) return undefined
    const user = typeof owner === 'number' ? await this.store.users.get(owner) : owner
    return user?.admin ? undefined : limit
  }

  /** The owner's quota and usage; undefined when nothing is refused for this owner. */
  async of(uid: number, owner: number | { admin: boolean } = uid): Promise<OwnerQuota | undefined> {
    const limit = await this.limitFor(owner)
    if (limit === undefined) return undefined
    return { limit, used: await this.store.quota.usage(uid) }
  }

  /**
   * The largest size a new version of an item may have so that the owner stays within the quota: the room left
   * plus what the item holds now (`replacing`), and never less than that (shrinking is always allowed).
   * Infinity when nothing is refused.
   */
  static room(q: OwnerQuota | undefined, replacing = 0): number {
    if (!q) return Number.POSITIVE_INFINITY
    return Math.max(replacing, q.limit - q.used + replacing)
  }
}

/** The wire refusal for an exceeded quota: 413 naming the quota. */
export function quotaRefusal(e: QuotaExceeded) {
  return Errors.quotaExceeded(e.limit, e.used, e.adding)
}

/** An upload stopped by the quota while it streamed in: the same 413 (its full size is not known). */
export function quotaRefusalWhileStreaming(q: OwnerQuota) {
  return Errors.quotaExceeded(q.limit, q.used)
}
