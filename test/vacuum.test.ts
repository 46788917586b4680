// The SQLite file gives its space back after compaction (server/store/db.ts: auto_vacuum = INCREMENTAL, reclaimSpace
// after each compaction run): through the real SQLite store, the segments and the disk blob store, as the app builds
// them. The file is measured on disk (after a checkpoint: what `du` of the data directory sees), and every entry is
// still found afterwards. About SQLite's file alone, so it runs the same in both passes of test/run.sh.
import { Database } from 'bun:sqlite'
import { afterAll, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDiskBlobStore } from '../server/blob'
import { createSqliteStore } from '../server/repos'
import { SegmentedEntries } from '../server/search/segments'

const tmp = mkdtempSync(join(tmpdir(), 'quarry-vacuum-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

const T0 = 1_767_225_600_000

/** The main file's size on disk once the WAL is copied into it. */
function fileBytes(db: Database, path: string): number {
  db.run('PRAGMA wal_checkpoint(TRUNCATE)')
  return statSync(path).size
}

test('a new store is in incremental mode, and compaction gives the deleted rows space back to the file system', async () => {
  const dir = join(tmp, 'new')
  const path = join(dir, 'quarry.db')
  mkdirSync(dir, { recursive: true })
  const store = createSqliteStore(path)
  try {
    expect(store.db.query<{ auto_vacuum: number }, []>('PRAGMA auto_vacuum').get()!.auto_vacuum).toBe(2)
    const blobs = await createDiskBlobStore({ dataDir: dir })
    // Rows, then compaction: no batch written straight into segments (it would leave no rows to reclaim).
    const entries = new SegmentedEntries(store.entries, store.segments, blobs, { targetBytes: 1 << 20, sealedIngestBytes: Number.POSITIVE_INFINITY })
    const empty = fileBytes(store.db, path)
    // 24 MiB of entries of 1 KiB (varied: they compress, but not to nothing).
    const n = 24 * 1024
    for (let i = 0; i < n; i += 1024)
      await entries.ingest(
        Array.from({ length: 1024 }, (_, j) => ({ ts: T0 + i + j, tag: 'web', src: '10.0.0.1', data: Buffer.from(`${i + j} ${String((i + j) * 7919).repeat(40)}`.padEnd(1024, '.')) })),
      )
    const full = fileBytes(store.db, path)
    expect(full).toBeGreaterThan(n * 1024)
    while ((await entries.compact({ all: true })) > 0) {}
    expect(store.db.query<{ n: number }, []>('SELECT count(*) AS n FROM entries').get()!.n).toBe(0)
    expect(store.db.query<{ freelist_count: number }, []>('PRAGMA freelist_count').get()!.freelist_count).toBe(0)
    const after = fileBytes(store.db, path)
    // The rows' pages went back: the file is about as small as before the ingest (the segment list and indexes stay).
    expect(after).toBeLessThan(empty + 1024 * 1024)
    expect(after).toBeLessThan(full / 20)
    expect(await entries.count(null, T0, T0 + n)).toBe(n)
  } finally {
    await store.close()
  }
}, 120_000)

test('an existing store without auto-vacuum is switched at start, and its free pages go', async () => {
  const dir = join(tmp, 'old')
  const path = join(dir, 'quarry.db')
  mkdirSync(dir, { recursive: true })
  // A store as earlier versions left it: SQLite's default mode, tables made, 8 MiB written and deleted.
  const first = createSqliteStore(path)
  first.db.close()
  {
    const db = new Database(path)
    db.run('PRAGMA auto_vacuum = NONE')
    db.run('VACUUM')
    expect(db.query<{ auto_vacuum: number }, []>('PRAGMA auto_vacuum').get()!.auto_vacuum).toBe(0)
    db.run('CREATE TABLE filler (b BLOB)')
    db.transaction(() => {
      for (let i = 0; i < 2048; i++) db.run('INSERT INTO filler VALUES (?)', [Buffer.alloc(4096, i % 251)])
    })()
    db.run('DELETE FROM filler')
    expect(db.query<{ freelist_count: number }, []>('PRAGMA freelist_count').get()!.freelist_count).toBeGreaterThan(2000)
    db.run('PRAGMA wal_checkpoint(TRUNCATE)')
    db.close()
  }
  const before = statSync(path).size
  expect(before).toBeGreaterThan(8 << 20)
  const store = createSqliteStore(path)
  try {
    expect(store.db.query<{ auto_vacuum: number }, []>('PRAGMA auto_vacuum').get()!.auto_vacuum).toBe(2)
    expect(store.db.query<{ freelist_count: number }, []>('PRAGMA freelist_count').get()!.freelist_count).toBe(0)
    expect(fileBytes(store.db, path)).toBeLessThan(before / 4)
    // The store works as before (its tables and migrations are there).
    await store.entries.ingest([{ ts: T0, tag: 'web', src: '', data: Buffer.from('after the switch') }])
    expect(await store.entries.count!(null, T0, T0 + 1)).toBe(1)
  } finally {
    await store.close()
  }
}, 120_000)
