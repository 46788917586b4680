// The driver of bench/engine.sh (see bench/README.md, "bench/engine.sh"): against a running Quarry,
//   1. writes ENTRIES generated lines of each kind (bench/engine-data.ts: access log, JSON, key=value) to one file
//      each, and ingests the same lines, one entry a line, under the tags access, json and kv (POST /api/ingest/json,
//      batches of 1,000, one request at a time); then waits until the compaction has moved them into segments;
//   2. in ROUNDS interleaved rounds, times each case end to end as a user waits for it (launch to the last result
//      downloaded: REST launch, details long-polled (?wait=5) until it ends, then the JSON download) beside its baselines on the same
//      bytes in the files, in the same round: the floor (this Bun process reading the file and doing only the same
//      parsing into a Map of counts) and the tools people reach for (jq, gawk, GNU grep), and for the searches that
//      exist today also `quarry search run` (the CLI as a user runs it: a new process, launch to the last result);
//   3. samples the server's RSS while `stats count by` runs over 1,000,000 distinct keys;
//   4. prints the medians as Markdown tables and one JSON object (the last line).
// A case whose query the server refuses (a module this tree does not have yet) is reported as such, not timed.
//
//   bun run bench/engine.ts <base-url> <admin-password> <work-dir> <server-pid> <data-dir>
// Tunables (environment): BENCH_ENTRIES (1000000), BENCH_ROUNDS (3), BENCH_CASES (a regex
// over the case names: only those), BENCH_SETTLE_S (600: at most this long to wait for the compaction).
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { ACCESS_PATTERN, KIND_OFFSET_MS, MARKER_EVERY, STEP_MS, T0, accessLine, jsonLine, kvLine } from './engine-data'
import { benchSession, json, timeSearch } from './session'

const [base, password, work, serverPid, dataDir] = process.argv.slice(2)
if (!base || !password || !work || !serverPid || !dataDir) {
  console.error('usage: bun run bench/engine.ts <base-url> <admin-password> <work-dir> <server-pid> <data-dir>')
  process.exit(2)
}
const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 1_000_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const ONLY = process.env.BENCH_CASES ? new RegExp(process.env.BENCH_CASES) : null
const SETTLE_S = Number(process.env.BENCH_SETTLE_S ?? 600)
const BATCH = 1000

function fail(msg: string): never {
  console.error(`bench/engine.ts: ${msg}`)
  process.exit(1)
}
const log = (msg: string) => console.error(`== ${msg}`)

const { auth, token } = await benchSession(base, password, 'bench-engine')

// --- 1. the data: files and entries ----------------------------------------------------------------------------
const kinds = { access: accessLine, json: jsonLine, kv: kvLine } as const
type Kind = keyof typeof kinds
const files: Record<Kind, string> = { access: join(work, 'access.log'), json: join(work, 'json.log'), kv: join(work, 'kv.log') }
const fileBytes: Record<string, number> = {}
for (const [kind, line] of Object.entries(kinds) as [Kind, (i: number) => string][]) {
  log(`writing and ingesting ${ENTRIES} ${kind} lines`)
  const writer = Bun.file(files[kind]).writer()
  let ingestMs = 0
  let bytes = 0
  for (let b = 0; b < ENTRIES; b += BATCH) {
    const parts: string[] = []
    for (let i = b; i < Math.min(ENTRIES, b + BATCH); i++) {
      const text = line(i)
      writer.write(`${text}\n`)
      bytes += Buffer.byteLength(text) + 1
      parts.push(`{"TS":"${new Date(T0 + KIND_OFFSET_MS[kind] + i * STEP_MS).toISOString()}","Tag":"${kind}","SRC":"192.0.2.${i % 250}","Data":"${Buffer.from(text).toString('base64')}"}`)
    }
    const t = performance.now()
    const answer = await json(await fetch(`${base}/api/ingest/json`, { method: 'POST', headers: auth, body: `[${parts.join(',')}]` }), 'ingest')
    ingestMs += performance.now() - t
    if (answer.Count !== parts.length) fail(`ingest answered Count ${answer.Count}`)
  }
  await writer.end()
  fileBytes[kind] = bytes
  log(`   ${kind}: ${(bytes / 1e6).toFixed(1)} MB, ${Math.round(ENTRIES / (ingestMs / 1000))} entries/s`)
}
// The server compacts rows into segments every QUARRY_COMPACT_INTERVAL; what is left in rows is less than a segment.
{
  log('waiting for the compaction into segments')
  const db = new Database(join(dataDir, 'quarry.db'), { readonly: true })
  const deadline = Date.now() + SETTLE_S * 1000
  let rows = Number.POSITIVE_INFINITY
  for (;;) {
    rows = db.query<{ n: number }, []>('SELECT count(*) AS n FROM entries').get()!.n
    if (rows < 30_000 || Date.now() > deadline) break
    await Bun.sleep(1000)
  }
  const segs = db.query<{ n: number; c: number }, []>('SELECT count(*) AS n, coalesce(sum(count), 0) AS c FROM entry_segments').get()!
  db.close()
  log(`   ${segs.c} entries in ${segs.n} segments, ${rows} left in rows`)
}

