// Leases of the periodic jobs (server/runtime/jobs.ts): exactly one holder per job at a time, on one process or many
// replicas. A lease is taken or renewed by one atomic statement that succeeds only when the lease is free, expired
// or already the caller's, so two replicas asking together never both hold it. A holder that dies stops renewing;
// once `expires_at` passes, the next replica to ask takes it over.
import type { Database } from 'bun:sqlite'

export interface LeaseRow {
  name: string
  holder: string
  /** Ms since the epoch (the store's clock). */
  expiresAt: number
  /** When the job last ran to its end, well or not (any holder); 0: never. */
  lastRun: number
}

export interface LeasesRepo {
  /**
   * Takes lease `name` for `holder` until ttlMs from now when nobody holds it, its holder let it expire, or `holder`
   * holds it already (a renewal). Answers when the job last ran and the store's time now; undefined when another
   * holder has it.
   */
  acquire(name: string, holder: string, ttlMs: number): Promise<{ lastRun: number; now: number } | undefined>
  /** Records that the job ran now (well or not); only while `holder` holds the lease (one that lost it records nothing). */
  ran(name: string, holder: string): Promise<void>
  /** Gives the lease up at once (a clean shutdown), so another replica need not wait for it to expire. */
  release(name: string, holder: string): Promise<void>
  list(): Promise<LeaseRow[]>
}

/**
 * The SQLite store has one process (the data directory is locked), which always gets its lease; it goes through the
 * same statements as PostgreSQL so that one scheduler serves both.
 */
export class SqliteLeasesRepo implements LeasesRepo {
  constructor(private readonly db: Database) {}
  async acquire(name: string, holder: string, ttlMs: number) {
    const now = Date.now()
    const row = this.db
      .query<{ last_run: number }, [string, string, number, number]>(
        `INSERT INTO leases (name, holder, expires_at) VALUES (?1, ?2, ?3 + ?4)
         ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
         WHERE leases.holder = excluded.holder OR leases.expires_at <= ?3
         RETURNING last_run`,
      )
      .get(name, holder, now, ttlMs)
    return row ? { lastRun: row.last_run, now } : undefined
  }
  async ran(name: string, holder: string) {
    this.db.query('UPDATE leases SET last_run = ?3 WHERE name = ?1 AND holder = ?2').run(name, holder, Date.now())
  }
  async release(name: string, holder: string) {
    this.db.query('UPDATE leases SET expires_at = 0 WHERE name = ?1 AND holder = ?2').run(name, holder)
  }
  async list() {
    return this.db
      .query<{ name: string; holder: string; expires_at: number; last_run: number }, []>('SELECT name, holder, expires_at, last_run FROM leases ORDER BY name')
      .all()
      .map((r) => ({ name: r.name, holder: r.holder, expiresAt: r.expires_at, lastRun: r.last_run }))
  }
}
