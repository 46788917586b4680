// The grep scan of the embedded search engine against GNU `grep -c` over the same bytes in one file (bench/README.md),
// with a per-stage breakdown of the scan. No HTTP, no server: the entries store of server/search/entries.ts on a fresh
// SQLite file (the real schema), filled with bench/search-texts.ts's entries (1 in 100 holds the needle).
//
//   bun run bench/search-scan.ts [entries] [rounds]       (default 200000 entries of 1 KiB, 3 rounds)
//
// Stages, each over every entry, in interleaved rounds (the file and the database in the page cache):
//   grep -c       GNU grep counting the lines holding the needle in a file of the entries' bytes (the goal's floor)
//   sqlite-raw    `SELECT data FROM entries` in rowid order, blobs only: SQLite's row reads and Bun's blob copies
//   scan          the engine's walk (SqliteEntriesRepo.scan, CHUNK entries or CHUNK_BYTES a call, in (ts, tag, id)
//                 order through the index, one object per row): what a search reads
//   scan+wrap     + a Buffer view over each entry's bytes (what the pipeline is handed; no decoding to text)
//   scan+grep     + Buffer.includes(needle) per entry: the engine's grep without the step scheduling and results
//   search-loop   + the run loop's per-entry clock check (performance.now()) and a yield every STEP_MS: the grep
//                 search as server/search/runner.ts runs it, results not written
//   blocks+grep   what a storage of blocks would give (not Quarry's storage): the same entries concatenated, 1,024 per
//                 row in a table of its own, read in rowid order and searched with Buffer.indexOf over each block
// and over sealed segments (server/search/segments.ts; a second store with the same entries, all compacted into
// segments of SEGMENT_BYTES in a disk blob store; the segment cache is smaller than the data, so every round reads
// every segment's file again, from the page cache):
//   seg-copy      every segment blob read into memory (BlobStore.body, then arrayBuffer: what S3 segments cost)
//   seg-map       every segment blob mapped (BlobStore.map: what the engine does on disk), its last byte read
//   seg-indexOf   mapped, decoded, its data searched with one Buffer.indexOf loop, hits mapped to entries by offset
//   seg-scan      the engine's walk over the segments (SegmentedEntries.scan with the grep's needle, CHUNK entries or
//                 CHUNK_BYTES examined a call), each answered entry's bytes checked with Buffer.includes
//   seg-loop      + the run loop's per-entry clock check and a yield every STEP_MS
//   search-rows   the whole search as the server runs it (SearchManager.launch of `tag=bench grep NEEDLE`, results
//                 written to its working files) over the rows
//   search-seg    the same search over the segments
// MB/s are of the entries' bytes (10^6 bytes/s). The needle count of every stage is checked against grep's.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SearchManager } from '../server/search/manager'
import { CHUNK, CHUNK_BYTES, STEP_MS } from '../server/search/runner'
import { type Cursor, type EntriesRepo, SqliteEntriesRepo } from '../server/search/entries'
import { createSqliteStore } from '../server/repos'
import { createDiskBlobStore } from '../server/blob'
import { createLogger } from '../server/runtime/log'
import { Segment } from '../server/search/segment'
import { SegmentedEntries } from '../server/search/segments'
import { NEEDLE, entryText } from './search-texts'

const N = Number(process.argv[2] ?? 200_000)
const ROUNDS = Number(process.argv[3] ?? 3)
const BYTES = 1024
const tmp = mkdtempSync(join(tmpdir(), 'quarry-search-scan-'))

