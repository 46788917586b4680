// The data directory: private to the account that runs Quarry (it holds the JWT signing key and the session ids,
// so a reader could forge an admin JWT), and used by one server at a time (a second one would delete the first
// one's live search files at start, and both would migrate and sweep the same store).
import { Database } from 'bun:sqlite'
import { chmodSync, closeSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { chmod, lstat, readdir } from 'node:fs/promises'
import { join } from 'node:path'

/** Directories Quarry makes: only its own account may list or enter them. */
export const PRIVATE_DIR_MODE = 0o700
/** Files Quarry makes: only its own account may read or write them. */
export const PRIVATE_FILE_MODE = 0o600
/** What the server sets at start, so that every file and directory made later is private too (also by libraries). */
export const PRIVATE_UMASK = 0o077

/** Creates `path` as an empty private file unless it exists (so that SQLite, which gives -wal/-shm its mode, opens it). */
export function ensurePrivateFile(path: string): void {
  closeSync(openSync(path, 'a', PRIVATE_FILE_MODE))
}

export interface Tightened {
  /** The directory's own mode before, as octal text (e.g. "755"). */
  was: string
  dirs: number
  files: number
}

/**
 * Makes the data directory (0700) if it is missing, and tightens what is there: every directory to 0700 and every
 * file to 0600 when other accounts had any access to it. Symbolic links are left alone (never followed out of
 * the directory). Answers what was tightened, or undefined when nothing was.
 */
export function secureDataDir(dir: string): Tightened | undefined {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE })
  const was = lstatSync(dir).mode & 0o777
  const count = { dirs: 0, files: 0 }
  const walk = (path: string) => {
    const s = lstatSync(path)
    if (s.isSymbolicLink()) return
    const loose = (s.mode & 0o077) !== 0
    if (s.isDirectory()) {
      if (loose) {
        chmodSync(path, PRIVATE_DIR_MODE)
        count.dirs++
      }
      for (const name of readdirSync(path)) walk(join(path, name))
    } else if (loose) {
      chmodSync(path, PRIVATE_FILE_MODE)
      count.files++
    }
  }
  walk(dir)
  return count.dirs + count.files > 0 ? { was: was.toString(8), ...count } : undefined
}

/**
 * Whether the data directory exists as a private directory (0700 or tighter; not a link). Then no other account can
 * reach anything in it whatever its modes, so the walk over its contents (one lstat per blob: ~50 ms per 20,000
 * files, seconds for a large store) need not hold up the start: the server runs secureDataDirContents after it
 * listens (bench/README.md, cold start). A missing or looser directory is tightened whole before anything is read.
 */
export function isPrivateDir(dir: string): boolean {
  try {
    const s = lstatSync(dir)
    return s.isDirectory() && (s.mode & 0o077) === 0
  } catch {
    return false
  }
}

/** secureDataDir's walk over what a private data directory holds, without blocking: answers what it tightened. */
export async function secureDataDirContents(dir: string): Promise<Tightened | undefined> {
  const count = { dirs: 0, files: 0 }
  const walk = async (path: string): Promise<void> => {
    let s
    try {
      s = await lstat(path)
    } catch {
      return // removed meanwhile (a finished upload's temporary file, a search's working file)
    }
    if (s.isSymbolicLink()) return
    const loose = (s.mode & 0o077) !== 0
    if (s.isDirectory()) {
      if (loose) {
        await chmod(path, PRIVATE_DIR_MODE)
        count.dirs++
      }
      const names = await readdir(path).catch(() => [] as string[])
      for (const name of names) await walk(join(path, name))
    } else if (loose) {
      await chmod(path, PRIVATE_FILE_MODE).catch(() => undefined)
      count.files++
    }
  }
  const was = (await lstat(dir)).mode & 0o777
  await walk(dir)
  return count.dirs + count.files > 0 ? { was: was.toString(8), ...count } : undefined
}

/** Another server holds the data directory; `holder` says which, as far as it wrote it down. */
export class DataDirBusyError extends Error {
  constructor(
    readonly dir: string,
    readonly holder: string,
  ) {
    super(`the data directory ${dir} is in use by another Quarry server (${holder})`)
  }
}

export interface DataDirLock {
  /** Writes who holds the lock (this process, and where it listens) for a server that finds the directory busy. */
  describe(address: string): void
  /** Lets go of the directory (the process ending does the same). */
  release(): void
}

const LOCK_FILE = 'quarry.lock'
/** Who holds the lock: written by the holder only, read by a server that finds the directory busy. */
const HOLDER_FILE = 'quarry.pid'

/**
 * Takes the data directory for this process, or throws DataDirBusyError naming the holder. The lock is an exclusive
 * SQLite transaction on `quarry.lock`, held for the life of the connection: a lock of the operating system's
 * (fcntl), so it goes with the process however it ends (a SIGKILLed server leaves nothing that blocks the next
 * start), and it works wherever the store itself works. Nothing else in the directory is touched before it is held.
 */
export function lockDataDir(dir: string): DataDirLock {
  const lockPath = join(dir, LOCK_FILE)
  const holderPath = join(dir, HOLDER_FILE)
  ensurePrivateFile(lockPath)
  const db = new Database(lockPath)
  try {
    db.run('PRAGMA busy_timeout = 0')
    db.run('PRAGMA locking_mode = EXCLUSIVE')
    db.run('BEGIN EXCLUSIVE')
  } catch (e) {
    db.close()
    if ((e as { code?: string }).code !== 'SQLITE_BUSY') throw e
    throw new DataDirBusyError(dir, describeHolder(holderPath))
  }
  const started = new Date().toISOString()
  const write = (address: string) =>
    writeFileSync(holderPath, `${JSON.stringify({ pid: process.pid, address, started })}\n`, { mode: PRIVATE_FILE_MODE })
  write('')
  let held = true
  return {
    describe: write,
    release() {
      if (!held) return
      held = false
      rmSync(holderPath, { force: true })
      db.close()
    },
  }
}

function describeHolder(path: string): string {
  try {
    const h = JSON.parse(readFileSync(path, 'utf8')) as { pid?: unknown; address?: unknown; started?: unknown }
    const where = typeof h.address === 'string' && h.address ? `, listening on ${h.address}` : ''
    return `pid ${h.pid}${where}, since ${h.started}`
  } catch {
    return 'pid unknown'
  }
}

const REPLICA_ID_FILE = 'replica-id'

/**
 * This data directory's name among the replicas of one PostgreSQL database (the holder of periodic-job leases, the
 * sender of cluster events): made once and kept in the directory, so a replica restarted after a crash is the same
 * holder and takes its leases back at once instead of waiting for them to expire. Only one process uses a directory
 * at a time (the lock above, which the caller holds), so no two live processes share a name.
 */
export function replicaId(dir: string): string {
  const path = join(dir, REPLICA_ID_FILE)
  try {
    const kept = readFileSync(path, 'utf8').trim()
    if (/^[0-9a-f-]{36}$/.test(kept)) return kept
  } catch {
    // none yet
  }
  const id = crypto.randomUUID()
  writeFileSync(path, `${id}\n`, { mode: PRIVATE_FILE_MODE })
  return id
}
