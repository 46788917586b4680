// Compaction under SIGKILL (server/search/segments.ts; bench/README.md): the real server compacting every 100 ms into
// segments of 2 KiB while writers ingest, killed at a random moment. Then, with the server down, every entry whose
// ingest was answered 200 is in the store exactly once (as a row or in a registered segment), no entry is there
// twice, and a batch cut off by the kill is there whole or not at all; restarted, a search finds exactly those
// entries, in time order, and the blob sweep removes only unregistered segment blobs.
import { describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDiskBlobStore } from '../server/blob'
import { Segment } from '../server/search/segment'
import { listening, openStoreAt, spawnServer } from './helpers'

const ADMIN_PASSWORD = 'segments-crash-password'
const T0 = Date.parse('2026-05-01T00:00:00Z')
const WRITERS = 4

async function start(dataDir: string, extra: Record<string, string> = {}) {
  const proc = spawnServer({
    QUARRY_DATA_DIR: dataDir,
    QUARRY_ADMIN_PASSWORD: ADMIN_PASSWORD,
    QUARRY_LOG_LEVEL: 'info',
    QUARRY_SEGMENT_SIZE: '2KiB',
    QUARRY_COMPACT_INTERVAL: '100ms',
    ...extra,
  })
  const { url } = await listening(proc)
  const login = await fetch(`${url}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ User: 'admin', Pass: ADMIN_PASSWORD }) })
  const jwt = ((await login.json()) as { JWT: string }).JWT
  return { proc, url, jwt }
}

/** Every entry the store holds, rows and registered segments, as `data` texts (with repeats, if any). */
async function storedEntries(dataDir: string): Promise<{ texts: string[]; segments: number; rows: number }> {
  const at = await openStoreAt(dataDir)
  try {
    const rows = await at.rows('SELECT data FROM entries')
    const keys = await at.rows('SELECT key FROM entry_segments')
    const blobs = await createDiskBlobStore({ dataDir })
    const texts = rows.map((r) => Buffer.from(r.data as Uint8Array).toString())
    for (const { key } of keys) {
      const seg = new Segment(new Uint8Array(await (await blobs.body(String(key)) as Blob).arrayBuffer()))
      for (let i = 0; i < seg.count; i++) texts.push(seg.entryData(i).toString())
    }
    return { texts, segments: keys.length, rows: rows.length }
  } finally {
    await at.close()
  }
}

describe('compaction under SIGKILL', () => {
  test('answered entries are kept once each, cut-off batches whole or not at all; a search after the restart finds them', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'quarry-seg-crash-'))
    let server: Awaited<ReturnType<typeof start>> | undefined
    try {
      server = await start(dataDir)
      const { url, jwt } = server
      const acked: string[][] = []
      const cut: string[][] = []
      let stop = false
      let seq = 0
      const writer = async (w: number) => {
        for (let b = 0; !stop; b++) {
          const texts = Array.from({ length: 8 }, (_, i) => `w${w} b${b} e${i} ${'x'.repeat((b * 7 + i) % 40)}${i % 3 === 0 ? ' NEEDLE' : ''}`)
          // Times spread backwards and forwards: many land among entries already compacted.
          const entries = texts.map((t) => ({
            TS: new Date(T0 + ((seq++ * 7919) % 5000) * 1000).toISOString(),
            Tag: 'crash',
            SRC: '192.0.2.9',
            Data: Buffer.from(t).toString('base64'),
          }))
          try {
            const res = await fetch(`${url}/api/ingest/json`, {
              method: 'POST',
              headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
              body: JSON.stringify(entries),
            })
            if (res.status === 200) acked.push(texts)
            else cut.push(texts)
          } catch {
            cut.push(texts)
            return
          }
        }
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
      await Bun.sleep(Math.floor(Math.random() * 800))
      server.proc.kill('SIGKILL')
      await server.proc.exited
      stop = true
      await Promise.all(writing)
      server = undefined

      const stored = await storedEntries(dataDir)
      console.log(`segments-crash: ${JSON.stringify({ acked: acked.length, cut: cut.length, segments: stored.segments, rows: stored.rows })}`)
      expect(stored.segments).toBeGreaterThanOrEqual(3)
      const seen = new Map<string, number>()
      for (const t of stored.texts) seen.set(t, (seen.get(t) ?? 0) + 1)
      expect([...seen].filter(([, n]) => n > 1)).toEqual([])
      const missing = acked.flat().filter((t) => !seen.has(t))
      expect(missing).toEqual([])
      for (const batch of cut) {
        const kept = batch.filter((t) => seen.has(t)).length
        expect([0, batch.length]).toContain(kept)
      }
      const known = new Set([...acked.flat(), ...cut.flat()])
      expect(stored.texts.filter((t) => !known.has(t))).toEqual([])

      // Restarted: a search over everything finds exactly the stored entries, in time order.
      server = await start(dataDir)
      const launch = await fetch(`${server.url}/api/searchctrl/launch`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.jwt}`, 'content-type': 'application/json' },
        body: JSON.stringify({ SearchString: 'tag=crash', SearchStart: new Date(T0).toISOString(), SearchEnd: new Date(T0 + 6_000_000).toISOString() }),
      })
      expect(launch.status).toBe(200)
      const id = ((await launch.json()) as { SearchID: string }).SearchID
      let found: { TS: string; Data: string }[] = []
      for (;;) {
        const details = (await (await fetch(`${server.url}/api/searchctrl/${id}/details`, { headers: { authorization: `Bearer ${server.jwt}` } })).json()) as {
          Finished: string
        }
        if (details.Finished !== '0001-01-01T00:00:00Z') break
        await Bun.sleep(20)
      }
      const res = await fetch(`${server.url}/api/searchctrl/${id}/download/json`, { headers: { authorization: `Bearer ${server.jwt}` } })
      expect(res.status).toBe(200)
      found = (await res.json()) as { TS: string; Data: string }[]
      const texts = found.map((r) => Buffer.from(r.Data, 'base64').toString())
      expect(texts.slice().sort()).toEqual(stored.texts.slice().sort())
      const times = found.map((r) => Date.parse(r.TS))
      expect(times).toEqual(times.slice().sort((a, b) => a - b))
    } finally {
      server?.proc.kill('SIGKILL')
      await server?.proc.exited
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 60_000)
})
