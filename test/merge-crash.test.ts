// The merge of small segments under SIGKILL (server/search/segments.ts mergeSmall): the real server takes batches
// written straight into small segments (at least SEALED_INGEST_BYTES of data, under a half of QUARRY_SEGMENT_SIZE)
// from two writers while its compaction (every 100 ms) merges them, and is killed at a random moment once merges have
// committed (on SQLite; the PostgreSQL store writes no such segments and merges none, and is killed likewise during
// its sustained ingest). Then, with the server down: every answered entry is stored exactly once, a batch cut off by
// the kill whole or not at all, every registered segment's blob is there (no blob is deleted before the commit that
// unregisters it); restarted, the retention sweep at takeover deletes the blobs the kill left journaled, and a search
// finds exactly the stored entries.
import { Database } from 'bun:sqlite'
import { describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDiskBlobStore } from '../server/blob'
import { SEALED_INGEST_BYTES, SMALL_SEGMENT_SHARE } from '../server/search/segments'
import { batchRecorder, type CrashServer, expectAnsweredKeptOnce, killDuringWrites, searchAll, startCrashServer, storedEntries } from './ingest-crash'
import { onPg } from './pg'

const ADMIN_PASSWORD = 'merge-crash-password'
const T0 = Date.parse('2026-06-01T00:00:00Z')
const SEGMENT_BYTES = 2 << 20
const BATCH_ENTRIES = 600
const ENTRY_BYTES = 1000
const start = (dataDir: string) => startCrashServer(dataDir, ADMIN_PASSWORD, { QUARRY_SEGMENT_SIZE: '2MiB' })

/** Segments unregistered so far (merges journal each one they replace; the journal's ids never repeat); 0 on PostgreSQL. */
function mergedAway(dataDir: string): number {
  if (onPg) return 0
  const db = new Database(join(dataDir, 'quarry.db'), { readonly: true })
  try {
    return db.query<{ n: number | null }, []>('SELECT max(id) AS n FROM entry_segment_removals').get()!.n ?? 0
  } catch {
    return 0 // the table is not made yet
  } finally {
    db.close()
  }
}

describe('merges of small segments under SIGKILL', () => {
  test('answered entries are kept once each, cut-off batches whole or not at all, registered blobs all there; after the restart journaled blobs go and a search finds every entry', async () => {
    expect(BATCH_ENTRIES * ENTRY_BYTES).toBeGreaterThanOrEqual(SEALED_INGEST_BYTES)
    expect(BATCH_ENTRIES * ENTRY_BYTES).toBeLessThan(SEGMENT_BYTES * SMALL_SEGMENT_SHARE)
    const dataDir = mkdtempSync(join(tmpdir(), 'quarry-merge-crash-'))
    let server: CrashServer | undefined
    try {
      server = await start(dataDir)
      const record = batchRecorder(server, 'merge', T0)
      // The tag first (a batch that creates a tag takes the rows), then the writers of large batches.
      expect(await record.post(['first'])).toBe(true)
      const writer = async (w: number) => {
        for (let b = 0; !record.stopped; b++)
          await record.post(Array.from({ length: BATCH_ENTRIES }, (_, i) => `w${w} b${b} e${i} `.padEnd(ENTRY_BYTES, String.fromCharCode(97 + ((b + i) % 26)))))
      }
      const writing = [writer(0), writer(1)]
      // Killed at a random moment once merges have committed (SQLite), or once batches were answered (PostgreSQL).
      const deadline = Date.now() + 60_000
      while (onPg ? record.acked.length < 12 : mergedAway(dataDir) < 6) {
        if (Date.now() > deadline) throw new Error(`no merge committed within 60 s (${record.acked.length} batches answered)`)
        await Bun.sleep(20)
      }
      await killDuringWrites(server, record, writing, 400)
      server = undefined

      const stored = await storedEntries(dataDir)
      console.log(`merge-crash: ${JSON.stringify({ acked: record.acked.length, cut: record.cut.length, segments: stored.segments, pending: stored.pending.length, unregistered: stored.unregistered, mergedAway: mergedAway(dataDir) })}`)
      expectAnsweredKeptOnce(stored.texts, record)

      // Restarted: the retention sweep at takeover deletes what the journal holds; a search finds every entry.
      server = await start(dataDir)
      const blobs = await createDiskBlobStore({ dataDir })
      const until = Date.now() + 60_000
      for (;;) {
        const left = (await Promise.all(stored.pending.map((k) => blobs.stat(k)))).filter((s) => s !== undefined)
        if (left.length === 0) break
        if (Date.now() > until) throw new Error('the journaled blobs were not deleted within 60 s')
        await Bun.sleep(50)
      }
      const texts = (await searchAll(server, 'merge', T0)).map((r) => r.text)
      expect(texts.length).toBe(stored.texts.length)
      expect(texts.sort()).toEqual([...stored.texts].sort())
      server.proc.kill('SIGTERM')
      await server.proc.exited
      server = undefined
    } finally {
      server?.proc.kill('SIGKILL')
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 180_000)
})