// --- 2. the cases ------------------------------------------------------------------------------------------------
interface Outcome {
  ms: number
  /** What the run found (a count, a number of result rows): checked equal across engine and baselines where comparable. */
  found?: number
}
type Runner = () => Promise<Outcome>

/** Runs a command; its stdout as text. */
async function sh(cmd: string[], env?: Record<string, string>): Promise<string> {
  const p = Bun.spawn(cmd, { stdout: 'pipe', stderr: 'pipe', env: { ...process.env, ...env } })
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()])
  if ((await p.exited) !== 0 && !(cmd[0] === 'grep' && out.trim() === '0')) throw new Error(`${cmd.join(' ')}: ${err.slice(0, 300)}`)
  return out
}
const timed = async (f: () => Promise<number | undefined>): Promise<Outcome> => {
  const t = performance.now()
  const found = await f()
  return { ms: performance.now() - t, found }
}

/** The query through the server as a user waits for it (timeSearch: launch, long-polled details, download). */
function engine(query: string): Runner {
  return () => timeSearch(base!, auth, query)
}

/** The same through `quarry search run --json`: a process of its own, as a user runs it. */
function cli(query: string): Runner {
  return () =>
    timed(async () => {
      const out = await sh([process.execPath, 'run', 'cli/main.ts', 'search', 'run', query, '--json', '--no-history'], { QUARRY_URL: base!, QUARRY_TOKEN: token })
      const results = JSON.parse(out)
      return results.length === 1 && typeof results[0]?.Count === 'number' ? results[0].Count : results.length
    })
}

/** A tool's run over the file; `parse` reads what it found from its output. */
const tool = (cmd: string[], parse: (out: string) => number): Runner => () => timed(async () => parse(await sh(cmd)))
const lines = (out: string) => out.split('\n').filter((l) => l.trim() !== '').length

/** The floor: this process reads the file and walks its lines with `each`; `result` gives what was found. */
function floor<S>(kind: Kind, start: () => S, each: (s: S, line: string) => void, result: (s: S) => number): Runner {
  return () =>
    timed(async () => {
      const text = await Bun.file(files[kind]).text()
      const s = start()
      for (let at = 0; at < text.length; ) {
        let nl = text.indexOf('\n', at)
        if (nl === -1) nl = text.length
        if (nl > at) each(s, text.slice(at, nl))
        at = nl + 1
      }
      return result(s)
    })
}
const countBy = () => new Map<string, number>()
const add = (m: Map<string, number>, k: string | undefined) => {
  if (k !== undefined) m.set(k, (m.get(k) ?? 0) + 1)
}
const kvField = (line: string, key: string): string | undefined => {
  const at = line.indexOf(` ${key}=`)
  if (at === -1) return line.startsWith(`${key}=`) ? line.slice(key.length + 1, (line.indexOf(' ') + 1 || line.length + 1) - 1) : undefined
  const from = at + key.length + 2
  const to = line.indexOf(' ', from)
  return line.slice(from, to === -1 ? line.length : to)
}
const p95ByKey = () => new Map<string, number[]>()
const addValue = (m: Map<string, number[]>, k: string | undefined, v: number) => {
  if (k === undefined || Number.isNaN(v)) return
  const xs = m.get(k)
  if (xs) xs.push(v)
  else m.set(k, [v])
}
const p95s = (m: Map<string, number[]>) => {
  for (const xs of m.values()) xs.sort((a, b) => a - b)[Math.floor(0.95 * (xs.length - 1))]
  return m.size
}
const jsRe = (p: string, flags = '') => new RegExp(p.replaceAll('(?P<', '(?<'), flags)
const accessRe = jsRe(ACCESS_PATTERN)

