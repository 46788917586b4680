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

test('decoded segments stay in the cache across walks up to its bound, and are read again past it', async () => {
  const dir = join(tmp, 'maps')
  mkdirSync(dir, { recursive: true })
  const { store } = await openTestStore(dir)
  try {
    const disk = await createDiskBlobStore({ dataDir: dir })
    const mapped: string[] = []
    const blobs = { ...disk, map: (key: string) => (mapped.push(key), disk.map!(key)) }
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
