// Small sealed segments against compacted ones (bench/README.md, "bench/ingest-merge.ts"): what a store fed by batches
// just above SEALED_INGEST_BYTES (each written straight into a segment of its own size) costs a search, and what the
// compaction's merge of small adjacent segments gives back. No HTTP: the engine's entries store (SegmentedEntries over
// a fresh SQLite store and a disk blob store, as the server builds them), the access lines of bench/engine-data.ts.
//
//   bun run bench/ingest-merge.ts [entries] [rounds]      (default 1000000 lines, 3 rounds)
//
// Three stores of the same lines:
//   sealed     ingested in batches of BATCH_BYTES of data (600 KiB): one segment per batch, not compacted
//   merged     the same, then compacted as the server's periodic job does (SegmentedEntries.compact until it writes
//              nothing: the merge of small adjacent segments of a tag; the rows of the first and last batches stay)
//   compacted  ingested as rows (no sealed path) and compacted normally into segments of SEGMENT_BYTES
// and per store, in interleaved rounds (each figure the median; wall and CPU ms of this process):
//   count      count(all entries)                      (segment metas alone)
//   count-tag  count(the tag's entries)                 (segment headers)
//   grep-count count(entries holding NEEDLE)            (every segment's data decompressed and searched)
//   grep-walk  the search walk with the grep hint: scan() with CHUNK entries or CHUNK_BYTES a step, as the runner
// The decoded-segment cache is the default (64 MiB, less than the data): each round decodes the segments again.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDiskBlobStore } from '../server/blob'
import { createSqliteStore } from '../server/repos'
import type { Cursor } from '../server/search/entries'
import { CHUNK, CHUNK_BYTES } from '../server/search/runner'
import { SegmentedEntries } from '../server/search/segments'
import { MARKER_EVERY, accessLine } from './engine-data'

const N = Number(process.argv[2] ?? 1_000_000)
const ROUNDS = Number(process.argv[3] ?? 3)
const BATCH_BYTES = 600 << 10
const NEEDLE = 'marker'
const T0 = 1_767_225_600_000
const enc = new TextEncoder()
const tmp = mkdtempSync(join(tmpdir(), 'quarry-ingest-merge-'))
const log = (msg: string) => console.error(`== ${msg}`)