const gawkCountBy = (key: string, file: string) =>
  tool(['gawk', `match($0, /(^| )${key}=([^ ]+)/, m) { c[m[2]]++ } END { for (k in c) print c[k], k }`, file], lines)

interface Case {
  name: string
  /** What it stands for in the issue's goals. */
  what: string
  kind: Kind
  /** Bytes the case reads (the file's). */
  bytes: () => number
  engine: string
  runners: Record<string, Runner>
  /** Runner names whose `found` must equal the engine's. */
  same?: string[]
}

const allCases: Case[] = [
  {
    name: 'json-count',
    what: '`stats count by` a field, JSON',
    kind: 'json',
    bytes: () => fileBytes.json!,
    engine: 'tag=json json host | stats count by host',
    runners: {
      floor: floor('json', countBy, (m, l) => add(m, JSON.parse(l).host), (m) => m.size),
      'jq | sort | uniq -c': tool(['bash', '-c', `jq -r .host '${files.json}' | sort | uniq -c`], lines),
    },
  },
  {
    name: 'kv-count',
    what: '`stats count by` a field, key=value',
    kind: 'kv',
    bytes: () => fileBytes.kv!,
    engine: 'tag=kv kv host | stats count by host',
    runners: { floor: floor('kv', countBy, (m, l) => add(m, kvField(l, 'host')), (m) => m.size), 'gawk match()': gawkCountBy('host', files.kv) },
  },
  {
    name: 'json-p95',
    what: '`stats p95(x) by y`, JSON',
    kind: 'json',
    bytes: () => fileBytes.json!,
    engine: 'tag=json json host ms | stats p95(ms) by host',
    runners: {
      floor: floor('json', p95ByKey, (m, l) => {
        const o = JSON.parse(l)
        addValue(m, o.host, o.ms)
      }, p95s),
    },
  },
  {
    name: 'kv-p95',
    what: '`stats p95(x) by y`, key=value',
    kind: 'kv',
    bytes: () => fileBytes.kv!,
    engine: 'tag=kv kv host ms | stats p95(ms) by host',
    runners: {
      floor: floor('kv', p95ByKey, (m, l) => addValue(m, kvField(l, 'host'), Number(kvField(l, 'ms'))), p95s),
      'gawk match() + asort': tool(
        [
          'gawk',
          'match($0, / host=([^ ]+)/, h) && match($0, / ms=([0-9]+)/, v) { n[h[1]]++; x[h[1], n[h[1]]] = v[1] + 0 } END { for (k in n) { delete a; for (i = 1; i <= n[k]; i++) a[i] = x[k, i]; asort(a); print k, a[int(0.95 * (n[k] - 1)) + 1] } }',
          files.kv,
        ],
        lines,
      ),
    },
  },
  {
    name: 'kv-chart',
    what: '`stats count by host over 1m | chart count by host`, key=value',
    kind: 'kv',
    bytes: () => fileBytes.kv!,
    engine: 'tag=kv kv host | stats count by host over 1m | chart count by host',
    runners: {
      floor: floor('kv', countBy, (m, l) => add(m, `${kvField(l, 'ts')!.slice(0, 16)} ${kvField(l, 'host')}`), (m) => m.size),
      'gawk match()': tool(['gawk', 'match($0, /^ts=([^ ]{16})[^ ]* host=([^ ]+)/, m) { c[m[1] " " m[2]]++ } END { for (k in c) print c[k], k }', files.kv], lines),
    },
  },
  {
    name: 'regex-extract',
    what: '`regex` named extraction (6 captures) of every access-log line, then `count`',
    kind: 'access',
    bytes: () => fileBytes.access!,
    engine: `tag=access regex \`${ACCESS_PATTERN}\` | count`,
    runners: {
      floor: floor('access', () => ({ n: 0 }), (s, l) => {
        const m = accessRe.exec(l)
        if (m?.groups?.method !== undefined) s.n++
      }, (s) => s.n),
      'gawk match()': tool(
        ['gawk', 'match($0, /^([^ ]+) [^ ]+ [^ ]+ \\[([^\\]]+)\\] "([A-Z]+) ([^ ]+) HTTP\\/[0-9.]+" ([0-9][0-9][0-9]) ([0-9]+)/, m) { n++ } END { print n }', files.access],
        (o) => Number(o.trim()),
      ),
    },
    same: ['floor', 'gawk match()'],
  },
  // The searches that exist today, over the access log, against GNU grep on the same bytes and the CLI.
  {
    name: 'grep',
    what: '`grep marker` (1 line in 1,000)',
    kind: 'access',
    bytes: () => fileBytes.access!,
    engine: 'tag=access grep marker',
    runners: { 'grep -c': tool(['grep', '-c', 'marker', files.access], Number), 'quarry search run': cli('tag=access grep marker') },
    same: ['grep -c', 'quarry search run'],
  },
  {
    name: 'count',
    what: '`count` (every entry)',
    kind: 'access',
    bytes: () => fileBytes.access!,
    engine: 'tag=access count',
    runners: { "grep -c '^'": tool(['grep', '-c', '^', files.access], Number), 'quarry search run': cli('tag=access count') },
    same: ["grep -c '^'", 'quarry search run'],
  },
  {
    name: 'grep-count',
    what: '`grep GET | count` (1 line in 2)',
    kind: 'access',
    bytes: () => fileBytes.access!,
    engine: 'tag=access grep GET | count',
    runners: { 'grep -c GET': tool(['grep', '-c', 'GET', files.access], Number), 'quarry search run': cli('tag=access grep GET | count') },
    same: ['grep -c GET', 'quarry search run'],
  },
  {
    name: 'regex-literal',
    what: '`regex "marker[0-9a-f]{4}"` (a required literal)',
    kind: 'access',
    bytes: () => fileBytes.access!,
    engine: 'tag=access regex "marker[0-9a-f]{4}"',
    runners: {
      'grep -cE': tool(['grep', '-cE', 'marker[0-9a-f]{4}', files.access], Number),
      'quarry search run': cli('tag=access regex "marker[0-9a-f]{4}"'),
    },
    same: ['grep -cE', 'quarry search run'],
  },
]
const cases = allCases.filter((c) => ONLY === null || ONLY.test(c.name))

