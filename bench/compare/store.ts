// The two Bun baselines of bench/compare (raw-bun.ts, elysia-floor.ts) open Quarry's seeded store the same way as
// Quarry does (WAL, busy timeout, synchronous NORMAL, foreign keys) and do its work per request (work.mjs).
import { Database } from 'bun:sqlite'
// @ts-expect-error plain JavaScript shared with the Node baseline
import { makeWork } from './work.mjs'

export function openCompareStore() {
  const dbPath = process.env.COMPARE_DB
  if (!dbPath) throw new Error('COMPARE_DB is required')
  const db = new Database(dbPath, { strict: true })
  db.run('PRAGMA journal_mode = WAL')
  db.run('PRAGMA busy_timeout = 5000')
  db.run('PRAGMA synchronous = NORMAL')
  db.run('PRAGMA foreign_keys = ON')
  const key = db.query<{ value: string }, [string]>('SELECT value FROM server_settings WHERE key = ?').get('jwt_signing_key')?.value
  if (!key) throw new Error('no jwt_signing_key in the store')
  return { db, work: makeWork((sql: string) => db.query(sql), key) }
}
