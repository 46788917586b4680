// Server-wide settings kept in the store (the generated JWT signing key, for one).
import type { Database, Statement } from 'bun:sqlite'
import { MIGRATIONS } from '../../server/store/migrations'

export interface SettingsRepo {
  get(key: string): Promise<string | undefined>
  /** Stores the value unless the key is set already; answers the value that is stored afterwards. */
  setIfAbsent(key: string, value: string): Promise<string>
  /**
   * Whether every migration this server knows is applied: one query against the store, so it also shows the store
   * answers (a store that does not throws). `applied` and `known` are the newest versions, for the message.
   */
  migrationState(): Promise<{ current: boolean; applied: number; known: number }>
  /**
   * Throws the store's error unless it takes a write now: a row is written and rolled back, nothing is kept. Run
   * before serving, so a read-only store stops the start instead of failing every write later.
   */
  probeWrite(): Promise<void>
}

/** The newest migration this build knows. */
const KNOWN_VERSION = Math.max(0, ...MIGRATIONS.map((m) => m.version))

export class SqliteSettingsRepo implements SettingsRepo {
  private readonly getQ: Statement<{ value: string }, [string]>
  private readonly insertQ: Statement<unknown, [string, string]>
  constructor(private readonly db: Database) {
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
  async migrationState() {
    const row = this.db.query<{ v: number | null }, []>('SELECT MAX(version) AS v FROM schema_migrations').get()
    const applied = row?.v ?? 0
    return { current: applied === KNOWN_VERSION, applied, known: KNOWN_VERSION }
  }
  async probeWrite() {
    this.db.run('BEGIN IMMEDIATE')
    try {
      this.db.run("INSERT INTO server_settings (key, value) VALUES ('write_probe', '') ON CONFLICT (key) DO UPDATE SET value = excluded.value")
    } finally {
      this.db.run('ROLLBACK')
    }
  }
}
