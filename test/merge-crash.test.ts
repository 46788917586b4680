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
import { Segment } from '../server/search/segment'
import { SEALED_INGEST_BYTES, SMALL_SEGMENT_SHARE } from '../server/search/segments'
import { listening, openStoreAt, spawnServer } from './helpers'
import { onPg } from './pg'

const ADMIN_PASSWORD = 'merge-crash-password'
const T0 = Date.parse('2026-06-01T00:00:00Z')
const SEGMENT_BYTES = 2 << 20
const BATCH_ENTRIES = 600
const ENTRY_BYTES = 1000

async function start(dataDir: string) {
  const proc = spawnServer({
    QUARRY_DATA_DIR: dataDir,
    QUARRY_ADMIN_PASSWORD: ADMIN_PASSWORD,
    QUARRY_LOG_LEVEL: 'info',
    QUARRY_SEGMENT_SIZE: '2MiB',
    QUARRY_COMPACT_INTERVAL: '100ms',
  })
  const { url } = await listening(proc)
  const login = await fetch(`${url}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ User: 'admin', Pass: ADMIN_PASSWORD }) })
  const jwt = ((await login.json()) as { JWT: string }).JWT
  return { proc, url, jwt }
}

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

/** Every entry the store holds, rows and registered segments (with repeats, if any); reading a missing blob throws. */
async function storedEntries(dataDir: string) {
  const at = await openStoreAt(dataDir)
  try {
    const rows = await at.rows('SELECT data FROM entries')
    const keys = await at.rows('SELECT key FROM entry_segments')
    const pending = await at.rows('SELECT key FROM entry_segment_removals WHERE NOT blob_gone')
    const blobs = await createDiskBlobStore({ dataDir })
    const texts = rows.map((r) => Buffer.from(r.data as Uint8Array).toString())
    for (const { key } of keys) {
      const seg = new Segment(new Uint8Array(await ((await blobs.body(String(key))) as Blob).arrayBuffer()))
      await seg.loadData()
      for (let i = 0; i < seg.count; i++) texts.push(seg.entryData(i).toString())
    }
    // Blobs neither registered nor journaled: a merge's (or a sealed batch's) blob written before the kill, not
    // registered; the blob sweep removes them.
    const named = new Set([...keys, ...pending].map((k) => String(k.key)))
    let unregistered = 0
    for await (const b of blobs.list()) if (b.key.startsWith('segments/') && !named.has(b.key)) unregistered++
    return { texts, segments: keys.length, pending: pending.map((p) => String(p.key)), unregistered }
  } finally {
    await at.close()
  }
}

describe('merges of small segments under SIGKILL', () => {
  test('answered entries are kept once each, cut-off batches whole or not at all, registered blobs all there; after the restart journaled blobs go and a search finds every entry', async () => {
    expect(BATCH_ENTRIES * ENTRY_BYTES).toBeGreaterThanOrEqual(SEALED_INGEST_BYTES)
    expect(BATCH_ENTRIES * ENTRY_BYTES).toBeLessThan(SEGMENT_BYTES * SMALL_SEGMENT_SHARE)
    const dataDir = mkdtempSync(join(tmpdir(), 'quarry-merge-crash-'))
    let server: Awaited<ReturnType<typeof start>> | undefined
    try {
      server = await start(dataDir)
      const { url, jwt } = server
      const acked: string[][] = []
      const cut: string[][] = []
      let stop = false
      let seq = 0
      const post = async (texts: string[]): Promise<void> => {
        const entries = texts.map((t) => ({ TS: new Date(T0 + ((seq++ * 7919) % 5000) * 1000).toISOString(), Tag: 'merge', SRC: '192.0.2.9', Data: Buffer.from(t).toString('base64') }))
        try {
          const res = await fetch(`${url}/api/ingest/json`, { method: 'POST', headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' }, body: JSON.stringify(entries) })
          ;(res.status === 200 ? acked : cut).push(texts)
        } catch {
          cut.push(texts)
          stop = true
        }
      }
      // The tag first (a batch that creates a tag takes the rows), then the writers of large batches.
      await post(['first'])
      expect(acked.length).toBe(1)
      const writer = async (w: number) => {
        for (let b = 0; !stop; b++) await post(Array.from({ length: BATCH_ENTRIES }, (_, i) => `w${w} b${b} e${i} `.padEnd(ENTRY_BYTES, String.fromCharCode(97 + ((b + i) % 26)))))
      }
      const writing = [writer(0), writer(1)]
      // Killed at a random moment once merges have committed (SQLite), or once batches were answered (PostgreSQL).
      const deadline = Date.now() + 60_000
      while (onPg ? acked.length < 12 : mergedAway(dataDir) < 6) {
        if (Date.now() > deadline) throw new Error(`no merge committed within 60 s (${acked.length} batches answered)`)
        await Bun.sleep(20)
      }
      await Bun.sleep(Math.floor(Math.random() * 400))
      server.proc.kill('SIGKILL')
      await server.proc.exited
      stop = true
      await Promise.all(writing)
      server = undefined

      const stored = await storedEntries(dataDir)
      console.log(`merge-crash: ${JSON.stringify({ acked: acked.length, cut: cut.length, segments: stored.segments, pending: stored.pending.length, unregistered: stored.unregistered, mergedAway: mergedAway(dataDir) })}`)
      const seen = new Map<string, number>()
      for (const t of stored.texts) seen.set(t, (seen.get(t) ?? 0) + 1)
      expect([...seen].filter(([, n]) => n > 1)).toEqual([])
      expect(acked.flat().filter((t) => !seen.has(t))).toEqual([])
      for (const batch of cut) expect([0, batch.length]).toContain(batch.filter((t) => seen.has(t)).length)
      const known = new Set([...acked.flat(), ...cut.flat()])
      expect(stored.texts.filter((t) => !known.has(t))).toEqual([])

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
      const launch = await fetch(`${server.url}/api/searchctrl/launch`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.jwt}`, 'content-type': 'application/json' },
        body: JSON.stringify({ SearchString: 'tag=merge', SearchStart: new Date(T0).toISOString(), SearchEnd: new Date(T0 + 6_000_000).toISOString() }),
      })
      expect(launch.status).toBe(200)
      const id = ((await launch.json()) as { SearchID: string }).SearchID
      for (;;) {
        const details = (await (await fetch(`${server.url}/api/searchctrl/${id}/details`, { headers: { authorization: `Bearer ${server.jwt}` } })).json()) as { Finished: string }
        if (details.Finished !== '0001-01-01T00:00:00Z') break
        if (Date.now() > until) throw new Error('the search did not finish within 60 s')
        await Bun.sleep(20)
      }
      const got = await fetch(`${server.url}/api/searchctrl/${id}/download/json`, { headers: { authorization: `Bearer ${server.jwt}` } })
      expect(got.status).toBe(200)
      const texts = ((await got.json()) as { Data: string }[]).map((r) => Buffer.from(r.Data, 'base64').toString())
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
