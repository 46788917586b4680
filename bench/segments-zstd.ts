// Compressed segments against plain ones (server/search/segment.ts; bench/README.md, "compressed segments"): the
// engine bench's access log (bench/engine-data.ts, one line in 1,000 holding `marker`) stored as segments plain and
// compressed with zstd at a few levels, each in a fresh SQLite store and disk blob store of its own, all compacted.
// Per store: the segments' bytes against the input's, the compaction's time, and the whole search as the server runs
// it (SearchManager.launch to settled, results written to its working files) of `grep marker` and `count`, in
// interleaved rounds against GNU `grep -c` over the same bytes in one file; each figure its median round. The
// decoded-segment cache (64 MiB) is smaller than the data, so every round decodes (and decompresses) every segment.
//
//   bun run bench/segments-zstd.ts [entries] [rounds] [levels]   (default 1000000 entries, 3 rounds, levels 1,3)
//   BENCH_CACHE_MB=320 ...: a decoded-segment cache that holds every segment (the rounds after the first decode nothing)
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDiskBlobStore } from '../server/blob'
import { createSqliteStore } from '../server/repos'
import { createLogger } from '../server/runtime/log'
import { SearchManager } from '../server/search/manager'
import { SegmentedEntries } from '../server/search/segments'
import { accessLine } from './engine-data'

const N = Number(process.argv[2] ?? 1_000_000)
const ROUNDS = Number(process.argv[3] ?? 3)
const LEVELS = (process.argv[4] ?? '1,3').split(',').map(Number)
const tmp = mkdtempSync(join(tmpdir(), 'quarry-segments-zstd-'))
const log = (msg: string) => console.error(`== ${msg}`)

try {
  const file = join(tmp, 'access.log')
  const w = Bun.file(file).writer()
  for (let i = 0; i < N; i++) w.write(`${accessLine(i)}\n`)
  await w.end()
  const input = statSync(file).size
  log(`${N} access lines, ${(input / 1e6).toFixed(1)} MB`)

  const modes: { name: string; level: number | null }[] = [{ name: 'plain', level: null }, ...LEVELS.map((level) => ({ name: `zstd ${level}`, level }))]
  const stores = []
  for (const mode of modes) {
    const dir = join(tmp, mode.name.replace(' ', '-'))
    mkdirSync(dir, { recursive: true })
    const store = createSqliteStore(join(dir, 'quarry.db'))
    const blobs = await createDiskBlobStore({ dataDir: dir })
    const cacheBytes = process.env.BENCH_CACHE_MB ? Number(process.env.BENCH_CACHE_MB) << 20 : undefined
    const entries = new SegmentedEntries(store.entries, store.segments, blobs, { zstdLevel: mode.level, cacheBytes })
    const lines = (await Bun.file(file).text()).split('\n')
    const t0 = Date.parse('2026-01-01T00:00:00Z')
    for (let i = 0; i < N; i += 5000)
      await entries.ingest(lines.slice(i, Math.min(N, i + 5000)).map((l, j) => ({ ts: t0 + i + j, tag: 'access', src: '', data: Buffer.from(l) })))
    let t = performance.now()
    while ((await entries.compact({ all: true })) > 0) {}
    const compactS = (performance.now() - t) / 1000
    const bytes = store.db.query<{ n: number }, []>('SELECT sum(bytes) AS n FROM entry_segments').get()!.n
    const manager = new SearchManager({
      entries, searches: store.searches, blobs, log: createLogger('warn', () => {}), clock: Date.now, dataDir: join(dir, 'work'), graceMs: 60_000, maxPerUser: 1000,
    })
    stores.push({ mode, store, manager, bytes, compactS })
    log(`${mode.name}: segments ${(bytes / 1e6).toFixed(1)} MB (${(input / bytes).toFixed(2)} x smaller than the input), compaction ${compactS.toFixed(1)} s`)
  }

  async function search(m: SearchManager, q: string): Promise<number> {
    const query = await m.parse(q)
    const s = await m.launch({
      uid: 1, gid: 0, client: 'bench', clientExpires: 0, clientKind: 'session', userQuery: q, query,
      start: 0, end: Number.MAX_SAFE_INTEGER, background: true, noHistory: true, metadata: null,
    })
    await m.settled()
    if (s.record.error) throw new Error(s.record.error)
    const n = s.record.itemCount
    await m.delete({ uid: 1, admin: true, groups: new Set() }, s.record.id)
    return n
  }
  async function grep(args: string[]): Promise<number> {
    const p = Bun.spawn(['grep', '-c', ...args, file], { stdout: 'pipe' })
    const out = await new Response(p.stdout).text()
    await p.exited
    return Number(out.trim())
  }
  const cases = [
    { name: 'grep marker', floor: () => grep(['marker']), query: 'tag=access grep marker' },
    { name: 'count', floor: () => grep(['^']), query: 'tag=access count' },
  ]
  const times = new Map<string, number[]>()
  const add = (k: string, ms: number) => times.set(k, [...(times.get(k) ?? []), ms])
  for (let r = 0; r < ROUNDS; r++)
    for (const c of cases) {
      let t = performance.now()
      const want = await c.floor()
      add(`${c.name}|grep -c`, performance.now() - t)
      for (const s of stores) {
        t = performance.now()
        const got = await search(s.manager, c.query)
        add(`${c.name}|${s.mode.name}`, performance.now() - t)
        // grep's count of lines against the search's results (count: one record holding the count)
        if (c.name !== 'count' && got !== want) throw new Error(`${s.mode.name} ${c.query}: ${got} results, grep -c ${want}`)
      }
      log(`round ${r + 1}: ${c.name} done`)
    }
  const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!
  console.log(`| segments | bytes (MB) | input / bytes | compaction (s) | ${cases.map((c) => `${c.name} (s) | of grep -c`).join(' | ')} |`)
  console.log(`| --- | ---: | ---: | ---: | ${cases.map(() => '---: | ---:').join(' | ')} |`)
  console.log(`| GNU grep -c (file) | ${(input / 1e6).toFixed(1)} | 1.00 | – | ${cases.map((c) => `${(median(times.get(`${c.name}|grep -c`)!) / 1000).toFixed(3)} | 1.00`).join(' | ')} |`)
  for (const s of stores)
    console.log(
      `| ${s.mode.name} | ${(s.bytes / 1e6).toFixed(1)} | ${(input / s.bytes).toFixed(2)} | ${s.compactS.toFixed(1)} | ${cases
        .map((c) => {
          const m = median(times.get(`${c.name}|${s.mode.name}`)!)
          return `${(m / 1000).toFixed(3)} | ${(m / median(times.get(`${c.name}|grep -c`)!)).toFixed(2)}`
        })
        .join(' | ')} |`,
    )
  for (const s of stores) {
    await s.manager.close()
    await s.store.close()
  }
} finally {
  rmSync(tmp, { recursive: true, force: true })
}