try {
  const lines = Array.from({ length: N }, (_, i) => enc.encode(accessLine(i)))
  let expected = 0
  for (let i = 0; i < N; i += MARKER_EVERY) expected++
  const batches: { ts: number; tag: string; src: string; data: Uint8Array }[][] = []
  let batch: (typeof batches)[number] = []
  let size = 0
  for (let i = 0; i < N; i++) {
    batch.push({ ts: T0 + i * 10, tag: 'access', src: '10.0.0.1', data: lines[i]! })
    size += lines[i]!.byteLength
    if (size >= BATCH_BYTES) {
      batches.push(batch)
      batch = []
      size = 0
    }
  }
  if (batch.length > 0) batches.push(batch)

  async function build(name: string, sealed: boolean) {
    const dir = join(tmp, name)
    mkdirSync(dir)
    const store = createSqliteStore(join(dir, 'quarry.db'))
    const blobs = await createDiskBlobStore({ dataDir: dir })
    const entries = new SegmentedEntries(store.entries, store.segments, blobs, sealed ? {} : { sealedIngestBytes: Number.POSITIVE_INFINITY })
    const cpu0 = process.cpuUsage()
    const t = performance.now()
    for (const b of batches) await entries.ingest(b)
    const ingestMs = performance.now() - t
    const c = process.cpuUsage(cpu0)
    return { store, entries, ingestMs, ingestCpuMs: (c.user + c.system) / 1000 }
  }
  /** Compaction runs until one writes nothing: as the server's periodic job (`all`: the last rows too, as a test does). */
  async function compactAll(entries: SegmentedEntries, all: boolean): Promise<{ ms: number; cpuMs: number }> {
    const cpu0 = process.cpuUsage()
    const t = performance.now()
    while ((await entries.compact({ all })) > 0) {}
    const c = process.cpuUsage(cpu0)
    return { ms: performance.now() - t, cpuMs: (c.user + c.system) / 1000 }
  }

  const sealed = await build('sealed', true)
  log(`sealed: ${batches.length} batches ingested in ${sealed.ingestMs.toFixed(0)} ms (${sealed.ingestCpuMs.toFixed(0)} ms CPU)`)
  // Not compacted: it keeps its small segments (and the first batch's rows: that batch created the tag).
  const merged = await build('merged', true)
  const mergeCost = await compactAll(merged.entries, false)
  log(`merged: ingested in ${merged.ingestMs.toFixed(0)} ms, compacted in ${mergeCost.ms.toFixed(0)} ms (${mergeCost.cpuMs.toFixed(0)} ms CPU)`)
  const compacted = await build('compacted', false)
  const compactCost = await compactAll(compacted.entries, true)
  log(`compacted: rows in ${compacted.ingestMs.toFixed(0)} ms, compacted in ${compactCost.ms.toFixed(0)} ms (${compactCost.cpuMs.toFixed(0)} ms CPU)`)
  const stores = { sealed: sealed.entries, merged: merged.entries, compacted: compacted.entries }
  for (const [name, e] of Object.entries(stores)) {
    const list = await e.segmentList()
    const bytes = list.reduce((a, m) => a + m.bytes, 0)
    log(`${name}: ${list.length} segments, ${(bytes / 1e6).toFixed(1)} MB of blobs`)
  }

  const tagId = (await sealed.entries.tagsNamed(['access']))[0]!.id
  const needle = enc.encode(NEEDLE)
  const end = T0 + N * 10
  async function walk(e: SegmentedEntries): Promise<number> {
    let cursor: Cursor = { ts: Number.MIN_SAFE_INTEGER, tagId: -1, id: -1 }
    let hits = 0
    for (;;) {
      const rows = await e.scan([tagId], cursor, Number.MAX_SAFE_INTEGER, CHUNK, CHUNK_BYTES, { needle })
      if (rows.length === 0) return hits
      cursor = rows.at(-1)!
      for (const r of rows) if (r.data && Buffer.from(r.data.buffer, r.data.byteOffset, r.data.byteLength).includes(NEEDLE)) hits++
    }
  }
  const stages: Record<string, [(e: SegmentedEntries) => Promise<number>, number]> = {
    count: [(e) => e.count(null, T0, end), N],
    'count-tag': [(e) => e.count([tagId], T0, end), N],
    'grep-count': [(e) => e.count([tagId], T0, end, needle), expected],
    'grep-walk': [walk, expected],
  }
  const times = new Map<string, number[]>()
  const cpus = new Map<string, number[]>()
  for (let r = 0; r < ROUNDS; r++) {
    const order = Object.entries(stores)
    for (let k = 0; k < r % order.length; k++) order.push(order.shift()!)
    for (const [store, e] of order)
      for (const [stage, [run, want]] of Object.entries(stages)) {
        Bun.gc(true)
        const cpu0 = process.cpuUsage()
        const t = performance.now()
        const got = await run(e)
        const ms = performance.now() - t
        const c = process.cpuUsage(cpu0)
        if (got !== want) throw new Error(`${store} ${stage}: ${got}, expected ${want}`)
        const key = `${store} ${stage}`
        times.set(key, [...(times.get(key) ?? []), ms])
        cpus.set(key, [...(cpus.get(key) ?? []), (c.user + c.system) / 1000])
      }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  console.log('| store | stage | ms (median) | CPU ms | rounds (ms) |')
  console.log('| --- | --- | ---: | ---: | --- |')
  for (const [key, xs] of times) {
    const [store, stage] = key.split(' ')
    console.log(`| ${store} | ${stage} | ${median(xs).toFixed(1)} | ${median(cpus.get(key)!).toFixed(1)} | ${xs.map((x) => x.toFixed(0)).join(', ')} |`)
  }
  for (const s of [sealed, merged, compacted]) await s.store.close()
} finally {
  rmSync(tmp, { recursive: true, force: true })
}