/** Whether the server accepts the query (a tree without some module refuses it with 400). */
async function accepted(query: string): Promise<string | null> {
  const res = await fetch(`${base}/api/searchctrl/launch`, { method: 'POST', headers: auth, body: JSON.stringify({ SearchString: query, NoHistory: true, Background: true }) })
  const text = await res.text()
  if (!res.ok) return JSON.parse(text).Error ?? text
  const { SearchID: id } = JSON.parse(text)
  await fetch(`${base}/api/searchctrl/${id}/stop`, { method: 'PUT', headers: auth })
  await fetch(`${base}/api/searchctrl/${id}`, { method: 'DELETE', headers: auth })
  return null
}
const refused = new Map<string, string>()
for (const c of cases) {
  const why = await accepted(c.engine)
  if (why !== null) {
    refused.set(c.name, why)
    log(`${c.name}: not run, the server refuses ${c.engine}: ${why}`)
  }
}
const runnable = cases.filter((c) => !refused.has(c.name))

const times = new Map<string, number[]>()
const found = new Map<string, number | undefined>()
const loads: string[] = []
for (let r = 0; r < ROUNDS; r++) {
  loads.push((await Bun.file('/proc/loadavg').text()).split(' ')[0]!)
  log(`round ${r + 1} of ${ROUNDS}`)
  for (const c of runnable) {
    for (const [name, run] of [['engine', engine(c.engine)] as const, ...Object.entries(c.runners)]) {
      Bun.gc(true)
      const o = await run()
      const key = `${c.name}\t${name}`
      times.set(key, [...(times.get(key) ?? []), o.ms])
      found.set(key, o.found)
    }
    for (const other of c.same ?? [])
      if (found.get(`${c.name}\t${other}`) !== found.get(`${c.name}\tengine`))
        fail(`${c.name}: the engine found ${found.get(`${c.name}\tengine`)}, ${other} ${found.get(`${c.name}\t${other}`)}`)
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!

// --- 3. RSS of stats count by over distinct keys ------------------------------------------------------------------
async function rssKiB(): Promise<number> {
  const status = await Bun.file(`/proc/${serverPid}/status`).text()
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
}
const distinctQuery = 'tag=kv kv req | stats count by req'
let distinct: { query: string; before: number; peak: number; ms: number; results?: number } | { query: string; refused: string }
{
  const why = ONLY === null || ONLY.test('distinct') ? await accepted(distinctQuery) : 'not asked (BENCH_CASES)'
  if (why !== null) distinct = { query: distinctQuery, refused: why }
  else {
    Bun.gc(true)
    const before = await rssKiB()
    let peak = before
    let sampling = true
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, await rssKiB())
        await Bun.sleep(20)
      }
    })()
    const o = await engine(distinctQuery)()
    sampling = false
    await sampler
    distinct = { query: distinctQuery, before, peak, ms: o.ms, results: o.found }
  }
}

