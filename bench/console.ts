// The web console's two figures (issue 26; bench/README.md "bench/console.ts"):
//   1. the size of what a browser downloads: every file of the built console (web/dist: the page, its script and
//      its style sheet), each gzipped at level 9 as a server or proxy would send it, summed (goal: at most 400 kB);
//   2. the time from navigation to the first drawn result of a search over ENTRIES entries, in Chromium (Debian's,
//      through playwright-core, as test/browser/ drives it): a page signed in (the JWT put in its storage before it
//      loads) opens `#/search?q=<query>&start=..&end=..`, which launches the query over the search WebSocket; the
//      clock runs from `page.goto` until the renderer has drawn (the first entry; the table's first row; the chart's
//      canvas with its series), and until the page shows the search finished. Beside it, the server alone: the same
//      query launched over REST and followed with `details?wait` until it finished (no browser, no drawing), just
//      before and just after the browser's run.
//
//   bun run bench/console.ts            (BENCH_ENTRIES: 1000000 by default; BENCH_NO_RECORD=1: no results file)
// Appends its figures to bench/results/console.md. Needs Chromium (test/chromium-install.sh installs it as root).
import { Glob } from 'bun'
import { appendFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import { buildConsole, DIST_DIR } from '../web/build'

const ROOT = join(import.meta.dir, '..')
const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 1_000_000)
const BATCH = 5000
const RESULTS = join(ROOT, 'bench', 'results', 'console.md')
const GOAL_BYTES = 400 * 1000
/** How often the page is checked for the drawn result and the finish (the resolution of the times). */
const POLL_MS = 20

function fail(msg: string): never {
  console.error(`bench/console.ts: ${msg}`)
  process.exit(1)
}

// --- 1. the bundle -----------------------------------------------------------------------------------------
await buildConsole()
const files: { name: string; bytes: number; gzip: number }[] = []
for (const name of new Glob('*').scanSync(DIST_DIR)) {
  const bytes = await Bun.file(join(DIST_DIR, name)).bytes()
  files.push({ name, bytes: bytes.length, gzip: Bun.gzipSync(bytes, { level: 9 }).length })
}
files.sort((a, b) => b.gzip - a.gzip)
const gzipTotal = files.reduce((s, f) => s + f.gzip, 0)
console.error(`== bundle: ${files.map((f) => `${f.name} ${f.bytes} B (${f.gzip} B gzipped)`).join(', ')}; ${gzipTotal} B gzipped in all`)

