// Cold start (bench/README.md): a server on the disk blob store that has run no search does not load the S3 client
// (minio, over 100 ms to import), the archive writer's tar-stream or the regex engine re2js; they load when first used.
// Nor has it loaded prom-client, whose registry is made at the first scrape (or a moment after the start): that scrape
// still has every documented family; nor the OpenAPI generator (@elysiajs/openapi's and ours), run at the first
// request for the document; nor, on SQLite, the PostgreSQL client and repositories. The real start (server/main.ts main) runs in a child process, whose module
// registry then lists what was loaded. The multipart parser (@fastify/busboy) loads with the first upload.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cliHarness } from './cli'

const ROOT = join(import.meta.dir, '..')
const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

function freePort(): number {
  const s = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() })
  const port = s.port!
  s.stop(true)
  return port
}

/**
 * Runs `script` (after a real start of the server on a fresh data directory, listening on PORT) in a child; answers
 * its output lines.
 */
async function afterStart(script: string, port = freePort()): Promise<string[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'quarry-lazy-'))
  dirs.push(dataDir)
  const code = `
    const { main } = await import(${JSON.stringify(join(ROOT, 'server', 'main.ts'))})
    await main({ ...process.env, QUARRY_DATA_DIR: ${JSON.stringify(dataDir)}, QUARRY_LISTEN: '127.0.0.1:${port}', QUARRY_ADMIN_PASSWORD: 'lazy-imports-password', QUARRY_LOG_LEVEL: 'warn' })
    const loaded = () => Object.keys(require.cache).filter((k) => /node_modules\\/(minio|tar-stream|re2js|prom-client|@fastify\\/busboy|protobufjs|snappyjs)\\/|@elysiajs\\/openapi\\/dist\\/openapi\\.mjs$|plugins\\/system\\/document\\.ts$|\\/server\\/store\\/pg\\.ts$|\\.pg\\.ts$|migrations-pg\\//.test(k) && !k.endsWith('.umd.js'))
    const names = () => [...new Set(loaded().map((k) => k.includes('node_modules/') ? k.split('node_modules/')[1].split('/').slice(0, k.includes('node_modules/@') ? 2 : 1).join('/') : k.slice(k.indexOf('plugins/'))))].sort()
    const PORT = ${port}
    ${script}
    process.exit(0)`
  const proc = Bun.spawn([process.execPath, '-e', code], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe', env: { PATH: process.env.PATH ?? '', HOME: tmpdir() } })
  const [out, err, exit] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (exit !== 0) throw new Error(`the child failed (${exit}): ${err}`)
  return out.trim().split('\n').filter((l) => l.startsWith('{'))
}

test('a started server on the disk store has not loaded minio, tar-stream, re2js, prom-client, busboy, protobufjs, snappyjs, the OpenAPI generator or the PostgreSQL store; a regex compiled loads re2js only', async () => {
  const lines = await afterStart(`
    console.log(JSON.stringify({ atStart: loaded() }))
    const { compileRegex } = await import(${JSON.stringify(join(ROOT, 'engine', 'regex.ts'))})
    if (!compileRegex('a+b').test('xaab')) throw new Error('the regex did not match')
    console.log(JSON.stringify({ afterRegex: loaded().map((k) => k.split('node_modules/')[1].split('/')[0]) }))`)
  expect(lines.map((l) => JSON.parse(l))).toEqual([{ atStart: [] }, { afterRegex: expect.arrayContaining(['re2js']) }])
  expect(JSON.parse(lines[1]!).afterRegex.every((m: string) => m === 're2js')).toBe(true)
}, 90_000)

