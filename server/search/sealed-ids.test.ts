// Row ids of a SQLite store around batches written straight into segments (reserveIds, registerIngested): a
// reservation changes nothing in the store and keeps this process's rows above it; a registration keeps every later
// row above its ids, also for another connection (a restarted server). About SQLite alone: the same in both passes.
import { Database } from 'bun:sqlite'
import { afterAll, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSqliteStore } from '../repos'
import { SqliteEntriesRepo } from './entries'

const tmp = mkdtempSync(join(tmpdir(), 'quarry-sealed-ids-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

const T0 = 1_767_225_600_000
const row = (i: number) => ({ ts: T0 + i, tag: 'web', src: '', data: Buffer.from(`row ${i}`) })
const settings = (db: Database) => db.query('SELECT key, value FROM server_settings ORDER BY key').all()
const maxRowId = (db: Database) => db.query<{ id: number }, []>('SELECT max(id) AS id FROM entries').get()!.id

test('a reservation changes nothing stored; rows of this process go above it; a registration keeps rows of any connection above it', async () => {
  mkdirSync(tmp, { recursive: true })
  const path = join(tmp, 'quarry.db')
  const store = createSqliteStore(path)
  try {
    await store.entries.ingest([row(0), row(1)])
    const before = settings(store.db)
    const first = await store.segments.reserveIds!(100)
    expect(first).toBe(3)
    expect(settings(store.db)).toEqual(before)
    // A row batch while the reservation stands: numbered after it.
    await store.entries.ingest([row(2)])
    expect(maxRowId(store.db)).toBe(103)
    // A second reservation comes after both.
    expect(await store.segments.reserveIds!(10)).toBe(104)

    // Registered: the ids are kept in the store, so another connection (a restart) numbers its rows above them.
    // The segment's last key is not its highest id (its entries' times are not in id order).
    const seg = { key: 'segments/x', count: 10, bytes: 1, min: { ts: T0, tagId: 1, id: 113 }, max: { ts: T0 + 9, tagId: 1, id: 104 } }
    await store.segments.registerIngested!([seg], 113, undefined, Date.now())
    const other = new Database(path, { strict: true })
    try {
      await new SqliteEntriesRepo(other).ingest([row(3)])
      expect(maxRowId(other)).toBe(114)
    } finally {
      other.close()
    }
  } finally {
    await store.close()
  }
})
