// Leases over PostgreSQL: the same contract as SqliteLeasesRepo (server/store/leases.ts). Time is the database server's
// (clock_timestamp()), so replicas whose clocks disagree still agree on when a lease expires. Two replicas taking one
// lease at once meet on its row: the second waits for the first's statement, then re-checks the WHERE against the
// row the first committed (now held and unexpired), and gets nothing.
import { type PgPool, num, q, run } from './pg'
import type { LeasesRepo } from './leases'

const NOW_MS = '(extract(epoch FROM clock_timestamp()) * 1000)::bigint'

export class PgLeasesRepo implements LeasesRepo {
  constructor(private readonly db: PgPool) {}
  async acquire(name: string, holder: string, ttlMs: number) {
    const [r] = await q(
      this.db,
      `WITH clock AS (SELECT ${NOW_MS} AS t)
       INSERT INTO leases (name, holder, expires_at) SELECT $1::text, $2::text, t + $3::bigint FROM clock
       ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
       WHERE leases.holder = excluded.holder OR leases.expires_at <= (SELECT t FROM clock)
       RETURNING last_run, (SELECT t FROM clock) AS now`,
      [name, holder, ttlMs],
    )
    return r ? { lastRun: num(r.last_run), now: num(r.now) } : undefined
  }
  async ran(name: string, holder: string) {
    await run(this.db, `UPDATE leases SET last_run = ${NOW_MS} WHERE name = $1 AND holder = $2`, [name, holder])
  }
  async release(name: string, holder: string) {
    await run(this.db, 'UPDATE leases SET expires_at = 0 WHERE name = $1 AND holder = $2', [name, holder])
  }
  async list() {
    return (await q(this.db, 'SELECT name, holder, expires_at, last_run FROM leases ORDER BY name')).map((r) => ({
      name: r.name as string,
      holder: r.holder as string,
      expiresAt: num(r.expires_at),
      lastRun: num(r.last_run),
    }))
  }
}
