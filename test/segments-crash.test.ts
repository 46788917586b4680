// Compaction under SIGKILL (server/search/segments.ts; bench/README.md): the real server compacting every 100 ms into
// segments of 2 KiB while writers ingest, killed at a random moment. Then, with the server down, every entry whose
// ingest was answered 200 is in the store exactly once (as a row or in a registered segment), no entry is there
// twice, and a batch cut off by the kill is there whole or not at all; restarted, a search finds exactly those
// entries, in time order, and the blob sweep removes only unregistered segment blobs.
import { describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openStoreAt } from './helpers'
import { batchRecorder, type CrashServer, expectAnsweredKeptOnce, killDuringWrites, searchAll, startCrashServer, storedEntries } from './ingest-crash'

const ADMIN_PASSWORD = 'segments-crash-password'
const T0 = Date.parse('2026-05-01T00:00:00Z')
const WRITERS = 4
const start = (dataDir: string) => startCrashServer(dataDir, ADMIN_PASSWORD, { QUARRY_SEGMENT_SIZE: '2KiB' })

describe('compaction under SIGKILL', () => {
  test('answered entries are kept once each, cut-off batches whole or not at all; a search after the restart finds them', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'quarry-seg-crash-'))
    let server: CrashServer | undefined
    try {
      server = await start(dataDir)
      const record = batchRecorder(server, 'crash', T0)
      const writer = async (w: number) => {
        for (let b = 0; !record.stopped; b++)
          await record.post(Array.from({ length: 8 }, (_, i) => `w${w} b${b} e${i} ${'x'.repeat((b * 7 + i) % 40)}${i % 3 === 0 ? ' NEEDLE' : ''}`))
      }
      const writing = Array.from({ length: WRITERS }, (_, w) => writer(w))
      // Killed once compactions have been going on for a random while.
      for (;;) {
        await Bun.sleep(50)
        const at = await openStoreAt(dataDir)
        const n = Number((await at.rows('SELECT count(*) AS n FROM entry_segments'))[0]!.n)
        await at.close()
        if (n >= 3) break
      }
      await killDuringWrites(server, record, writing, 800)
      server = undefined

      const stored = await storedEntries(dataDir)
      console.log(`segments-crash: ${JSON.stringify({ acked: record.acked.length, cut: record.cut.length, segments: stored.segments, rows: stored.rowIds.length })}`)
      expect(stored.segments).toBeGreaterThanOrEqual(3)
      expectAnsweredKeptOnce(stored.texts, record)

      // Restarted: a search over everything finds exactly the stored entries, in time order.
      server = await start(dataDir)
      const found = await searchAll(server, 'crash', T0)
      expect(found.map((r) => r.text).sort()).toEqual(stored.texts.slice().sort())
      const times = found.map((r) => Date.parse(r.TS))
      expect(times).toEqual(times.slice().sort((a, b) => a - b))
    } finally {
      server?.proc.kill('SIGKILL')
      await server?.proc.exited
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 60_000)
})
