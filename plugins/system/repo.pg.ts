// Server-wide settings over PostgreSQL: the same contract as SqliteSettingsRepo (plugins/system/repo.ts).
import { type PgPool, q, run } from '../../server/store/pg'
import { PG_MIGRATIONS } from '../../server/store/migrations-pg'
import type { SettingsRepo } from './repo'

/** The newest migration this build knows. */
const KNOWN_VERSION = Math.max(0, ...PG_MIGRATIONS.map((m) => m.version))

export class PgSettingsRepo implements SettingsRepo {
  constructor(private readonly db: PgPool) {}
  async get(key: string) {
    return (await q<{ value: string }>(this.db, 'SELECT value FROM server_settings WHERE key = $1', [key]))[0]?.value
  }
  async setIfAbsent(key: string, value: string) {
    // Replicas starting together race here: the first insert wins and every one answers the stored value.
    await run(this.db, 'INSERT INTO server_settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [key, value])
    return (await this.get(key))!
  }
  async migrationState() {
    const [row] = await q<{ v: number | null }>(this.db, 'SELECT MAX(version) AS v FROM schema_migrations')
    const applied = row?.v ?? 0
    return { current: applied === KNOWN_VERSION, applied, known: KNOWN_VERSION }
  }
  /** A row written and rolled back: fails on a read-only server or a role without write rights. */
  async probeWrite() {
    await this.db
      .begin(async (t) => {
        await t.unsafe(
          "INSERT INTO server_settings (key, value) VALUES ('write_probe', '') ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )
        throw ROLLBACK
      })
      .catch((e: unknown) => {
        if (e !== ROLLBACK) throw e
      })
  }
}

const ROLLBACK = Symbol('rollback the write probe')
