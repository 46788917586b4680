// Entries ingested after a compaction has deleted every row are found by a walk. SQLite gives a new row the highest
// row id plus one: with the rows compacted away, that was an id a segment holds, and the walk took the new row for
// the segment's entry it had already passed (found by the count property test: 318 entries of 319).
import { afterAll, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openTestStore } from '../../test/helpers'
import { createDiskBlobStore } from '../blob'
import type { Cursor } from './entries'
import { SegmentedEntries } from './segments'

const dir = mkdtempSync(join(tmpdir(), 'quarry-entry-ids-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const TAGS = ['web', 'db', 'auth']
const T0 = Date.parse('2026-01-01T00:00:00Z')

test('rows ingested after every row was compacted keep ids of their own: a walk finds each entry once', async () => {
  const { store } = await openTestStore(dir)
  try {
    const blobs = await createDiskBlobStore({ dataDir: dir })
    const entries = new SegmentedEntries(store.entries, store.segments, blobs, { targetBytes: 400, maxEntries: 37 })
    // several entries per millisecond, of three tags, in a random order (the count test's generator and the seed that
    // found it): keys (ts, tag, id) of rows and segments interleave
    let x = 14
    const next = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0)
    const all = Array.from({ length: 600 }, (_, i) => ({ ts: T0 + (next() % 1000), tag: TAGS[next() % 3]!, src: '10.0.0.1', data: Buffer.from(`entry ${i}`) }))
    await entries.ingest(all.slice(0, 300))
    while ((await entries.compact({ all: true })) > 0) {}
    await entries.ingest(all.slice(300))
    for (const chunk of [128, 7]) {
      let cursor: Cursor = { ts: T0, tagId: -1, id: -1 }
      const found: string[] = []
      for (;;) {
        const rows = await entries.scan(null, cursor, T0 + 1000, chunk, 1 << 20)
        if (rows.length === 0) break
        cursor = rows.at(-1)!
        for (const r of rows) if (r.data) found.push(Buffer.from(r.data).toString())
      }
      expect(found.sort()).toEqual(all.map((e) => e.data.toString()).sort())
    }
  } finally {
    await store.close()
  }
})

test('a new row never takes the id of a segment entry, also when that entry is not the segment\'s last key', async () => {
  const sub = join(dir, 'top-id')
  mkdirSync(sub, { recursive: true })
  const { store } = await openTestStore(sub)
  try {
    const blobs = await createDiskBlobStore({ dataDir: sub })
    const entries = new SegmentedEntries(store.entries, store.segments, blobs)
    // Ids 1-3; id 3 is the earliest, so the segment's last key is id 2 while it holds id 3.
    await entries.ingest([
      { ts: T0 + 10, tag: 'web', src: '', data: Buffer.from('one') },
      { ts: T0 + 10, tag: 'web', src: '', data: Buffer.from('two') },
      { ts: T0, tag: 'web', src: '', data: Buffer.from('three') },
    ])
    while ((await entries.compact({ all: true })) > 0) {}
    // The same time and tag as entry 3: with id 3 again it would be the same key, taken for that entry and lost.
    await entries.ingest([{ ts: T0, tag: 'web', src: '', data: Buffer.from('four') }])
    const found: string[] = []
    let cursor: Cursor = { ts: T0 - 1, tagId: -1, id: -1 }
    for (;;) {
      const rows = await entries.scan(null, cursor, T0 + 1000, 100)
      if (rows.length === 0) break
      cursor = rows.at(-1)!
      for (const r of rows) if (r.data) found.push(Buffer.from(r.data).toString())
    }
    expect(found.sort()).toEqual(['four', 'one', 'three', 'two'])
    expect(await entries.count(null, T0, T0 + 1000)).toBe(4)
  } finally {
    await store.close()
  }
})