// --- 4. report ---------------------------------------------------------------------------------------------------
const out: string[] = []
out.push(`${ENTRIES.toLocaleString('en')} entries of each kind (access log ${(fileBytes.access! / 1e6).toFixed(0)} MB, JSON ${(fileBytes.json! / 1e6).toFixed(0)} MB, key=value ${(fileBytes.kv! / 1e6).toFixed(0)} MB); ${ROUNDS} interleaved rounds, medians; 1-min load average at each round: ${loads.join(' ')}`)
out.push('')
out.push('| case | query | Quarry (launch to last result) | MB/s | baseline | its time | Quarry / baseline (time; below 1: faster) | per round: Quarry; baseline (s) |')
out.push('| --- | --- | ---: | ---: | --- | ---: | ---: | --- |')
const report: Record<string, unknown> = {}
/** A query as a Markdown code span (double backticks when it holds one), pipes escaped for the table. */
const code = (q: string) => (q.includes('`') ? `\`\` ${q} \`\`` : `\`${q}\``).replaceAll('|', '\\|')
/** The CLI is compared the other way round: its time over the server's (goal: within 1.2). */
const CLI = 'quarry search run'
for (const c of cases) {
  if (refused.has(c.name)) {
    out.push(`| ${c.name} | ${code(c.engine)} | not run: ${refused.get(c.name)!.replaceAll('|', '\\|')} | | | | | |`)
    report[c.name] = { refused: refused.get(c.name) }
    continue
  }
  const e = times.get(`${c.name}\tengine`)!
  const em = median(e)
  const entry: Record<string, unknown> = { ms: Math.round(em), mbps: Math.round(c.bytes() / em / 1000), found: found.get(`${c.name}\tengine`) }
  for (const name of Object.keys(c.runners)) {
    const b = times.get(`${c.name}\t${name}`)!
    const bm = median(b)
    const ratio = name === CLI ? bm / em : em / bm
    entry[name] = { ms: Math.round(bm), ratio: Math.round(ratio * 100) / 100 }
    out.push(
      `| ${c.name} | ${code(c.engine)} | ${(em / 1000).toFixed(3)} s | ${Math.round(c.bytes() / em / 1000)} | ${name} | ${(bm / 1000).toFixed(3)} s | **${ratio.toFixed(2)}**${name === CLI ? ' (CLI / Quarry)' : ''} | ${e.map((x) => (x / 1000).toFixed(3)).join(' ')}; ${b.map((x) => (x / 1000).toFixed(3)).join(' ')} |`,
    )
  }
  report[c.name] = entry
}
out.push('')
if ('refused' in distinct) out.push(`RSS of \`${distinct.query}\` (${ENTRIES.toLocaleString('en')} distinct keys): not run: ${distinct.refused}`)
else
  out.push(
    `RSS of \`${distinct.query}\` (${ENTRIES.toLocaleString('en')} distinct keys): server ${(distinct.before / 1024).toFixed(0)} MiB before, peak ${(distinct.peak / 1024).toFixed(0)} MiB during (+${((distinct.peak - distinct.before) / 1024).toFixed(0)} MiB); ${(distinct.ms / 1000).toFixed(2)} s, ${distinct.results} results`,
  )
console.log(out.join('\n'))
console.log(JSON.stringify({ entries: ENTRIES, rounds: ROUNDS, loads, fileBytes, cases: report, distinct, markerEvery: MARKER_EVERY }))
