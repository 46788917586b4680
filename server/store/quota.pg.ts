// Per-user storage quotas over PostgreSQL: the same rules as server/store/quota.ts, for the PostgreSQL repos.
//
// Under READ COMMITTED two transactions that each add bytes for one owner would each sum the usage without the
// other's uncommitted row, and both pass. So a guarded write first locks the owner's users row (`lockOwner`), in its
// own transaction, before it sums: guarded writes for one owner then commit one after the other, each summing what
// the previous ones committed (every statement of READ COMMITTED sees the commits made before it started), on every
// replica of the store. Writes without a quota (no QUARRY_USER_QUOTA, admin owners) take no lock.
import { type Pg, type PgPool, num, q } from './pg'
import { type QuotaRepo, QuotaExceeded, USAGE_SQL } from './quota'

const USAGE_PG = USAGE_SQL.replaceAll('?1', '$1')

/** Bytes the user stores now, as seen by this statement. */
export async function pgUsage(db: Pg, uid: number): Promise<number> {
  const [r] = await q<{ used: unknown }>(db, USAGE_PG, [uid])
  return r ? num(r.used) : 0
}

/**
 * Locks the owner's users row until the transaction ends (see above). Take it before reading anything the check
 * depends on. A deleted owner has no row to lock: the write then fails on its foreign key, as without a quota.
 */
export async function lockOwner(t: Pg, uid: number): Promise<void> {
  await q(t, 'SELECT 1 AS one FROM users WHERE uid = $1 FOR NO KEY UPDATE', [uid])
}

/**
 * checkQuotaSqlite for PostgreSQL: throws QuotaExceeded when `adding` bytes would take the owner past `limit`.
 * The caller holds lockOwner(uid) in the same transaction.
 */
export async function checkQuotaPg(t: Pg, uid: number, limit: number | undefined, adding: number): Promise<void> {
  if (limit === undefined || adding <= 0) return
  const used = await pgUsage(t, uid)
  if (used + adding > limit) throw new QuotaExceeded(limit, used, adding)
}

/** checkQuotaAfterWriteSqlite for PostgreSQL: the write (of `adding` bytes) is already in the usage; throwing rolls it back. */
export async function checkQuotaAfterWritePg(t: Pg, uid: number, limit: number | undefined, adding: number): Promise<void> {
  if (limit === undefined || adding <= 0) return
  const used = await pgUsage(t, uid)
  if (used > limit) throw new QuotaExceeded(limit, used - adding, adding)
}

export class PgQuotaRepo implements QuotaRepo {
  constructor(private readonly db: PgPool) {}
  async usage(uid: number) {
    return pgUsage(this.db, uid)
  }
}