/** The metric families the metrics table of docs/operations.md names. */
function documentedFamilies(): string[] {
  const readme = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8')
  const table = readme.slice(readme.indexOf('| Metric | Type | What |'))
  const rows = table.slice(0, table.indexOf('\n\n')).split('\n')
  return rows.flatMap((row) => [...row.matchAll(/`((?:quarry|nodejs|process)_[a-z_]+)/g)].map((m) => m[1]!))
}

test('GET /metrics as the first request after a start loads prom-client and has every documented family; the OpenAPI document loads its generator', async () => {
  const families = documentedFamilies()
  expect(families.length).toBeGreaterThanOrEqual(11)
  const lines = await afterStart(`
    console.log(JSON.stringify({ atStart: loaded() }))
    const res = await fetch('http://127.0.0.1:' + PORT + '/metrics')
    const text = await res.text()
    const types = Object.fromEntries([...text.matchAll(/^# TYPE (\\S+) (\\S+)$/gm)].map((m) => [m[1], m[2]]))
    console.log(JSON.stringify({ status: res.status, type: res.headers.get('content-type'), types }))
    console.log(JSON.stringify({ afterScrape: names() }))
    const doc = await (await fetch('http://127.0.0.1:' + PORT + '/api/docs/json')).json()
    console.log(JSON.stringify({ openapi: doc.openapi, paths: Object.keys(doc.paths).length, afterDocs: names() }))`)
  const [atStart, scrape, after, docs] = lines.map((l) => JSON.parse(l))
  expect(atStart).toEqual({ atStart: [] })
  expect(scrape.status).toBe(200)
  expect(scrape.type).toBe('text/plain; version=0.0.4; charset=utf-8')
  for (const name of families) expect([name, scrape.types[name]]).toEqual([name, expect.stringMatching(/^(counter|gauge|histogram)$/)])
  expect(after).toEqual({ afterScrape: ['prom-client'] })
  // the document, generated at its first request, is whole
  expect(docs).toEqual({ openapi: '3.1.0', paths: expect.any(Number), afterDocs: ['@elysiajs/openapi', 'plugins/system/document.ts', 'prom-client'] })
  expect(docs.paths).toBeGreaterThan(50)
}, 90_000)

test("no module of the server's static import graph imports node:net, node:zlib or node:stream: they load at first use (server/runtime/lazy-builtins.ts)", () => {
  // Built-in modules are not in the module registry, so this follows the graph itself: every module a start loads
  // is reached by static imports from server/main.ts (what loads later is imported dynamically or through require).
  const transpiler = new Bun.Transpiler({ loader: 'ts' })
  const seen = new Set<string>()
  const offending: string[] = []
  const visit = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    for (const imp of transpiler.scanImports(readFileSync(file, 'utf8'))) {
      if (imp.kind !== 'import-statement') continue
      if (/^(node:)?(net|zlib|stream)(\/|$)/.test(imp.path)) offending.push(`${file.slice(ROOT.length + 1)} imports ${imp.path}`)
      if (imp.path.startsWith('.') && /\.[cm]?[jt]s$/.test(Bun.resolveSync(imp.path, join(file, '..')))) visit(Bun.resolveSync(imp.path, join(file, '..')))
    }
  }
  visit(join(ROOT, 'server', 'main.ts'))
  expect(seen.size).toBeGreaterThan(50)
  expect(offending).toEqual([])
})

// The CLI's start (bench/README.md, "The CLI against the server's time"): a command loads cli/main.ts, the modules of
// its own command and nothing else. No node:tty (cli/stdio.ts asks Bun's tty_wrap binding), no node:util (citty
// parses with it: cli/args.ts runs the commands, citty is loaded for --help only), no node:os, no package at all for
// `search run --json`; cli-table3 and cli-progress load when a table or a bar is drawn.

/** The static import graph of `roots` within the repository: its modules and what they import from outside it. */
function staticGraph(roots: string[]): { modules: string[]; external: string[] } {
  const transpiler = new Bun.Transpiler({ loader: 'ts' })
  const seen = new Set<string>()
  const external = new Set<string>()
  const visit = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    if (!/\.[cm]?[jt]s$/.test(file)) return
    for (const imp of transpiler.scanImports(readFileSync(file, 'utf8').replace(/^#!.*/, ''))) {
      if (imp.kind !== 'import-statement') continue
      if (imp.path.startsWith('.')) visit(Bun.resolveSync(imp.path, join(file, '..')))
      else external.add(imp.path)
    }
  }
  roots.forEach((r) => visit(join(ROOT, r)))
  return { modules: [...seen].map((f) => f.slice(ROOT.length + 1)).sort(), external: [...external].sort() }
}

test('the CLI imports, at start and for `search run`, no built-in module and no package: its own modules only', () => {
  const start = staticGraph(['cli/main.ts'])
  expect(start.external).toEqual([])
  expect(start.modules.filter((m) => m.startsWith('cli/commands/') || m.startsWith('server/') || m === 'cli/completion.ts')).toEqual([])
  const searchRun = staticGraph(['cli/main.ts', 'cli/commands/search.ts'])
  expect(searchRun.external).toEqual([])
  expect(searchRun.modules.filter((m) => m.startsWith('cli/commands/'))).toEqual(['cli/commands/search.ts'])
})

const cliServer = cliHarness()

/**
 * Runs `quarry ARGS` through cli/main.ts's run() in a child (HOME `home`, the harness's server); answers its exit
 * code, its standard output and the modules it loaded (packages by name, the repository's files by path).
 */
async function cliLoads(home: string, args: string[]): Promise<{ code: number; stdout: string; loaded: string[] }> {
  const script = `
    const { run } = await import(${JSON.stringify(join(ROOT, 'cli', 'main.ts'))})
    const code = await run(${JSON.stringify(args)})
    const root = ${JSON.stringify(`${ROOT}/`)}
    const loaded = Object.keys(require.cache).filter((k) => k.startsWith('/')).map((k) => k.includes('/node_modules/') ? k.split('/node_modules/').at(-1).split('/').slice(0, k.split('/node_modules/').at(-1).startsWith('@') ? 2 : 1).join('/') : k.startsWith(root) ? k.slice(root.length) : k)
    process.stderr.write('\\n' + JSON.stringify({ code, loaded: [...new Set(loaded)].sort() }) + '\\n')`
  const proc = Bun.spawn([process.execPath, '-e', script], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe', env: { PATH: process.env.PATH ?? '', HOME: home, QUARRY_URL: cliServer.url, NO_COLOR: '1' } })
  const [stdout, stderr, exit] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (exit !== 0) throw new Error(`the child failed (${exit}): ${stderr}`)
  const { code, loaded } = JSON.parse(stderr.trim().split('\n').at(-1)!)
  return { code, stdout, loaded }
}

test('`quarry search run --json` loads no package and no other command; --version loads no command; --help loads citty; a table loads cli-table3', async () => {
  const home = await cliServer.adminHome()
  await cliServer.api(cliServer.savedJwt(home), 'POST', '/api/ingest/json', [{ TS: new Date().toISOString(), Tag: 'lazy', Data: Buffer.from('one').toString('base64') }])
  const run = await cliLoads(home, ['search', 'run', 'tag=lazy | count', '--json'])
  expect({ code: run.code, results: JSON.parse(run.stdout) }).toEqual({ code: 0, results: [{ Count: 1 }] })
  expect(run.loaded.filter((m) => !m.startsWith('cli/') && m !== 'package.json')).toEqual([])
  expect(run.loaded.filter((m) => m.startsWith('cli/commands/'))).toEqual(['cli/commands/search.ts'])
  const version = await cliLoads(home, ['--version'])
  expect(version.stdout).toStartWith('quarry ')
  expect(version.loaded.filter((m) => !m.startsWith('cli/') && m !== 'package.json')).toEqual([])
  expect(version.loaded.filter((m) => m.startsWith('cli/commands/'))).toEqual([])
  const help = await cliLoads(home, ['search', 'run', '--help'])
  expect(help.stdout).toContain('USAGE quarry search run')
  expect(help.loaded).toContain('citty')
  const table = await cliLoads(home, ['search', 'run', 'tag=lazy'])
  expect(table.stdout).toContain('one')
  expect(table.loaded).toContain('cli-table3')
  expect(table.loaded.filter((m) => m === 'citty' || m === 'cli-progress')).toEqual([])
}, 60_000)
