// Sealed ingest under SIGKILL (server/search/segments.ts ingestSealed; bench/README.md, ingest): the real server takes
// large batches (at least SEALED_INGEST_BYTES of data, written straight into segments) from some writers and small
// ones (rows, compacted every 100 ms) from others, and is killed at a random moment once sealed batches were answered.
// Then, with the server down, every entry whose batch was answered 200 is in the store exactly once (a row or in a
// registered segment), a batch cut off by the kill is there whole or not at all; restarted, rows ingested next are
// numbered above every id a segment holds (no entry of a segment is hidden by a row), and a search finds exactly
// the stored entries.
import { describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SEALED_INGEST_BYTES } from '../server/search/segments'
import { batchRecorder, type CrashServer, expectAnsweredKeptOnce, killDuringWrites, searchAll, startCrashServer, storedEntries } from './ingest-crash'

const ADMIN_PASSWORD = 'sealed-crash-password'
const T0 = Date.parse('2026-06-01T00:00:00Z')
const LARGE_ENTRIES = 600
const LARGE_BYTES = 1000
const start = (dataDir: string) => startCrashServer(dataDir, ADMIN_PASSWORD, { QUARRY_SEGMENT_SIZE: '256KiB' })

describe('sealed ingest under SIGKILL', () => {
  test('answered entries are kept once each, cut-off batches whole or not at all; after the restart rows take new ids and a search finds them all', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'quarry-sealed-crash-'))
    let server: CrashServer | undefined
    try {
      server = await start(dataDir)
      const record = batchRecorder(server, 'crash', T0)
      let largeAcked = 0
      // The tag first (a batch that creates a tag takes the rows), then the writers.
      expect(await record.post(['first'])).toBe(true)
      const small = async (w: number) => {
        for (let b = 0; !record.stopped; b++) await record.post(Array.from({ length: 8 }, (_, i) => `s${w} b${b} e${i} ${'x'.repeat((b * 7 + i) % 40)}`))
      }
      const large = async (w: number) => {
        for (let b = 0; !record.stopped; b++) {
          const texts = Array.from({ length: LARGE_ENTRIES }, (_, i) => `l${w} b${b} e${i} `.padEnd(LARGE_BYTES, String.fromCharCode(97 + ((b + i) % 26))))
          if (await record.post(texts)) largeAcked++
        }
      }
      expect(LARGE_ENTRIES * LARGE_BYTES).toBeGreaterThanOrEqual(SEALED_INGEST_BYTES)
      const writing = [small(0), small(1), large(0), large(1)]
      // Killed at a random moment once sealed batches have been answered.
      const deadline = Date.now() + 30_000
      while (largeAcked < 3) {
        if (Date.now() > deadline) throw new Error('no large batch was answered within 30 s')
        await Bun.sleep(20)
      }
      await killDuringWrites(server, record, writing, 500)
      server = undefined

      const stored = await storedEntries(dataDir)
      console.log(`sealed-crash: ${JSON.stringify({ acked: record.acked.length, largeAcked, cut: record.cut.length, segments: stored.segments, rows: stored.rowIds.length })}`)
      expectAnsweredKeptOnce(stored.texts, record)
      expect(stored.rowIds.filter((id) => stored.segmentIds.has(id))).toEqual([])

      // Restarted: new rows are numbered above every id a segment holds, and a search finds every entry.
      server = await start(dataDir)
      const after = ['after-restart 1', 'after-restart 2']
      const res = await fetch(`${server.url}/api/ingest/json`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.jwt}`, 'content-type': 'application/json' },
        body: JSON.stringify(after.map((t) => ({ TS: new Date(T0).toISOString(), Tag: 'crash', Data: Buffer.from(t).toString('base64') }))),
      })
      expect(res.status).toBe(200)
      const texts = (await searchAll(server, 'crash', T0)).map((r) => r.text)
      expect(texts.length).toBe(stored.texts.length + after.length)
      expect(texts.sort()).toEqual([...stored.texts, ...after].sort())
      server.proc.kill('SIGTERM')
      await server.proc.exited
      server = undefined
    } finally {
      server?.proc.kill('SIGKILL')
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 120_000)
})
