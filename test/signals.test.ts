// Signals and launchers with real processes (docs/operations.md): SIGTERM to the PID `npm start` gives, to the
// `quarry` bin (the Node launcher) running `serve`, stops the server itself and frees its port; the launcher passes
// arguments, output and exit codes through; the container's health check finds the configured port.
import { describe, expect, test } from 'bun:test'
import { readFileSync, readdirSync, symlinkSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { tempDirs } from './helpers'
import pkg from '../package.json'

const ROOT = join(import.meta.dir, '..')
/** What npm links as the `quarry` bin (package.json "bin"), run as npm's link would: by its #! line. */
const LAUNCHER = join(ROOT, 'cli', 'quarry.cjs')
const tempDir = tempDirs('signals')

/**
 * A free loopback port (taken and let go), below the kernel's ephemeral range: a port the kernel hands out (port 0)
 * can become the local end of another test's outgoing connection before the server binds it.
 */
function freePort(): number {
  const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0]) || 32768
  for (;;) {
    const port = 10000 + Math.floor(Math.random() * (Math.max(low, 12000) - 10000))
    try {
      Bun.listen({ hostname: '127.0.0.1', port, socket: { data() {} } }).stop(true)
      return port
    } catch {}
  }
}

async function answers(port: number): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/api/health`, { signal: AbortSignal.timeout(2000) })).ok
  } catch {
    return false
  }
}

async function waitUntil(what: string, ok: () => Promise<boolean>, ms = 20_000) {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (await ok()) return
    await Bun.sleep(100)
  }
  throw new Error(`timed out waiting until ${what}`)
}

/**
 * A PATH with Node and the system's tools but no Bun: what a machine with only Node and npm offers. It is one
 * directory of links to every program in Node's directory, /usr/bin and /bin (first one of a name wins, as on a
 * PATH) except `bun` and `bunx`, so it holds on machines where Bun sits beside them (`npm i -g bun` puts it in
 * /usr/bin, or in Node's directory under nvm). Made once per test file.
 */
let bunlessPath: string | undefined
const nodeOnlyPath = () => {
  if (bunlessPath) return bunlessPath
  const node = Bun.which('node')
  if (!node) throw new Error('node is not on PATH')
  const dir = tempDir()
  const linked = new Set(['bun', 'bunx'])
  for (const from of [dirname(node), '/usr/bin', '/bin']) {
    let names: string[]
    try {
      names = readdirSync(from)
    } catch {
      continue
    }
    for (const name of names) {
      if (linked.has(name)) continue
      linked.add(name)
      symlinkSync(join(from, name), join(dir, name))
    }
  }
  bunlessPath = dir
  return dir
}

function spawnStart(cmd: string[], port: number, extraEnv: Record<string, string> = {}) {
  return Bun.spawn(cmd, {
    cwd: ROOT,
    env: {
      PATH: nodeOnlyPath(),
      HOME: tempDir(),
      QUARRY_LISTEN: `127.0.0.1:${port}`,
      QUARRY_DATA_DIR: tempDir(),
      QUARRY_ADMIN_PASSWORD: 'admin-password-1',
      QUARRY_SHUTDOWN_GRACE: '5s',
      ...extraEnv,
    },
    stdout: 'pipe',
    stderr: 'pipe',
  })
}

/** A process's stdout read as it comes: whether `text` has come yet, and the whole once it ends. */
function reading(proc: ReturnType<typeof spawnStart>) {
  let text = ''
  const ended = (async () => {
    const decoder = new TextDecoder()
    for await (const chunk of proc.stdout) text += decoder.decode(chunk, { stream: true })
  })()
  return { has: (part: string) => text.includes(part), all: async () => (await ended, text) }
}

/**
 * Starts, waits until it has started (its `listening` line: the port answers a moment before, while the first admin
 * is made), sends `signal` to the PID we were given, and checks the server itself went.
 */
async function stopsOn(cmd: string[], signal: 'SIGTERM' | 'SIGINT') {
  const port = freePort()
  const proc = spawnStart(cmd, port)
  const out = reading(proc)
  await waitUntil('the server has started', async () => out.has('"msg":"listening"'))
  expect(await answers(port)).toBe(true)
  const started = Date.now()
  proc.kill(signal)
  const code = await proc.exited
  // the server (a grandchild for npm) must be gone too: the port refuses, a new server can take it
  await waitUntil('the port is free', async () => !(await answers(port)), 15_000)
  const blocker = Bun.listen({ hostname: '127.0.0.1', port, socket: { data() {} } })
  blocker.stop(true)
  const log = await out.all()
  // Bun's own allocator setting unless the operator gives one (server/runtime/allocator.ts)
  expect(log).toContain('"allocator":"default"')
  expect(log).toContain('"msg":"shutting down"')
  expect(log).toContain(`"signal":"${signal}"`)
  // well within the 5 s grace plus start of the shutdown: nothing was in flight
  expect(Date.now() - started).toBeLessThan(15_000)
  return code
}

describe('signals reach the server', () => {
  test('SIGTERM to `npm start` stops the server, frees the port, exit 0', async () => {
    expect(await stopsOn(['npm', 'start', '--silent'], 'SIGTERM')).toBe(0)
  }, 60_000)

  test('SIGINT to `npm start` stops the server too', async () => {
    expect(await stopsOn(['npm', 'start', '--silent'], 'SIGINT')).toBe(0)
  }, 60_000)

  test('SIGTERM to the `quarry` bin running `serve` (Node launcher, no Bun on PATH) stops the server, exit 0', async () => {
    expect(await stopsOn([LAUNCHER, 'serve'], 'SIGTERM')).toBe(0)
  }, 60_000)
})

test('an operator\'s allocator setting reaches the server through the launcher, and its start line says so', async () => {
  const port = freePort()
  const proc = spawnStart([LAUNCHER, 'serve'], port, { MIMALLOC_PURGE_DELAY: '250' })
  const out = reading(proc)
  await waitUntil('the server has started', async () => out.has('"msg":"listening"'))
  proc.kill('SIGTERM')
  expect(await proc.exited).toBe(0)
  expect(await out.all()).toContain('"allocator":"MIMALLOC_PURGE_DELAY=250"')
}, 60_000)

describe('the quarry bin on a machine without Bun', () => {
  const run = async (args: string[], stdin?: string) => {
    const proc = Bun.spawn([LAUNCHER, ...args], {
      env: { PATH: nodeOnlyPath(), HOME: tempDir(), NO_COLOR: '1' },
      stdin: stdin === undefined ? 'ignore' : new TextEncoder().encode(stdin),
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()])
    return { code, stdout, stderr }
  }

  test('there is no bun on the PATH these tests use, and there is node', () => {
    expect(Bun.which('bun', { PATH: nodeOnlyPath() })).toBeNull()
    expect(Bun.which('bunx', { PATH: nodeOnlyPath() })).toBeNull()
    expect(Bun.which('node', { PATH: nodeOnlyPath() })).not.toBeNull()
  })

  test('quarry --version prints the package version and licence', async () => {
    expect(await run(['--version'])).toEqual({ code: 0, stdout: `quarry ${pkg.version}\nLicense: Apache-2.0\n`, stderr: '' })
  })

  test('exit codes pass through: bad usage is 2, a failed command 1', async () => {
    const usage = await run(['no-such-command'])
    expect(usage.code).toBe(2)
    const failed = await run(['--server', `http://127.0.0.1:${freePort()}`, 'whoami'])
    expect(failed.code).toBe(1)
    expect(failed.stderr).toStartWith('quarry: ')
  })

  test('`npx quarry --version` from the checkout', async () => {
    const proc = Bun.spawn(['npx', '--offline', 'quarry', '--version'], { cwd: ROOT, env: { PATH: nodeOnlyPath(), HOME: tempDir() }, stdout: 'pipe', stderr: 'pipe' })
    const [code, stdout] = await Promise.all([proc.exited, new Response(proc.stdout).text()])
    expect({ code, stdout }).toEqual({ code: 0, stdout: `quarry ${pkg.version}\nLicense: Apache-2.0\n` })
  }, 30_000)
})

describe('the container health check', () => {
  test('asks readiness on the port QUARRY_LISTEN names: 0 when ready, 1 when nothing listens', async () => {
    const port = freePort()
    const proc = spawnStart([LAUNCHER, 'serve'], port, { QUARRY_LISTEN: `0.0.0.0:${port}` })
    void new Response(proc.stdout).text()
    try {
      await waitUntil('the server answers', () => answers(port))
      const check = (listen: string) =>
        Bun.spawn([process.execPath, 'run', join(ROOT, 'server', 'http', 'healthcheck.ts')], { env: { QUARRY_LISTEN: listen }, stdout: 'pipe', stderr: 'pipe' }).exited
      expect(await check(`0.0.0.0:${port}`)).toBe(0)
      expect(await check(`0.0.0.0:${freePort()}`)).toBe(1)
    } finally {
      proc.kill('SIGTERM')
      await proc.exited
    }
  }, 60_000)
})
