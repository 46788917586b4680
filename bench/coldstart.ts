// Cold start to the first 200 (bench/README.md): spawns `bun run server/main.ts` and polls GET /api/test every 2 ms
// until it answers 200; the time from the spawn to that answer is the figure. Interleaved rounds of:
//   empty     a fresh data directory (creates the store, migrates, hashes the first admin's password)
//   existing  a data directory a previous start made (the usual restart)
//   fastify   bench/compare/fastify.mjs on Node opening an existing store (for reference; only when its packages
//             are installed, see bench/compare/run.sh)
//
//   bun run bench/coldstart.ts [rounds] [--strict] [--before DIR] [--exe] [--bundle]
// Default 7 rounds; --strict: exit 1 when a goal is missed; --before DIR: also start the Quarry of another tree (e.g.
// `git archive <commit> | tar -x -C DIR` with DIR/node_modules a link to this one's) in the same rounds, on stores of
// its own, so that a change is measured before and after under the same load; --exe: also build the single executable
// (`npm run build` into the temporary directory, for DIR too with --before) and start it (`quarry serve`) in the
// same rounds; --bundle: also build the server as one CommonJS bundle with bytecode (`npm run build:server` into the
// temporary directory, this tree only) and start it with `bun DIR/main.js` in the same rounds.
// Goals (bench/README.md): empty < 150 ms, existing < 100 ms (medians), for `bun run server/main.ts` (what the
// container runs).
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const args = process.argv.slice(2)
const strict = args.includes('--strict')
const beforeAt = args.indexOf('--before')
const before = beforeAt >= 0 ? args.splice(beforeAt, 2)[1] : undefined
const withExe = args.includes('--exe')
const withBundle = args.includes('--bundle')
const rounds = Number(args.find((a) => /^\d+$/.test(a)) ?? 7)
const root = join(import.meta.dir, '..')
const bun = process.execPath
const tmp = mkdtempSync(join(tmpdir(), 'quarry-coldstart-'))
const withFastify = existsSync(join(root, 'bench/compare/node_modules/better-sqlite3/build/Release/better_sqlite3.node'))

function freePort(): number {
  const s = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() })
  const p = s.port!
  s.stop(true)
  return p
}

/** CPU time (user + system, all threads) the process has used, in ms (/proc: 10 ms resolution). */
async function cpuMs(pid: number): Promise<number> {
  const stat = await Bun.file(`/proc/${pid}/stat`).text()
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100
}
/** CPU ms used up to the first 200, by label, beside the wall times (less sensitive to a loaded machine). */
const cpu: Record<string, number[]> = {}