try {
  const store = createSqliteStore(join(tmp, 'quarry.db'))
  const repo = store.entries as SqliteEntriesRepo
  const enc = new TextEncoder()
  const parts: Uint8Array[] = []
  let t = performance.now()
  // The same entries in a second store, compacted into segments in a disk blob store.
  const segDir = join(tmp, 'seg')
  const segStore = createSqliteStore(join(tmp, 'segments.db'))
  const segBlobs = await createDiskBlobStore({ dataDir: segDir })
  const segmented = new SegmentedEntries(segStore.entries, segStore.segments, segBlobs)
  for (let i = 0; i < N; i += 1000) {
    const batch = []
    for (let j = i; j < Math.min(N, i + 1000); j++) {
      const data = enc.encode(entryText(j, j % 100 === 0, BYTES))
      parts.push(data, enc.encode('\n'))
      batch.push({ ts: 1_767_225_600_000 + j, tag: 'bench', src: '10.0.0.1', data })
    }
    await repo.ingest(batch)
    await segStore.entries.ingest(batch)
  }
  while ((await segmented.compact({ all: true })) > 0) {}
  const segMetas = await segStore.segments.listAfter(0)
  // The same bytes as blocks of 1,024 entries (each entry followed by a newline), for the blocks+grep stage.
  store.db.run('CREATE TABLE bench_blocks (id INTEGER PRIMARY KEY, data BLOB NOT NULL)')
  const addBlock = store.db.query('INSERT INTO bench_blocks (data) VALUES (?)')
  store.db.transaction(() => {
    for (let i = 0; i < parts.length; i += 2048) addBlock.run(Buffer.concat(parts.slice(i, i + 2048)))
  })()
  const file = join(tmp, 'entries.txt')
  writeFileSync(file, Buffer.concat(parts))
  parts.length = 0
  const dataBytes = N * BYTES
  console.log(`${N} entries of ${BYTES} bytes ingested and written as one file in ${((performance.now() - t) / 1000).toFixed(1)} s`)
  const tagId = (await repo.tagsNamed(['bench']))[0]!.id
  const needle = Buffer.from(NEEDLE)
  const expected = Math.ceil(N / 100)

  async function walk(each: (data: Uint8Array) => boolean, loop = false, from: EntriesRepo = repo, hint?: { needle: Uint8Array }): Promise<number> {
    let cursor: Cursor = { ts: Number.MIN_SAFE_INTEGER, tagId: -1, id: -1 }
    let hits = 0
    let stepStart = performance.now()
    for (;;) {
      const rows = await from.scan([tagId], cursor, Number.MAX_SAFE_INTEGER, CHUNK, CHUNK_BYTES, hint)
      if (rows.length === 0) return hits
      cursor = rows.at(-1)!
      for (const r of rows) {
        if (r.data && each(r.data)) hits++
        if (loop && performance.now() - stepStart >= STEP_MS) {
          await new Promise((resolve) => setImmediate(resolve))
          stepStart = performance.now()
        }
      }
    }
  }
  const log = createLogger('warn', () => {})
  const manager = (entries: EntriesRepo, dataDir: string) =>
    new SearchManager({ entries, searches: store.searches, blobs: segBlobs, log, clock: Date.now, dataDir, graceMs: 60_000, maxPerUser: 1000 })
  const rowsSearch = manager(repo, join(tmp, 'work-rows'))
  const segSearch = manager(segmented, join(tmp, 'work-seg'))
  const query = await rowsSearch.parse(`tag=bench grep ${NEEDLE}`)
  async function search(m: SearchManager): Promise<number> {
    const s = await m.launch({
      uid: 1, gid: 0, client: 'bench', clientExpires: 0, clientKind: 'session', userQuery: `tag=bench grep ${NEEDLE}`, query,
      start: 0, end: Number.MAX_SAFE_INTEGER, background: true, noHistory: true, metadata: null,
    })
    await m.settled()
    if (s.record.error) throw new Error(s.record.error)
    const n = s.record.itemCount
    await m.delete({ uid: 1, admin: true, groups: new Set() }, s.record.id)
    return n
  }
  /** The CPU time of the last stage run in a child process (grep), in ms. */
  let childCpuMs: number | null = null
  const stages: Record<string, () => Promise<number>> = {
    'grep -c': async () => {
      const p = Bun.spawn(['grep', '-c', NEEDLE, file], { stdout: 'pipe' })
      const out = await new Response(p.stdout).text()
      await p.exited
      childCpuMs = Number(p.resourceUsage()!.cpuTime.total) / 1000
      return Number(out.trim())
    },
    'sqlite-raw': async () => {
      let hits = 0
      for (const r of store.db.query<{ data: Uint8Array }, []>('SELECT data FROM entries').iterate()) if (r.data[0] === needle[0]) hits++
      return hits
    },
    scan: () => walk((d) => d[0] === needle[0]),
    'blocks+grep': async () => {
      let hits = 0
      for (const r of store.db.query<{ data: Uint8Array }, []>('SELECT data FROM bench_blocks').iterate()) {
        const b = Buffer.from(r.data.buffer, r.data.byteOffset, r.data.byteLength)
        for (let at = b.indexOf(needle); at !== -1; at = b.indexOf(needle, at + needle.length)) hits++
      }
      return hits
    },
    'scan+wrap': () => walk((d) => Buffer.from(d.buffer, d.byteOffset, d.byteLength)[0] === needle[0]),
    'scan+grep': () => walk((d) => Buffer.from(d.buffer, d.byteOffset, d.byteLength).includes(needle)),
    'search-loop': () => walk((d) => Buffer.from(d.buffer, d.byteOffset, d.byteLength).includes(needle), true),
    'seg-map': async () => {
      let hits = 0
      for (const m of segMetas) {
        const bytes = await segBlobs.map!(m.key)
        if (bytes[bytes.length - 1] === needle[0]) hits++
      }
      return hits
    },
    'seg-copy': async () => {
      let hits = 0
      for (const m of segMetas) {
        const body = await segBlobs.body(m.key)
        const bytes = new Uint8Array(body instanceof Blob ? await body.arrayBuffer() : await new Response(body).arrayBuffer())
        if (bytes[bytes.length - 1] === needle[0]) hits++
      }
      return hits
    },
    'seg-indexOf': async () => {
      let hits = 0
      for (const m of segMetas) {
        const seg = new Segment(await segBlobs.map!(m.key))
        for (let pos = 0, at = seg.data.indexOf(needle); at !== -1; at = seg.data.indexOf(needle, pos)) {
          const e = seg.entryAt(at, 0, seg.count)
          if (at + needle.length <= seg.off[e + 1]!) {
            hits++
            pos = seg.off[e + 1]!
          } else pos = at + 1
        }
      }
      return hits
    },
    'seg-scan': () => walk((d) => Buffer.from(d.buffer, d.byteOffset, d.byteLength).includes(needle), false, segmented, { needle }),
    'seg-loop': () => walk((d) => Buffer.from(d.buffer, d.byteOffset, d.byteLength).includes(needle), true, segmented, { needle }),
    'search-rows': () => search(rowsSearch),
    'search-seg': () => search(segSearch),
  }
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(stages).map((k) => [k, []]))
  const cpus: Record<string, number[]> = Object.fromEntries(Object.keys(stages).map((k) => [k, []]))
  const loads: string[] = []
  for (let r = 0; r < ROUNDS; r++) {
    loads.push((await Bun.file('/proc/loadavg').text()).split(' ')[0]!)
    for (const [name, run] of Object.entries(stages)) {
      Bun.gc(true)
      childCpuMs = null
      const cpu0 = process.cpuUsage()
      t = performance.now()
      const hits = await run()
      times[name]!.push(performance.now() - t)
      const cpu = process.cpuUsage(cpu0)
      cpus[name]!.push(childCpuMs ?? (cpu.user + cpu.system) / 1000)
      // Stages that only look at the first byte count entries starting with N (the needle's entries, and a few others).
      if ((name === 'grep -c' || name.endsWith('grep') || name.endsWith('loop') || name.startsWith('search') || name === 'seg-indexOf' || name === 'seg-scan') && hits !== expected)
        throw new Error(`${name} counted ${hits} needles, expected ${expected}`)
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!
  const grepMs = median(times['grep -c']!)
  console.log(`${segMetas.length} segments of about ${Math.round(dataBytes / segMetas.length / 1024)} KiB of entries each`)
  console.log(`${ROUNDS} interleaved rounds; 1-min load average at each round: ${loads.join(' ')}`)
  const grepCpu = median(cpus['grep -c']!)
  // Wall time and CPU time (user + system; of the grep process for grep -c, of this process otherwise), each as a median
  // over the rounds and as a share of grep -c's; on a loaded machine the CPU share is the steadier of the two.
  console.log(
    '| stage | median s | MB/s | of `grep -c` | CPU s | CPU of `grep -c` | per round (s) |\n| --- | ---: | ---: | ---: | ---: | ---: | --- |',
  )
  for (const [name, xs] of Object.entries(times)) {
    const ms = median(xs)
    const cpuMs = median(cpus[name]!)
    console.log(
      `| ${name} | ${(ms / 1000).toFixed(2)} | ${(dataBytes / ms / 1000).toFixed(0)} | ${((100 * grepMs) / ms).toFixed(1)} % | ${(cpuMs / 1000).toFixed(2)} | ${((100 * grepCpu) / cpuMs).toFixed(1)} % | ${xs.map((x) => (x / 1000).toFixed(2)).join(' ')} |`,
    )
  }
  await rowsSearch.close()
  await segSearch.close()
  store.db.close()
  segStore.db.close()
} finally {
  rmSync(tmp, { recursive: true, force: true })
}
