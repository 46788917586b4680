// Server-wide settings kept in the store (the generated JWT signing key, for one).
import type { Database, Statement } from 'bun:sqlite'

export interface SettingsRepo {
  get(key: string): Promise<string | undefined>
  /** Stores the value unless the key is set already; answers the value that is stored afterwards. */
  setIfAbsent(key: string, value: string): Promise<string>
}

export class SqliteSettingsRepo implements SettingsRepo {
  private readonly getQ: Statement<{ value: string }, [string]>
  private readonly insertQ: Statement<unknown, [string, string]>
  constructor(db: Database) {
    this.getQ = db.query('SELECT value FROM server_settings WHERE key = ?')
    this.insertQ = db.query('INSERT OR IGNORE INTO server_settings (key, value) VALUES (?, ?)')
  }
  async get(key: string) {
    return this.getQ.get(key)?.value
  }
  async setIfAbsent(key: string, value: string) {
    this.insertQ.run(key, value)
    return this.getQ.get(key)!.value
  }
}
