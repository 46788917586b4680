// What the ingest crash tests share (segments-crash, sealed-crash, merge-crash): a real server on a data directory,
// writers whose batches are recorded as answered (200) or cut off (refused, or no answer: the kill), the entries the
// store holds once the server is down (rows and registered segments, read straight from the store and the blobs),
// the check that every answered entry is there exactly once and every cut-off batch whole or not at all, and a
// search after the restart.
import { expect } from 'bun:test'
import { createDiskBlobStore } from '../server/blob'
import { Segment } from '../server/search/segment'
import { listening, openStoreAt, spawnServer } from './helpers'

export interface CrashServer {
  proc: ReturnType<typeof spawnServer>
  url: string
  jwt: string
}

/** A server on `dataDir` (info log, compaction every 100 ms, `env` on top), listening, with the admin signed in. */
export async function startCrashServer(dataDir: string, password: string, env: Record<string, string>): Promise<CrashServer> {
  const proc = spawnServer({ QUARRY_DATA_DIR: dataDir, QUARRY_ADMIN_PASSWORD: password, QUARRY_LOG_LEVEL: 'info', QUARRY_COMPACT_INTERVAL: '100ms', ...env })
  const { url } = await listening(proc)
  const login = await fetch(`${url}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ User: 'admin', Pass: password }) })
  const jwt = ((await login.json()) as { JWT: string }).JWT
  return { proc, url, jwt }
}

/**
 * Batches of entry texts sent to POST /api/ingest/json under `tag`, each recorded as answered (`acked`) or cut off
 * (`cut`); the first batch that gets no answer at all sets `stopped` (the server is gone). Times are spread backwards
 * and forwards over 5,000 s from t0, so that many land among entries already compacted.
 */
export function batchRecorder(server: CrashServer, tag: string, t0: number) {
  let seq = 0
  const record = {
    acked: [] as string[][],
    cut: [] as string[][],
    stopped: false,
    /** Sends one batch; true when it was answered 200. */
    async post(texts: string[]): Promise<boolean> {
      const entries = texts.map((t) => ({ TS: new Date(t0 + ((seq++ * 7919) % 5000) * 1000).toISOString(), Tag: tag, SRC: '192.0.2.9', Data: Buffer.from(t).toString('base64') }))
      try {
        const res = await fetch(`${server.url}/api/ingest/json`, { method: 'POST', headers: { authorization: `Bearer ${server.jwt}`, 'content-type': 'application/json' }, body: JSON.stringify(entries) })
        if (res.status === 200) {
          record.acked.push(texts)
          return true
        }
        record.cut.push(texts)
      } catch {
        record.cut.push(texts)
        record.stopped = true
      }
      return false
    },
  }
  return record
}

/** Kills the server (SIGKILL) at a random moment within `maxDelayMs`, then lets the writers see it and end. */
export async function killDuringWrites(server: CrashServer, record: { stopped: boolean }, writing: Promise<unknown>[], maxDelayMs: number): Promise<void> {
  await Bun.sleep(Math.floor(Math.random() * maxDelayMs))
  server.proc.kill('SIGKILL')
  await server.proc.exited
  record.stopped = true
  await Promise.all(writing)
}

/**
 * Every entry the store in `dataDir` holds (the server down), rows and registered segments, as texts with repeats if
 * any; the row ids and the ids the segments hold; the segment keys and those the merge journal still owes a delete.
 * Reading a registered segment whose blob is missing throws.
 */
export async function storedEntries(dataDir: string) {
  const at = await openStoreAt(dataDir)
  try {
    const rows = await at.rows('SELECT id, data FROM entries')
    const keys = (await at.rows('SELECT key FROM entry_segments')).map((r) => String(r.key))
    const pending = (await at.rows('SELECT key FROM entry_segment_removals WHERE NOT blob_gone')).map((r) => String(r.key))
    const blobs = await createDiskBlobStore({ dataDir })
    const texts = rows.map((r) => Buffer.from(r.data as Uint8Array).toString())
    const segmentIds = new Set<number>()
    for (const key of keys) {
      const seg = new Segment(new Uint8Array(await ((await blobs.body(key)) as Blob).arrayBuffer()))
      await seg.loadData()
      for (let i = 0; i < seg.count; i++) {
        texts.push(seg.entryData(i).toString())
        segmentIds.add(seg.id[i]!)
      }
    }
    // Blobs neither registered nor journaled: a merge's or a sealed batch's blob written before the kill and never
    // registered (the blob sweep removes them).
    const named = new Set([...keys, ...pending])
    let unregistered = 0
    for await (const b of blobs.list()) if (b.key.startsWith('segments/') && !named.has(b.key)) unregistered++
    return { texts, segments: keys.length, pending, unregistered, rowIds: rows.map((r) => Number(r.id)), segmentIds }
  } finally {
    await at.close()
  }
}

/** Every answered entry stored exactly once, every cut-off batch whole or not at all, nothing that was never sent. */
export function expectAnsweredKeptOnce(texts: readonly string[], record: { acked: string[][]; cut: string[][] }): void {
  const seen = new Map<string, number>()
  for (const t of texts) seen.set(t, (seen.get(t) ?? 0) + 1)
  expect([...seen].filter(([, n]) => n > 1)).toEqual([])
  expect(record.acked.flat().filter((t) => !seen.has(t))).toEqual([])
  for (const batch of record.cut) expect([0, batch.length]).toContain(batch.filter((t) => seen.has(t)).length)
  const known = new Set([...record.acked.flat(), ...record.cut.flat()])
  expect(texts.filter((t) => !known.has(t))).toEqual([])
}

/** The results of `tag=<tag>` over [t0, t0 + 6,000 s), launched, waited for (60 s at most) and downloaded. */
export async function searchAll(server: CrashServer, tag: string, t0: number): Promise<{ TS: string; text: string }[]> {
  const auth = { authorization: `Bearer ${server.jwt}` }
  const launch = await fetch(`${server.url}/api/searchctrl/launch`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ SearchString: `tag=${tag}`, SearchStart: new Date(t0).toISOString(), SearchEnd: new Date(t0 + 6_000_000).toISOString() }),
  })
  expect(launch.status).toBe(200)
  const id = ((await launch.json()) as { SearchID: string }).SearchID
  const until = Date.now() + 60_000
  for (;;) {
    const details = (await (await fetch(`${server.url}/api/searchctrl/${id}/details`, { headers: auth })).json()) as { Finished: string }
    if (details.Finished !== '0001-01-01T00:00:00Z') break
    if (Date.now() > until) throw new Error('the search did not finish within 60 s')
    await Bun.sleep(20)
  }
  const got = await fetch(`${server.url}/api/searchctrl/${id}/download/json`, { headers: auth })
  expect(got.status).toBe(200)
  return ((await got.json()) as { TS: string; Data: string }[]).map((r) => ({ TS: r.TS, text: Buffer.from(r.Data, 'base64').toString() }))
}
