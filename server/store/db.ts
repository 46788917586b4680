// The embedded SQLite store: WAL, foreign keys, a busy timeout for concurrent writers, migrations at start.
import { Database } from 'bun:sqlite'
import { MIGRATIONS } from './migrations'
import { UniqueViolation } from './unique'
import { ensurePrivateFile } from '../runtime/datadir'

/**
 * `migrate: false` opens an existing store as it is (the offline admin tools: they must not change the schema of a
 * store a running server of another version uses); the caller checks `settings.migrationState()` itself.
 */
export function openDatabase(path: string, opts: { migrate?: boolean } = {}): Database {
  // Made private before SQLite opens it: the store holds the JWT signing key, and SQLite gives -wal and -shm its mode.
  if (path !== ':memory:') ensurePrivateFile(path)
  const db = new Database(path, { create: true, strict: true })
  // First: switching a new file to WAL takes a lock that another process opening it at the same moment may hold.
  db.run('PRAGMA busy_timeout = 5000')
  db.run('PRAGMA journal_mode = WAL')
  db.run('PRAGMA synchronous = NORMAL')
  db.run('PRAGMA foreign_keys = ON')
  // The WAL file is cut back to this size at each checkpoint (without it, it stays at its high-water mark: the size
  // of the largest burst of writes between two checkpoints).
  db.run(`PRAGMA journal_size_limit = ${WAL_SIZE_LIMIT}`)
  if (opts.migrate !== false) {
    useIncrementalVacuum(db)
    migrate(db)
  }
  return db
}

/** Bytes the WAL file keeps after a checkpoint. */
export const WAL_SIZE_LIMIT = 64 << 20
/**
 * A store in SQLite's default (no auto-vacuum) is rewritten once at start (VACUUM) to switch it to incremental
 * vacuum, when it holds at most this much; a larger one keeps its mode, as a VACUUM takes as long as a copy of the
 * file, with twice its space, before the server answers (docs/operations.md says how to switch it offline).
 */
export const VACUUM_AT_START_MAX_BYTES = 256 << 20

/**
 * Makes the file give back the pages compaction frees (`reclaimSpace`): `auto_vacuum = INCREMENTAL` holds from the
 * creation of a new store, and an existing one switches with one VACUUM (see VACUUM_AT_START_MAX_BYTES).
 */
function useIncrementalVacuum(db: Database): void {
  if (db.query<{ auto_vacuum: number }, []>('PRAGMA auto_vacuum').get()?.auto_vacuum === INCREMENTAL) return
  db.run(`PRAGMA auto_vacuum = ${INCREMENTAL}`)
  // A new (empty) file takes the mode at once; an existing one only through a VACUUM.
  const size = db.query<{ n: number }, []>('SELECT page_count * page_size AS n FROM pragma_page_count(), pragma_page_size()').get()!.n
  if (size > 0 && size <= VACUUM_AT_START_MAX_BYTES) db.run('VACUUM')
}

const INCREMENTAL = 2

/** Pages one step of reclaimSpace gives back (4 KiB each): a bounded write transaction, then other writers go. */
const RECLAIM_PAGES_PER_STEP = 2048

/**
 * Gives the free pages of the file back to the file system (after compaction deleted rows), in steps of
 * RECLAIM_PAGES_PER_STEP with the event loop free between them. Nothing on a store not in incremental mode.
 * Answers the pages given back.
 */
export async function reclaimSpace(db: Database): Promise<number> {
  if (db.query<{ auto_vacuum: number }, []>('PRAGMA auto_vacuum').get()?.auto_vacuum !== INCREMENTAL) return 0
  let freed = 0
  for (;;) {
    const free = db.query<{ freelist_count: number }, []>('PRAGMA freelist_count').get()!.freelist_count
    if (free === 0) break
    const step = Math.min(free, RECLAIM_PAGES_PER_STEP)
    db.run(`PRAGMA incremental_vacuum(${step})`)
    freed += step
    await new Promise((resolve) => setTimeout(resolve, 0))
  }
  // The main file shrinks at the checkpoint that copies the vacuum's pages back: tried now (without waiting for readers).
  if (freed > 0) db.run('PRAGMA wal_checkpoint(PASSIVE)')
  return freed
}

/**
 * Applies the missing migrations, each in its own IMMEDIATE transaction that reads what is applied inside it: two
 * processes migrating one store together (`quarry migrate` beside a starting server) apply each migration once, the
 * second waiting (busy_timeout) and then finding it done. Answers the migrations this call applied.
 */
export function migrate(db: Database): { version: number; name: string }[] {
  const known = Math.max(0, ...MIGRATIONS.map((m) => m.version))
  // The usual start, on a current store: one read, no write lock, no transaction (bench/README.md, cold start).
  if (isCurrent(db)) return []
  db.run('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied INTEGER NOT NULL)')
  const done: { version: number; name: string }[] = []
  for (;;) {
    const next = db
      .transaction(() => {
        const applied = new Set(db.query<{ version: number }, []>('SELECT version FROM schema_migrations').all().map((r) => r.version))
        const newest = Math.max(0, ...applied)
        if (newest > known) throw new Error(`the store has schema version ${newest}, newer than this server knows (${known})`)
        const m = MIGRATIONS.find((m) => !applied.has(m.version))
        if (!m) return undefined
        db.run(m.sql)
        db.run('INSERT INTO schema_migrations (version, name, applied) VALUES (?, ?, ?)', [m.version, m.name, Date.now()])
        return m
      })
      .immediate()
    if (!next) return done
    done.push({ version: next.version, name: next.name })
  }
}

/** Whether the store has exactly the migrations this server knows applied (one query). */
function isCurrent(db: Database): boolean {
  let row: { versions: string | null } | null
  try {
    row = db.query<{ versions: string | null }, []>('SELECT group_concat(version ORDER BY version) AS versions FROM schema_migrations').get()
  } catch (e) {
    if (/no such table/.test((e as Error).message)) return false // a new store
    throw e
  }
  return row?.versions === KNOWN_VERSIONS
}

const KNOWN_VERSIONS = MIGRATIONS.map((m) => m.version)
  .sort((a, b) => a - b)
  .join(',')

/** Runs a write and turns SQLite's unique-constraint failure into the store-neutral UniqueViolation. */
export function uniqueWrite<T>(write: () => T): T {
  try {
    return write()
  } catch (e) {
    if (e instanceof Error && (e as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw new UniqueViolation(e.message)
    throw e
  }
}
