// The CLI rows of bench/engine.sh on their own (bench/README.md, "The CLI against the server's time"): against a
// running Quarry, ingests ENTRIES access-log lines of bench/engine-data.ts (the engine bench's, 182 MB per 1,000,000)
// under the tag `access`, waits until the compaction has moved them into segments, then in ROUNDS interleaved rounds
// times each of the engine bench's searches of today twice:
//   - the server's own time, as bench/engine.ts takes it: REST launch, details long-polled, the JSON download
//     (launch to the last result; the deletion after the clock stops);
//   - `quarry search run QUERY --json --no-history` of each CLI tree named (a process of its own, exec to exit), so
//     that an older tree and this one are compared on the same data in the same minutes;
//   - the floor of a CLI in Bun (bench/engine-cli-floor.ts: a process that imports nothing and makes the same requests);
// with the 1-min load average at each round's start and each CLI process's own CPU time (user + system: what the
// process costs, which depends less on the load than its wall time); checks that every CLI printed the count or the
// number of results the server gave; prints the medians and ratios (CLI time over the server's) as Markdown and one
// JSON line (last). BENCH_ENTRIES=0 ingests nothing: a server that holds the lines already (from an earlier run).
//
//   bun run bench/engine-cli.ts <base-url> <admin-password> <data-dir> <cli-tree>...
// Tunables (environment): BENCH_ENTRIES (1000000), BENCH_ROUNDS (5), BENCH_SETTLE_S (600).
import { Database } from 'bun:sqlite'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { STEP_MS, T0, accessLine } from './engine-data'
import { benchSession, found, json, timeSearch } from './session'

const [base, password, dataDir, ...named] = process.argv.slice(2)
if (!base || !password || !dataDir || named.length === 0) {
  console.error('usage: bun run bench/engine-cli.ts <base-url> <admin-password> <data-dir> <cli-tree>...')
  process.exit(2)
}
const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 1_000_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const SETTLE_S = Number(process.env.BENCH_SETTLE_S ?? 600)
const BATCH = 1000
const log = (msg: string) => console.error(`== ${msg}`)
const load1 = () => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0])

const { auth, token } = await benchSession(base, password, 'bench-engine-cli')

log(`ingesting ${ENTRIES} access lines`)
for (let b = 0; b < ENTRIES; b += BATCH) {
  const parts: string[] = []
  for (let i = b; i < Math.min(ENTRIES, b + BATCH); i++) {
    parts.push(`{"TS":"${new Date(T0 + i * STEP_MS).toISOString()}","Tag":"access","SRC":"192.0.2.${i % 250}","Data":"${Buffer.from(accessLine(i)).toString('base64')}"}`)
  }
  const answer = await json(await fetch(`${base}/api/ingest/json`, { method: 'POST', headers: auth, body: `[${parts.join(',')}]` }), 'ingest')
  if (answer.Count !== parts.length) throw new Error(`ingest answered Count ${answer.Count}`)
}
let stored = 0
{
  log('waiting for the compaction into segments')
  const db = new Database(join(dataDir, 'quarry.db'), { readonly: true })
  const deadline = Date.now() + SETTLE_S * 1000
  for (;;) {
    const rows = db.query<{ n: number }, []>('SELECT count(*) AS n FROM entries').get()!.n
    if (rows < 30_000 || Date.now() > deadline) break
    await Bun.sleep(1000)
  }
  const segs = db.query<{ n: number; c: number }, []>('SELECT count(*) AS n, coalesce(sum(count), 0) AS c FROM entry_segments').get()!
  db.close()
  stored = segs.c
  log(`   ${segs.c} entries in ${segs.n} segments`)
}

/** The server's own time (timeSearch: launch, long-polled details, download), as bench/engine.ts takes it. */
const server = (query: string) => timeSearch(base!, auth, query)

