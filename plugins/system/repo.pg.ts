// Server-wide settings over PostgreSQL: the same contract as SqliteSettingsRepo (plugins/system/repo.ts).
import { type PgPool, q, run } from '../../server/pg'
import type { SettingsRepo } from './repo'

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
}
