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
import { createDiskBlobStore } from '../server/blob'
import { Segment } from '../server/search/segment'
import { SEALED_INGEST_BYTES } from '../server/search/segments'
import { listening, openStoreAt, spawnServer } from './helpers'

const ADMIN_PASSWORD = 'sealed-crash-password'
const T0 = Date.parse('2026-06-01T00:00:00Z')
const LARGE_ENTRIES = 600
const LARGE_BYTES = 1000

async function start(dataDir: string) {
  const proc = spawnServer({
    QUARRY_DATA_DIR: dataDir,
    QUARRY_ADMIN_PASSWORD: ADMIN_PASSWORD,
    QUARRY_LOG_LEVEL: 'info',
    QUARRY_SEGMENT_SIZE: '256KiB',
    QUARRY_COMPACT_INTERVAL: '100ms',
  })
  const { url } = await listening(proc)
  const login = await fetch(`${url}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ User: 'admin', Pass: ADMIN_PASSWORD }) })
  const jwt = ((await login.json()) as { JWT: string }).JWT
  return { proc, url, jwt }
}

/** Every entry the store holds, rows and registered segments (with repeats, if any), and the ids of each kind. */
async function storedEntries(dataDir: string) {
  const at = await openStoreAt(dataDir)
  try {
    const rows = await at.rows('SELECT id, data FROM entries')
    const keys = await at.rows('SELECT key FROM entry_segments')
    const blobs = await createDiskBlobStore({ dataDir })
    const texts = rows.map((r) => Buffer.from(r.data as Uint8Array).toString())
    const segmentIds = new Set<number>()
    for (const { key } of keys) {
      const seg = new Segment(new Uint8Array(await ((await blobs.body(String(key))) as Blob).arrayBuffer()))
      await seg.loadData()
      for (let i = 0; i < seg.count; i++) {
        texts.push(seg.entryData(i).toString())
        segmentIds.add(seg.id[i]!)
      }
    }
    return { texts, segments: keys.length, rowIds: rows.map((r) => Number(r.id)), segmentIds }
  } finally {
    await at.close()
  }
}

describe('sealed ingest under SIGKILL', () => {
  test('answered entries are kept once each, cut-off batches whole or not at all; after the restart rows take new ids and a search finds them all', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'quarry-sealed-crash-'))
    let server: Awaited<ReturnType<typeof start>> | undefined
    try {
      server = await start(dataDir)
      const { url, jwt } = server
      const acked: string[][] = []
      const cut: string[][] = []
      let largeAcked = 0
      let stop = false
      let seq = 0
      const post = async (texts: string[]): Promise<boolean> => {
        const entries = texts.map((t) => ({ TS: new Date(T0 + ((seq++ * 7919) % 5000) * 1000).toISOString(), Tag: 'crash', SRC: '192.0.2.9', Data: Buffer.from(t).toString('base64') }))
        try {
          const res = await fetch(`${url}/api/ingest/json`, { method: 'POST', headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' }, body: JSON.stringify(entries) })
          if (res.status === 200) {
            acked.push(texts)
            return true
          }
          cut.push(texts)
        } catch {
          cut.push(texts)
          stop = true
        }
        return false
      }
      // The tag first (a batch that creates a tag takes the rows), then the writers.
      expect(await post(['first'])).toBe(true)
      const small = async (w: number) => {
        for (let b = 0; !stop; b++) await post(Array.from({ length: 8 }, (_, i) => `s${w} b${b} e${i} ${'x'.repeat((b * 7 + i) % 40)}`))
      }
      const large = async (w: number) => {
        for (let b = 0; !stop; b++) {
          const texts = Array.from({ length: LARGE_ENTRIES }, (_, i) => `l${w} b${b} e${i} `.padEnd(LARGE_BYTES, String.fromCharCode(97 + ((b + i) % 26))))
          if (await post(texts)) largeAcked++
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
      await Bun.sleep(Math.floor(Math.random() * 500))
      server.proc.kill('SIGKILL')
      await server.proc.exited
      stop = true
      await Promise.all(writing)
      server = undefined

      const stored = await storedEntries(dataDir)
      console.log(`sealed-crash: ${JSON.stringify({ acked: acked.length, largeAcked, cut: cut.length, segments: stored.segments, rows: stored.rowIds.length })}`)
      const seen = new Map<string, number>()
      for (const t of stored.texts) seen.set(t, (seen.get(t) ?? 0) + 1)
      expect([...seen].filter(([, n]) => n > 1)).toEqual([])
      expect(acked.flat().filter((t) => !seen.has(t))).toEqual([])
      for (const batch of cut) expect([0, batch.length]).toContain(batch.filter((t) => seen.has(t)).length)
      const known = new Set([...acked.flat(), ...cut.flat()])
      expect(stored.texts.filter((t) => !known.has(t))).toEqual([])
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
      const launch = await fetch(`${server.url}/api/searchctrl/launch`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.jwt}`, 'content-type': 'application/json' },
        body: JSON.stringify({ SearchString: 'tag=crash', SearchStart: new Date(T0).toISOString(), SearchEnd: new Date(T0 + 6_000_000).toISOString() }),
      })
      expect(launch.status).toBe(200)
      const id = ((await launch.json()) as { SearchID: string }).SearchID
      const until = Date.now() + 60_000
      for (;;) {
        const details = (await (await fetch(`${server.url}/api/searchctrl/${id}/details`, { headers: { authorization: `Bearer ${server.jwt}` } })).json()) as { Finished: string }
        if (details.Finished !== '0001-01-01T00:00:00Z') break
        if (Date.now() > until) throw new Error('the search did not finish within 60 s')
        await Bun.sleep(20)
      }
      const got = await fetch(`${server.url}/api/searchctrl/${id}/download/json`, { headers: { authorization: `Bearer ${server.jwt}` } })
      expect(got.status).toBe(200)
      const texts = ((await got.json()) as { Data: string }[]).map((r) => Buffer.from(r.Data, 'base64').toString())
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