// --- 2. a server with ENTRIES entries ------------------------------------------------------------------------
const chromiumBin = Bun.spawnSync(['bash', join(ROOT, 'test', 'chromium-install.sh')], { stderr: 'inherit' }).stdout.toString().trim()
if (!chromiumBin) fail('no Chromium (test/chromium-install.sh)')
const dataDir = mkdtempSync(join(tmpdir(), 'quarry-bench-console-'))
const password = `bench-${Date.now()}-password`
const port = (() => {
  const s = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() })
  const p = s.port
  s.stop(true)
  return p
})()
const base = `http://127.0.0.1:${port}`
const server = Bun.spawn([process.execPath, 'run', join(ROOT, 'server', 'main.ts')], {
  env: { PATH: process.env.PATH ?? '', QUARRY_DATA_DIR: dataDir, QUARRY_LISTEN: `127.0.0.1:${port}`, QUARRY_ADMIN_PASSWORD: password, QUARRY_LOG_LEVEL: 'warn' },
  stdout: 'ignore',
  stderr: 'inherit',
})
const cleanup = () => {
  server.kill()
  rmSync(dataDir, { recursive: true, force: true })
}
process.on('exit', cleanup)
for (let i = 0; ; i++) {
  if (i > 300) fail('Quarry did not start')
  try {
    await fetch(`${base}/api/test`)
    break
  } catch {
    await Bun.sleep(100)
  }
}
const login = (await (await fetch(`${base}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ User: 'admin', Pass: password }) })).json()) as { JWT: string }
const auth = { authorization: `Bearer ${login.JWT}`, 'content-type': 'application/json' }

// entries over the hour before now: `host=h<n> status=<code> ms=<n> user=u<n> ...`, about 120 bytes each
const END = Date.now()
const START = END - 3_600_000
const HOSTS = 20
const step = (END - START) / ENTRIES
console.error(`== ingesting ${ENTRIES} entries in batches of ${BATCH}`)
const ingestStart = performance.now()
for (let b = 0; b * BATCH < ENTRIES; b++) {
  const parts: string[] = []
  for (let i = b * BATCH; i < Math.min(ENTRIES, (b + 1) * BATCH); i++) {
    const text = `host=h${i % HOSTS} status=${[200, 200, 200, 404, 500][i % 5]} ms=${(i * 7919) % 1000} user=u${(i * 31) % 5000} path=/page/${i % 97} request ${i}`
    parts.push(`{"TS":"${new Date(START + i * step).toISOString()}","Tag":"bench","SRC":"192.0.2.${i % 250}","Data":"${Buffer.from(text).toString('base64')}"}`)
  }
  const res = await fetch(`${base}/api/ingest/json`, { method: 'POST', headers: auth, body: `[${parts.join(',')}]` })
  if (!res.ok) fail(`ingest: HTTP ${res.status} ${await res.text()}`)
}
const ingestSeconds = (performance.now() - ingestStart) / 1000
console.error(`== ingested in ${ingestSeconds.toFixed(1)} s`)

// --- 3. the searches, in Chromium and over REST ----------------------------------------------------------------
const QUERIES: { name: string; query: string; drawn: string }[] = [
  { name: 'entries (text)', query: 'tag=bench', drawn: '.result .entries .entry' },
  { name: 'table', query: 'tag=bench kv host status | stats count by host status | table host status count', drawn: '.result table.results tbody tr' },
  { name: 'chart', query: 'tag=bench kv host | stats count by host over 1m | chart count by host', drawn: '.result [data-chart]' },
]

async function restSeconds(query: string): Promise<number> {
  const t = performance.now()
  const launch = await fetch(`${base}/api/searchctrl/launch`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ SearchString: query, SearchStart: new Date(START - 1000).toISOString(), SearchEnd: new Date(END + 1000).toISOString() }),
  })
  if (!launch.ok) fail(`launch: HTTP ${launch.status} ${await launch.text()}`)
  const { SearchID } = (await launch.json()) as { SearchID: string }
  for (;;) {
    const d = (await (await fetch(`${base}/api/searchctrl/${SearchID}/details?wait=5`, { headers: auth })).json()) as { Finished: string }
    if (d.Finished !== '0001-01-01T00:00:00Z') break
  }
  const s = (performance.now() - t) / 1000
  await fetch(`${base}/api/searchctrl/${SearchID}`, { method: 'DELETE', headers: auth })
  return s
}

const browser = await chromium.launch({
  executablePath: chromiumBin,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
})
const rows: { name: string; query: string; firstDrawn: number; finished: number; restBefore: number; restAfter: number }[] = []
for (const q of QUERIES) {
  // the server alone just before and just after the browser's run: the machine's load moves between them
  const restBefore = await restSeconds(q.query)
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  await context.addInitScript({ content: `localStorage.setItem('quarry.jwt', ${JSON.stringify(login.JWT)})` })
  const page = await context.newPage()
  page.setDefaultTimeout(600_000)
  // the page's script and styles cached first, as for a person who opened the console before
  await page.goto(`${base}/#/account`)
  await page.getByRole('heading', { name: 'Account' }).waitFor()
  const hash = `#/search?${new URLSearchParams({ q: q.query, start: new Date(START - 1000).toISOString(), end: new Date(END + 1000).toISOString() })}`
  const t = performance.now()
  await page.goto(`${base}/${hash}`)
  // checked every POLL_MS (a locator's wait polls every 500 ms after its first tries; checking on every animation
  // frame would cost the page's CPU what the search needs)
  await page.waitForFunction(
    (selector) => {
      const el = (globalThis as unknown as { document: { querySelector(s: string): unknown } }).document.querySelector(selector) as { chart?: { getOption(): { series: unknown[] } } } | null
      return el !== null && (el.chart === undefined ? true : el.chart.getOption().series.length > 0)
    },
    q.drawn,
    { polling: POLL_MS },
  )
  const firstDrawn = (performance.now() - t) / 1000
  await page.waitForFunction(
    () => ((globalThis as unknown as { document: { querySelector(s: string): { textContent: string | null } | null } }).document.querySelector('.search-status')?.textContent ?? '').startsWith('Finished'),
    undefined,
    { polling: POLL_MS },
  )
  const finished = (performance.now() - t) / 1000
  await context.close()
  const restAfter = await restSeconds(q.query)
  rows.push({ name: q.name, query: q.query, firstDrawn, finished, restBefore, restAfter })
  console.error(`== ${q.name}: first drawn ${firstDrawn.toFixed(2)} s, finished shown ${finished.toFixed(2)} s; REST alone ${restBefore.toFixed(2)} s before, ${restAfter.toFixed(2)} s after`)
}
await browser.close()

// --- report ------------------------------------------------------------------------------------------------
const load = (await Bun.file('/proc/loadavg').text()).split(' ').slice(0, 3).join(' ')
const s2 = (x: number) => x.toFixed(2)
const table = [
  '| what | measured | baseline | goal | verdict |',
  '| --- | ---: | ---: | --- | --- |',
  `| whole console, gzipped (${files.map((f) => `${f.name}: ${(f.gzip / 1000).toFixed(1)} kB`).join(', ')}) | ${(gzipTotal / 1000).toFixed(1)} kB | ${(files.reduce((s, f) => s + f.bytes, 0) / 1000).toFixed(1)} kB uncompressed | ≤ 400 kB | ${gzipTotal <= GOAL_BYTES ? 'met' : 'not met'} |`,
  ...rows.map((r) => `| ${r.name}: navigation → first drawn result / → finished shown (\`${r.query.replace(/\|/g, '\\|')}\`, ${ENTRIES.toLocaleString('en-US')} entries) | ${s2(r.firstDrawn)} s / ${s2(r.finished)} s | the server alone (REST launch → finished), before / after: ${s2(r.restBefore)} s / ${s2(r.restAfter)} s | reported | — |`),
].join('\n')
console.log(table)
if (process.env.BENCH_NO_RECORD !== '1') {
  if (!existsSync(RESULTS)) writeFileSync(RESULTS, '# The web console: bundle size and time to the first drawn result\n\nAppended by `bun run bench/console.ts`, newest last.\n')
  appendFileSync(RESULTS, `\n## ${new Date().toISOString()} (load ${load}; ${ENTRIES} entries ingested in ${ingestSeconds.toFixed(1)} s)\n\n${table}\n`)
}
cleanup()
process.exit(0)
