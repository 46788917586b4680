// The compaction's merge of small segments (SegmentedEntries.mergeSmall, SqliteSegmentsRepo.merge): batches written
// straight into segments of their own size, of two tags interleaved in time, are merged per tag into segments of at
// most the segment size; every entry is kept once with its key, the old blobs go after the commit, the tag statistics
// retention keeps are carried over; a merge that finds one of its segments rewritten meanwhile (retention) registers
// nothing and drops its blob. About SQLite's store alone (the only one with merges): the same in both passes.
import { afterAll, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDiskBlobStore } from '../blob'
import { createSqliteStore } from '../repos'
import type { Cursor } from './entries'
import { segmentStats } from './retention'
import { headerShape } from './segment'
import { SegmentedEntries, type SegmentsRepo } from './segments'

const tmp = mkdtempSync(join(tmpdir(), 'quarry-merge-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

const T0 = 1_767_225_600_000
const TARGET = 64 * 1024
const ENTRY_BYTES = 100
/** Per batch: 8,000 bytes of data, above the sealed bound below, under a half of TARGET (a small segment). */
const PER_BATCH = 80
const BATCHES = 10

/** Batch b of tag `tag`: its entries' times interleave with the other tag's batch b (the segments overlap in time). */
function batch(tag: string, b: number) {
  return Array.from({ length: PER_BATCH }, (_, i) => ({
    ts: T0 + (b * PER_BATCH + i) * 10 + (tag === 'web' ? 0 : 5),
    tag,
    src: '192.0.2.1',
    data: Buffer.from(`${tag} b${b} e${i}${i % 20 === 0 ? ' needle' : ''} `.padEnd(ENTRY_BYTES, 'z')),
  }))
}

async function setup(name: string, wrap: (repo: SegmentsRepo) => SegmentsRepo = (r) => r) {
  const dir = join(tmp, name)
  mkdirSync(dir, { recursive: true })
  const store = createSqliteStore(join(dir, 'quarry.db'))
  const blobs = await createDiskBlobStore({ dataDir: dir })
  const entries = new SegmentedEntries(store.entries, wrap(store.segments), blobs, { targetBytes: TARGET, sealedIngestBytes: 4000 })
  // The tags first (a batch naming a new tag takes the rows), then the batches, each one small segment.
  await entries.ingest([{ ts: T0 - 1000, tag: 'web', src: '', data: Buffer.from('first web') }])
  await entries.ingest([{ ts: T0 - 1000, tag: 'db', src: '', data: Buffer.from('first db') }])
  const sent = [{ tag: 'web', data: 'first web' }, { tag: 'db', data: 'first db' }]
  for (let b = 0; b < BATCHES; b++)
    for (const tag of ['web', 'db']) {
      const one = batch(tag, b)
      await entries.ingest(one)
      for (const e of one) sent.push({ tag, data: e.data.toString() })
    }
  const ids = new Map((await store.entries.allTags()).map((t) => [t.name, t.id]))
  return { store, blobs, entries, sent, ids }
}

/** Every entry a walk answers, in order, as (tag, data), and whether their keys are strictly increasing. */
async function walkAll(entries: SegmentedEntries, names: Map<number, string>) {
  let cursor: Cursor = { ts: Number.MIN_SAFE_INTEGER, tagId: -1, id: -1 }
  const out: { tag: string; data: string }[] = []
  const keys: string[] = []
  for (;;) {
    const rows = await entries.scan(null, cursor, Number.MAX_SAFE_INTEGER, 100, 1 << 20)
    if (rows.length === 0) return { out, keys }
    cursor = rows.at(-1)!
    for (const r of rows) if (r.data) (out.push({ tag: names.get(r.tagId)!, data: Buffer.from(r.data).toString() }), keys.push(`${r.ts}/${r.tagId}/${r.id}`))
  }
}

const sorted = (xs: { tag: string; data: string }[]) => [...xs].sort((a, b) => (a.tag + a.data < b.tag + b.data ? -1 : 1))

test('small segments of a tag are merged per tag, every entry kept once, old blobs gone after the commit, statistics carried', async () => {
  const { store, blobs, entries, sent, ids } = await setup('merge')
  try {
    const names = new Map([...ids].map(([n, id]) => [id, n]))
    const before = await entries.segmentList()
    expect(before.length).toBe(2 * BATCHES)
    const keysBefore = (await walkAll(entries, names)).keys
    // Retention's statistics of each segment, as its sweep records them.
    const nameBytes = (id: number) => Buffer.byteLength(names.get(id)!)
    const statsBefore = new Map<number, { count: number; bytes: number }>()
    for (const m of before) {
      const st = segmentStats(await entries.open(m), nameBytes)
      await store.removal.putSegmentTags(m.seq, st)
      for (const s of st) {
        const was = statsBefore.get(s.tagId) ?? { count: 0, bytes: 0 }
        statsBefore.set(s.tagId, { count: was.count + s.count, bytes: was.bytes + s.bytes })
      }
    }

    // A run is merged once its result is not small: 8 batches of 8,000 bytes (64,000 <= TARGET) per tag; the last 2
    // (16,000 bytes, small) wait.
    const perRun = Math.floor(TARGET / (PER_BATCH * ENTRY_BYTES))
    expect(await entries.compact()).toBe(2)
    let list = await entries.segmentList()
    expect(list.length).toBe(2 * (1 + BATCHES - perRun))
    // With `all`, the rest too.
    // With `all`, the rest too: the first batches' 2 rows become a segment (of both tags: nothing to merge it with),
    // and each tag's last 2 segments are merged.
    expect(await entries.compact({ all: true })).toBe(1 + 2)
    list = await entries.segmentList()
    expect(list.length).toBe(2 * 2 + 1)
    const tagCounts: number[] = []
    for (const m of list) tagCounts.push(headerShape(await blobs.map!(m.key))!.tags.length)
    expect(tagCounts.sort()).toEqual([1, 1, 1, 1, 2])
    // Every entry once, with its key (what walks and cursors rely on), and the counts.
    const walked = await walkAll(entries, names)
    expect(walked.keys).toEqual(keysBefore)
    expect(sorted(walked.out)).toEqual(sorted(sent))
    expect(await entries.count([ids.get('web')!], T0, T0 + 1e9, Buffer.from('needle'))).toBe((BATCHES * PER_BATCH) / 20)
    // The old blobs are gone, their journal rows done; no blob but the registered segments'.
    for (const m of before) expect(await blobs.stat(m.key)).toBeUndefined()
    expect(store.db.query('SELECT count(*) AS n FROM entry_segment_removals WHERE blob_gone = 0').get()).toEqual({ n: 0 })
    const onDisk: string[] = []
    for await (const b of blobs.list()) onDisk.push(b.key)
    expect(onDisk.sort()).toEqual(list.map((m) => m.key).sort())
    // Statistics: the merged segments' sums are the old ones' (retention reads no segment again).
    const stats = await store.removal.segmentTags()
    const statsAfter = new Map<number, { count: number; bytes: number }>()
    for (const m of list) {
      const st = stats.get(m.seq)
      if (!st) continue
      for (const s of st) {
        const was = statsAfter.get(s.tagId) ?? { count: 0, bytes: 0 }
        statsAfter.set(s.tagId, { count: was.count + s.count, bytes: was.bytes + s.bytes })
      }
    }
    // The segment of the first batches' rows has none yet (retention makes them when it needs them).
    for (const [tagId, s] of statsAfter) expect(s).toEqual(statsBefore.get(tagId)!)
  } finally {
    await store.close()
  }
})

test('a merge whose segment a retention rewrite replaced meanwhile registers nothing and drops its blob', async () => {
  let rewriteOne: (() => Promise<void>) | null = null
  const { store, blobs, entries, sent, ids } = await setup('race', (repo) => ({
    ...repo,
    latest: () => repo.latest(),
    state: () => repo.state(),
    listAfter: (seq) => repo.listAfter(seq),
    register: (s, r, c) => repo.register(s, r, c),
    blobReferences: () => repo.blobReferences(),
    reserveIds: (n) => repo.reserveIds!(n),
    registerIngested: (s, t, u, c) => repo.registerIngested!(s, t, u, c),
    blobsRemoved: (i) => repo.blobsRemoved!(i),
    // Another change takes one of the segments between the merge's blob write and its transaction.
    merge: async (olds, next, created) => {
      await rewriteOne?.()
      rewriteOne = null
      return repo.merge!(olds, next, created)
    },
  }))
  try {
    const names = new Map([...ids].map(([n, id]) => [id, n]))
    const before = await entries.segmentList()
    const victim = before[0]!
    // A retention rewrite of the victim with the same entries (a rewrite that removed nothing but kept all).
    rewriteOne = async () => {
      const seg = await entries.open(victim)
      const kept = Array.from({ length: seg.count }, (_, i) => ({ ts: seg.ts[i]!, tagId: seg.tag[i]!, id: seg.id[i]!, src: seg.srcs[seg.srcIdx[i]!]!, data: seg.entryData(i) }))
      const encoded = await entries.seal(kept)
      const key = 'segments/rewritten'
      await blobs.put(key, new Blob([encoded]).stream())
      const meta = { key, count: kept.length, bytes: encoded.byteLength, min: { ts: kept[0]!.ts, tagId: kept[0]!.tagId, id: kept[0]!.id }, max: { ts: kept.at(-1)!.ts, tagId: kept.at(-1)!.tagId, id: kept.at(-1)!.id } }
      expect(await store.removal.replaceSegment(victim, { meta, tags: [] }, [], Date.now())).toBe(true)
    }
    const segmentsBefore = before.length
    // The first merge fails (its segment was taken); the second of the run goes on.
    expect(await entries.compact({ maxSegments: 1 })).toBe(0)
    const list = await entries.segmentList()
    expect(list.length).toBe(segmentsBefore)
    expect(list.some((m) => m.key === 'segments/rewritten')).toBe(true)
    // The dropped merge's blob is gone: on disk, the registered segments and the victim's old blob (its journal row).
    const onDisk: string[] = []
    for await (const b of blobs.list()) onDisk.push(b.key)
    expect(onDisk.sort()).toEqual([...list.map((m) => m.key), victim.key].sort())
    expect(sorted((await walkAll(entries, names)).out)).toEqual(sorted(sent))
    // The next run merges over the new list.
    expect(await entries.compact()).toBe(2)
    expect(sorted((await walkAll(entries, names)).out)).toEqual(sorted(sent))
  } finally {
    await store.close()
  }
})
