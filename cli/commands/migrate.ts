// `quarry migrate`: applies the store's missing migrations without serving, on the server's host or anywhere that
// reaches its PostgreSQL database. Configured like the server, by its QUARRY_* variables (QUARRY_DATA_DIR for
// SQLite, QUARRY_DATABASE_URL for PostgreSQL; the blob store is not needed). The upgrade of a cluster runs it once,
// before the replicas of the new version start (docs/cluster.md).
// Safe when run concurrently, with other `quarry migrate`s or with starting servers: on PostgreSQL each migration is
// applied under the cluster's advisory lock, on SQLite in an IMMEDIATE transaction; either way each migration is
// applied once and the others find it done. A store newer than this quarry is refused, never changed.
// A QUARRY_DATA_DIR that holds no store is refused too (a mistyped path must say so, not make a new empty store
// beside the real one, as `admin reset-password` refuses it); --create makes the store there on purpose.
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError, type Config, loadConfig } from '../../server/runtime/config'
import { PRIVATE_DIR_MODE, PRIVATE_UMASK } from '../../server/runtime/datadir'
import { migrate, openDatabase } from '../../server/store/db'
import { migratePg, openPg, redact } from '../../server/store/pg'
import { command } from '../command'
import { output } from '../context'
import { CliError, UsageError } from '../errors'

type Applied = { version: number; name: string }[]

async function migrateStore(config: Config, create: boolean): Promise<{ where: string; applied: Applied; version: number; created: boolean }> {
  if (config.databaseUrl) {
    const where = `the PostgreSQL store at ${redact(config.databaseUrl)}`
    let sql
    try {
      sql = await openPg(config.databaseUrl, { max: 1 })
    } catch (e) {
      throw new CliError(`cannot open ${where}: ${firstLine(e)}`)
    }
    try {
      const applied = await migratePg(sql)
      const [row] = (await sql.unsafe('SELECT MAX(version) AS v FROM schema_migrations')) as { v: number }[]
      return { where, applied, version: Number(row?.v ?? 0), created: false }
    } catch (e) {
      throw new CliError(`cannot migrate ${where}: ${firstLine(e)}`)
    } finally {
      await sql.close()
    }
  }
  const path = join(config.dataDir, 'quarry.db')
  const where = `the SQLite store ${path}`
  const created = !existsSync(path)
  if (created && !create)
    throw new CliError(`no Quarry store in ${config.dataDir} (set QUARRY_DATA_DIR to the server's data directory, or pass --create to make a new store there)`)
  process.umask(PRIVATE_UMASK)
  try {
    mkdirSync(config.dataDir, { recursive: true, mode: PRIVATE_DIR_MODE })
    const db = openDatabase(path, { migrate: false })
    try {
      const applied = migrate(db)
      const row = db.query<{ v: number | null }, []>('SELECT MAX(version) AS v FROM schema_migrations').get()
      return { where, applied, version: row?.v ?? 0, created }
    } finally {
      db.close()
    }
  } catch (e) {
    throw new CliError(`cannot migrate ${where}: ${firstLine(e)}`)
  }
}

function firstLine(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0]!
}

export default command({
  name: 'migrate',
  description: "Apply the store's missing migrations without serving (SQLite in QUARRY_DATA_DIR, or PostgreSQL at QUARRY_DATABASE_URL)",
  examples: [
    'QUARRY_DATA_DIR=/var/lib/quarry quarry migrate',
    'QUARRY_DATA_DIR=/var/lib/quarry quarry migrate --create     # a new, empty store',
    'QUARRY_DATABASE_URL=postgres://quarry:secret@db:5432/quarry quarry migrate --json',
  ],
  args: {
    create: { type: 'boolean', description: 'Make a new, empty SQLite store when QUARRY_DATA_DIR holds none (without it, that is refused: a mistyped path)' },
  },
  async run({ args }) {
    let config: Config
    try {
      config = loadConfig(process.env).config
    } catch (e) {
      if (e instanceof ConfigError) throw new UsageError(`invalid configuration: ${e.message}`)
      throw e
    }
    const { where, applied, version, created } = await migrateStore(config, Boolean(args.create))
    output().result(
      { Store: where, Created: created, Applied: applied.map((m) => ({ Version: m.version, Name: m.name })), SchemaVersion: version },
      () =>
        applied.length === 0
          ? `quarry: ${where} is up to date (schema version ${version}); nothing applied`
          : `quarry: applied ${applied.length} migration(s) to ${created ? 'the new' : 'the'} ${where.replace(/^the /, '')}: ${applied.map((m) => `${m.version} ${m.name}`).join(', ')}; schema version ${version}`,
    )
  },
})