/** Milliseconds from the spawn to the first 200 of GET /api/test; the process is then stopped. */
async function startOnce(cmd: string[], env: Record<string, string>, port: number, cwd = root, label?: string): Promise<number> {
  const t0 = performance.now()
  const proc = Bun.spawn(cmd, { cwd, env: { ...process.env, ...env }, stdout: 'ignore', stderr: 'pipe' })
  try {
    for (;;) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/api/test`)
        if (res.status === 200) {
          const ms = performance.now() - t0
          if (label) (cpu[label] ??= []).push(await cpuMs(proc.pid))
          return ms
        }
      } catch {}
      if (proc.exitCode !== null) throw new Error(`${cmd.join(' ')} exited ${proc.exitCode}: ${await new Response(proc.stderr).text()}`)
      if (performance.now() - t0 > 30000) throw new Error(`${cmd.join(' ')} did not answer within 30 s`)
      await Bun.sleep(2)
    }
  } finally {
    proc.kill('SIGTERM')
    await proc.exited
  }
}

/** Starts `cmd` (default: `bun run server/main.ts` in `cwd`) on `dataDir`; answers ms to the first 200. */
const quarry = (dataDir: string, port: number, cwd = root, label?: string, cmd = [bun, 'run', 'server/main.ts']) =>
  startOnce(cmd, {
    QUARRY_DATA_DIR: dataDir, QUARRY_LISTEN: `127.0.0.1:${port}`, QUARRY_ADMIN_PASSWORD: 'coldstart-password', QUARRY_LOG_LEVEL: 'warn',
  }, port, cwd, label)

/** The single executable of the tree at `dir`, built by its own `npm run build` into the temporary directory. */
function buildExe(dir: string, name: string): string {
  const out = join(tmp, name)
  const built = Bun.spawnSync(['npm', 'run', '--silent', 'build'], { cwd: dir, env: { ...process.env, OUTFILE: out }, stdout: 'pipe', stderr: 'pipe' })
  if (built.exitCode !== 0) throw new Error(`npm run build in ${dir} failed: ${built.stderr.toString()}`)
  return out
}

/** The server of the tree at `dir` as one CommonJS bundle with bytecode (`npm run build:server`); answers its entry. */
function buildBundle(dir: string, name: string): string {
  const out = join(tmp, name)
  const built = Bun.spawnSync(['npm', 'run', '--silent', 'build:server'], { cwd: dir, env: { ...process.env, OUTDIR: out }, stdout: 'pipe', stderr: 'pipe' })
  if (built.exitCode !== 0) throw new Error(`npm run build:server in ${dir} failed: ${built.stderr.toString()}`)
  return join(out, 'main.js')
}

const times: Record<string, number[]> = {
  empty: [], existing: [], 'before, empty': [], 'before, existing': [], 'bundle, empty': [], 'bundle, existing': [],
  'executable, empty': [], 'executable, existing': [], 'executable before, empty': [], 'executable before, existing': [],
  fastify: [],
}
const loads: string[] = []
try {
  // Each kind of start has its own "existing" store, made by a first start of that kind.
  const kinds: { key: string; cwd: string; cmd?: string[] }[] = [{ key: '', cwd: root }]
  if (before) kinds.push({ key: 'before', cwd: before })
  if (withExe) kinds.push({ key: 'executable', cwd: tmp, cmd: [buildExe(root, 'quarry-exe'), 'serve'] })
  if (withBundle) kinds.push({ key: 'bundle', cwd: tmp, cmd: [bun, buildBundle(root, 'server-bundle')] })
  if (withExe && before) kinds.push({ key: 'executable before', cwd: tmp, cmd: [buildExe(before, 'quarry-exe-before'), 'serve'] })
  const existing = (kind: string) => join(tmp, `existing-${kind || 'this'}`.replace(/ /g, '-'))
  for (const k of kinds) await quarry(existing(k.key), freePort(), k.cwd, undefined, k.cmd)
  for (let r = 0; r < rounds; r++) {
    loads.push((await Bun.file('/proc/loadavg').text()).split(' ')[0]!)
    for (const k of kinds) {
      const label = (store: string) => (k.key ? `${k.key}, ${store}` : store)
      const empty = join(tmp, `empty-${r}`)
      times[label('empty')]!.push(await quarry(empty, freePort(), k.cwd, label('empty'), k.cmd))
      rmSync(empty, { recursive: true, force: true })
      times[label('existing')]!.push(await quarry(existing(k.key), freePort(), k.cwd, label('existing'), k.cmd))
    }
    if (withFastify) {
      const port = freePort()
      times.fastify!.push(await startOnce(['node', 'bench/compare/fastify.mjs'], { COMPARE_DB: join(existing(''), 'quarry.db'), COMPARE_PORT: String(port) }, port, root, 'fastify'))
    }
  }
} finally {
  rmSync(tmp, { recursive: true, force: true })
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!
const fmt = (xs: number[]) => `${median(xs).toFixed(0)} ms (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})`
const goals: Record<string, number> = { empty: 150, existing: 100 }
let ok = true
console.log(`cold start to the first 200, ${rounds} interleaved rounds; 1-min load average at each round: ${loads.join(' ')}`)
console.log('| start | wall, median (range) | CPU to the first 200, median (range) | goal (wall) | verdict |\n| --- | --- | --- | --- | --- |')
for (const [k, xs] of Object.entries(times)) {
  if (xs.length === 0) continue
  const goal = goals[k]
  const met = goal === undefined || median(xs) < goal
  if (!met) ok = false
  const store = `${k.split(', ').at(-1)} store`
  const label =
    k === 'fastify'
      ? 'Fastify + better-sqlite3, existing store'
      : k.startsWith('executable before')
        ? `single executable before (${before}), ${store}`
        : k.startsWith('executable')
          ? `single executable (\`quarry serve\`), ${store}`
          : k.startsWith('bundle')
            ? `bytecode bundle (\`bun dist/server/main.js\`), ${store}`
          : k.startsWith('before')
            ? `Quarry before (${before}), ${store}`
            : `Quarry, ${store}`
  console.log(`| ${label} | ${fmt(xs)} | ${cpu[k] ? fmt(cpu[k]) : '–'} | ${goal ? `< ${goal} ms` : '–'} | ${goal ? (met ? 'met' : '**not met**') : 'reference'} |`)
}
if (strict && !ok) process.exit(1)
