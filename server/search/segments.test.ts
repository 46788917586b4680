// A walk step's byte budget over sealed segments (SegmentedEntries.scan): without a needle it hands out about
// `maxBytes` of entries; with one (a grep) it searches GREP_BYTES_PER_BYTE times as much segment data per step, and
// never more than that plus one entry.
import { afterAll, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDiskBlobStore } from '../blob'
import { openTestStore } from '../../test/helpers'
import type { Cursor } from './entries'
import { GREP_BYTES_PER_BYTE, SegmentedEntries } from './segments'

const tmp = mkdtempSync(join(tmpdir(), 'quarry-segments-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

const T0 = 1_767_225_600_000
const ENTRY_BYTES = 100

test('a step searches GREP_BYTES_PER_BYTE times its budget with a needle, its budget without', async () => {
  mkdirSync(tmp, { recursive: true })
  const { store } = await openTestStore(tmp)
  try {
    const blobs = await createDiskBlobStore({ dataDir: tmp })
    const entries = new SegmentedEntries(store.entries, store.segments, blobs, { targetBytes: 64 * 1024 })
    const n = 3000
    await entries.ingest(Array.from({ length: n }, (_, i) => ({ ts: T0 + i, tag: 'web', src: '', data: Buffer.from(`${String(i).padStart(8, '0')} `.padEnd(ENTRY_BYTES, 'x')) })))
    while ((await entries.compact({ all: true })) > 0) {}
    const tags = [(await store.entries.tagsNamed(['web']))[0]!.id]
    const budget = 20 * ENTRY_BYTES
    /** How many entries one step walks from the start (what it answers and the marker it ends on). */
    const walked = async (needle?: Uint8Array) => {
      const start: Cursor = { ts: Number.MIN_SAFE_INTEGER, tagId: -1, id: -1 }
      const rows = await entries.scan(tags, start, Number.MAX_SAFE_INTEGER, 1_000_000, budget, needle ? { needle } : {})
      return rows.at(-1)!.ts - T0 + 1
    }
    // Without a needle: the entries up to the one that crosses the budget.
    expect(await walked()).toBeLessThanOrEqual(budget / ENTRY_BYTES + 1)
    expect(await walked()).toBeGreaterThanOrEqual(budget / ENTRY_BYTES)
    // With a needle in no entry: GREP_BYTES_PER_BYTE times as far, and no farther (plus the entry that crosses it).
    const far = await walked(Buffer.from('absent'))
    expect(far).toBeGreaterThanOrEqual((GREP_BYTES_PER_BYTE * budget) / ENTRY_BYTES)
    expect(far).toBeLessThanOrEqual((GREP_BYTES_PER_BYTE * budget) / ENTRY_BYTES + 1)
  } finally {
    await store.close()
  }
})

/** The disk blob store of `dir`, with the key of every segment it maps (reads from disk) in `mapped`. */
async function mappingBlobs(dir: string) {
  const disk = await createDiskBlobStore({ dataDir: dir })
  const mapped: string[] = []
  return { mapped, blobs: { ...disk, map: (key: string) => (mapped.push(key), disk.map!(key)) } }
}

test('decoded segments stay in the cache across walks up to its bound, and are read again past it', async () => {
  const dir = join(tmp, 'maps')
  mkdirSync(dir, { recursive: true })
  const { store } = await openTestStore(dir)
  try {
    const { blobs, mapped } = await mappingBlobs(dir)
    const n = 3000
    await new SegmentedEntries(store.entries, store.segments, blobs).ingest(
      Array.from({ length: n }, (_, i) => ({ ts: T0 + i, tag: 'web', src: '', data: Buffer.from(`${i} `.padEnd(ENTRY_BYTES, 'y')) })),
    )
    const sealer = new SegmentedEntries(store.entries, store.segments, blobs, { targetBytes: 32 * 1024 })
    while ((await sealer.compact({ all: true })) > 0) {}
    const segments = (await store.segments.listAfter(0)).length
    expect(segments).toBeGreaterThan(5)
    const walkAll = async (entries: SegmentedEntries) => {
      let after: Cursor = { ts: Number.MIN_SAFE_INTEGER, tagId: -1, id: -1 }
      let seen = 0
      for (;;) {
        const rows = await entries.scan(null, after, Number.MAX_SAFE_INTEGER, 500)
        if (rows.length === 0) return seen
        seen += rows.filter((r) => r.data !== null).length
        after = rows.at(-1)!
      }
    }
    // a cache that holds them all: three walks read each segment once
    mapped.length = 0
    const kept = new SegmentedEntries(store.entries, store.segments, blobs, { cacheBytes: 64 << 20 })
    for (let round = 0; round < 3; round++) expect(await walkAll(kept)).toBe(n)
    expect(mapped.length).toBe(segments)
    // a bound of one byte keeps none but the one being read: every walk reads them all again
    mapped.length = 0
    const oneMapping = new SegmentedEntries(store.entries, store.segments, blobs, { cacheBytes: 1 })
    for (let round = 0; round < 3; round++) expect(await walkAll(oneMapping)).toBe(n)
    expect(mapped.length).toBe(3 * segments)
  } finally {
    await store.close()
  }
})

test('a segment spanning the whole time (rows compacted among batches written straight into segments) does not bring every segment into each step', async () => {
  const dir = join(tmp, 'wide')
  mkdirSync(dir, { recursive: true })
  const { store } = await openTestStore(dir)
  try {
    const { blobs, mapped } = await mappingBlobs(dir)
    // Batches of 200 entries (20,000 bytes: not small next to 32 KiB segments, so nothing merges them) straight into
    // segments, between a first and a last entry that go into rows (the first creates the tag; the last is a small
    // batch); the rows, compacted, make one segment that spans all the others.
    const perBatch = 200
    const batches = 12
    const entries = new SegmentedEntries(store.entries, store.segments, blobs, { targetBytes: 32 * 1024, sealedIngestBytes: 10_000, cacheBytes: 1 })
    const line = (i: number) => ({ ts: T0 + i, tag: 'web', src: '', data: Buffer.from(`${String(i).padStart(8, '0')} `.padEnd(ENTRY_BYTES, 'w')) })
    const n = perBatch * batches + 2
    await entries.ingest([line(0)])
    for (let b = 0; b < batches; b++) await entries.ingest(Array.from({ length: perBatch }, (_, i) => line(1 + b * perBatch + i)))
    await entries.ingest([line(n - 1)])
    while ((await entries.compact({ all: true })) > 0) {}
    const list = await entries.segmentList()
    // Only on SQLite are batches written straight into segments; elsewhere the rows are compacted in time order.
    if (list.length === batches + 1) expect(list.some((m) => m.min.ts === T0 && m.max.ts === T0 + n - 1)).toBe(true)
    mapped.length = 0
    let after: Cursor = { ts: Number.MIN_SAFE_INTEGER, tagId: -1, id: -1 }
    const seen: number[] = []
    let steps = 0
    for (;;) {
      const rows = await entries.scan(null, after, Number.MAX_SAFE_INTEGER, 100)
      steps++
      if (rows.length === 0) break
      for (const r of rows) if (r.data !== null) seen.push(r.ts - T0)
      after = rows.at(-1)!
    }
    expect(seen).toEqual(Array.from({ length: n }, (_, i) => i))
    // A cache that keeps nothing: each step maps what it merges, the spanning segment and the next one (measured: 39
    // maps in 27 steps; 104 when every step took every segment the spanning one overlaps).
    expect(steps).toBeGreaterThan(batches)
    expect(mapped.length).toBeLessThanOrEqual(2 * steps)
  } finally {
    await store.close()
  }
})