/** The floor's name among the trees. */
const FLOOR = 'floor'
/**
 * `quarry search run` of a tree, as a user runs it: a new Bun process on the tree's cli/main.ts, exec to exit (the
 * floor: bench/engine-cli-floor.ts).
 */
async function cli(tree: string, query: string): Promise<{ ms: number; cpuMs: number; found: number }> {
  const t = performance.now()
  const command = tree === FLOOR ? [join(import.meta.dir, 'engine-cli-floor.ts'), query] : [join(tree, 'cli', 'main.ts'), 'search', 'run', query, '--json', '--no-history']
  const p = Bun.spawn([process.execPath, ...command], {
    stdout: 'pipe',
    stderr: 'pipe',
    env: { ...process.env, QUARRY_URL: base!, QUARRY_TOKEN: token },
  })
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
  const ms = performance.now() - t
  if (code !== 0) throw new Error(`${tree}: quarry search run ${query}: exit ${code}: ${err.slice(0, 300)}`)
  const { user, system } = p.resourceUsage()!.cpuTime
  return { ms, cpuMs: Number(user + system) / 1000, found: found(JSON.parse(out)) }
}

const trees = [FLOOR, ...named]
const QUERIES = ['tag=access grep marker', 'tag=access count', 'tag=access grep GET | count', 'tag=access regex "marker[0-9a-f]{4}"']
const times: Record<string, Record<string, number[]>> = {}
const cpu: Record<string, number[]> = {}
const loads: number[] = []
// One unmeasured pass first: the server's decoded-segment cache is filled and every CLI's files are in the page cache.
for (const q of QUERIES) {
  await server(q)
  for (const tree of trees) await cli(tree, q)
}
for (let round = 1; round <= ROUNDS; round++) {
  loads.push(load1())
  log(`round ${round} of ${ROUNDS} (load ${loads.at(-1)})`)
  for (const q of QUERIES) {
    times[q] ??= {}
    const s = await server(q)
    ;(times[q].server ??= []).push(s.ms)
    for (const tree of trees) {
      const c = await cli(tree, q)
      if (c.found !== s.found) throw new Error(`${tree}: ${q}: the CLI found ${c.found}, the server ${s.found}`)
      ;(times[q][tree] ??= []).push(c.ms)
      ;(cpu[tree] ??= []).push(c.cpuMs)
    }
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const s3 = (ms: number) => (ms / 1000).toFixed(3)
console.log(`${stored} access lines in segments; ${ROUNDS} rounds, medians; 1-min load average at the rounds' starts: ${loads.join(', ')}\n`)
console.log(`| query | server | ${trees.map((t) => `CLI ${t}`).join(' | ')} | ${trees.map((t) => `CLI / server (${t})`).join(' | ')} |`)
console.log(`| --- | ---: | ${trees.map(() => '---:').join(' | ')} | ${trees.map(() => '---:').join(' | ')} |`)
const report: Record<string, unknown> = {}
for (const q of QUERIES) {
  const sm = median(times[q]!.server!)
  const cms = trees.map((t) => median(times[q]![t]!))
  console.log(`| \`${q.replaceAll('|', '\\|')}\` | ${s3(sm)} s | ${cms.map((m) => `${s3(m)} s`).join(' | ')} | ${cms.map((m) => `**${(m / sm).toFixed(2)}**`).join(' | ')} |`)
  report[q] = Object.fromEntries(Object.entries(times[q]!).map(([k, xs]) => [k, xs.map((x) => Math.round(x * 10) / 10)]))
}
console.log(`\nCPU time of a CLI process (user + system, every query), median: ${trees.map((t) => `${t} ${median(cpu[t]!).toFixed(1)} ms`).join(', ')}`)
console.log(JSON.stringify({ entries: stored, rounds: ROUNDS, loads, times: report, cliCpuMs: Object.fromEntries(Object.entries(cpu).map(([t, xs]) => [t, xs.map((x) => Math.round(x * 10) / 10)])) }))
