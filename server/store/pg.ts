// The PostgreSQL store's connection and schema: a Bun.SQL pool, migrations applied once per cluster, and the
// mapping of PostgreSQL's errors and types onto what the repositories promise.
import { SQL } from 'bun'
import { PG_MIGRATIONS } from './migrations-pg'
import { UniqueViolation } from './unique'

/** What the repositories run SQL through: the pool, or one transaction of it (both have `unsafe`). */
export type Pg = Pick<SQL, 'unsafe'>
export type PgPool = SQL

/** A row as Bun.SQL answers it: BIGINT as a string, BOOLEAN as a boolean, BYTEA as a Buffer. */
export type PgRow = Record<string, unknown>

/**
 * BIGINT columns (times in ms, sizes, dashboard ids below 2^53) arrive as decimal strings; every one the store
 * keeps is a safe integer, so the conversion is exact. A value outside that range is a corrupt store: say so.
 */
export function num(v: unknown): number {
  if (typeof v === 'number') return v
  const n = Number(v as string)
  if (!Number.isSafeInteger(n)) throw new Error(`the store answered ${String(v)} where a safe integer was expected`)
  return n
}

export function numOrNull(v: unknown): number | null {
  return v === null || v === undefined ? null : num(v)
}

/** An int[] as Bun.SQL answers it (an array or a typed array) as a plain array of numbers. */
export function nums(v: unknown): number[] {
  return v === null || v === undefined ? [] : Array.from(v as ArrayLike<unknown>, num)
}

/** Runs a query with $1... parameters. */
export async function q<T = PgRow>(db: Pg, text: string, params: unknown[] = []): Promise<T[]> {
  return (await db.unsafe(text, params as never[])) as unknown as T[]
}

/** The number of rows a write changed. */
export async function run(db: Pg, text: string, params: unknown[] = []): Promise<number> {
  const r = (await db.unsafe(text, params as never[])) as unknown as { count: number }
  return r.count ?? 0
}

/** Whether the error is PostgreSQL's unique_violation (SQLSTATE 23505). */
export function isUniqueViolation(e: unknown): boolean {
  return e instanceof Error && ((e as { errno?: string }).errno === '23505' || (e as { code?: string }).code === '23505')
}

export { isUnstorableText } from './pg-text'

/** Runs a write and turns PostgreSQL's unique violation into the store-neutral UniqueViolation. */
export async function pgUniqueWrite<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write()
  } catch (e) {
    if (isUniqueViolation(e)) throw new UniqueViolation((e as Error).message)
    throw e
  }
}

/** A transaction: every statement of `body` commits together or not at all. */
export function tx<T>(pool: PgPool, body: (t: Pg) => Promise<T>): Promise<T> {
  return pool.begin((t) => body(t)) as Promise<T>
}

/**
 * Inserts a row under the next id of `sequence` (users, groups), in one transaction with the counter: SQLite's
 * AUTOINCREMENT numbers (from 1, never reused, no gap left by a failed insert). `insert` gets the id as $1.
 */
export async function insertWithNextId(pool: PgPool, sequence: 'users' | 'groups', insert: string, params: unknown[]): Promise<number> {
  return pgUniqueWrite(() =>
    tx(pool, async (t) => {
      const [r] = await q<{ last: number }>(t, 'UPDATE id_sequences SET last = last + 1 WHERE name = $1 RETURNING last', [sequence])
      await run(t, insert, [r!.last, ...params])
      return r!.last
    }),
  )
}

/** The advisory lock that serialises migrations across every replica of one database. */
const MIGRATION_LOCK = 0x51_75_61_72 // "Quar"

/**
 * Applies the missing migrations, each in its own transaction, under a transaction-scoped advisory lock: when
 * several replicas start together, one migrates and the others wait, then find nothing left to do. Answers the
 * migrations this call applied.
 */
export async function migratePg(pool: PgPool): Promise<{ version: number; name: string }[]> {
  const known = Math.max(0, ...PG_MIGRATIONS.map((m) => m.version))
  const applied: { version: number; name: string }[] = []
  for (;;) {
    const next = await pool.begin(async (t) => {
      await t.unsafe(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`)
      await t.unsafe(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied BIGINT NOT NULL)',
      )
      const done = new Set((await q<{ version: number }>(t, 'SELECT version FROM schema_migrations')).map((r) => r.version))
      const newest = Math.max(0, ...done)
      if (newest > known) throw new Error(`the store has schema version ${newest}, newer than this server knows (${known})`)
      const next = PG_MIGRATIONS.find((m) => !done.has(m.version))
      if (!next) return undefined
      await t.unsafe(next.sql)
      await t.unsafe('INSERT INTO schema_migrations (version, name, applied) VALUES ($1, $2, $3)', [next.version, next.name, Date.now()])
      return next
    })
    if (!next) return applied
    applied.push({ version: next.version, name: next.name })
  }
}

/**
 * Opens a pool on the URL and checks the server answers, so that a bad URL or an unreachable server stops the
 * start with one clear line instead of failing the first request.
 */
export async function openPg(url: string, options: { max?: number } = {}): Promise<PgPool> {
  let pool: SQL
  try {
    pool = new SQL(url, { max: options.max ?? 10, connectionTimeout: 10, idleTimeout: 60 })
  } catch (e) {
    throw new Error(`QUARRY_DATABASE_URL: ${(e as Error).message}`)
  }
  try {
    await pool.unsafe('SELECT 1')
  } catch (e) {
    await pool.close().catch(() => {})
    throw new Error(`the PostgreSQL server at ${redact(url)} does not answer: ${(e as Error).message}`)
  }
  return pool
}

/** The URL without its password, for messages. */
export function redact(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return '(unparsable URL)'
  }
}
