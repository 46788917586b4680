// The server ends when its `quarry` launcher dies: the Node launcher (cli/quarry.cjs run by Node)
// killed with SIGKILL, which it cannot forward, leaves no server holding the data directory; a new start on the same
// directory then succeeds. Run as the bin (its #! line, /bin/sh), the file execs Bun itself: no launcher process
// stands between, so the PID the caller holds is the server's. A server started without the launcher is not tied to
// its parent.
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDirs } from './helpers'
import { takeLauncherPid } from '../cli/launcher'

const ROOT = join(import.meta.dir, '..')
const LAUNCHER = join(ROOT, 'cli', 'quarry.cjs')
const MAIN = join(ROOT, 'cli', 'main.ts')
const tempDir = tempDirs('cli-launcher')

/** The process ids of `pid`'s children (from /proc). */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
  } catch {
    return []
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    // a zombie (ended, not yet reaped by its new parent) counts as gone
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'))
  } catch {
    return false
  }
}

async function waitUntil(what: string, ok: () => boolean | Promise<boolean>, ms = 20_000) {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (await ok()) return
    await Bun.sleep(50)
  }
  throw new Error(`timed out waiting until ${what}`)
}

/** Starts `cmd` serving `dataDir`; answers the process and its listening URL (read from its log). */
async function start(cmd: string[], dataDir: string) {
  const proc = Bun.spawn(cmd, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: tempDir(),
      QUARRY_LISTEN: '127.0.0.1:0',
      QUARRY_DATA_DIR: dataDir,
      QUARRY_ADMIN_PASSWORD: 'admin-password-1',
      QUARRY_SHUTDOWN_GRACE: '5s',
    },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const lines: string[] = []
  const url = await new Promise<string>((resolve, reject) => {
    let buffered = ''
    const reader = proc.stdout.getReader()
    const pump = async () => {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) return reject(new Error(`the server ended before listening: ${lines.join('\n')} ${await new Response(proc.stderr).text()}`))
        buffered += new TextDecoder().decode(value)
        let nl: number
        while ((nl = buffered.indexOf('\n')) !== -1) {
          const line = buffered.slice(0, nl)
          buffered = buffered.slice(nl + 1)
          lines.push(line)
          try {
            const entry = JSON.parse(line)
            if (entry.msg === 'listening') resolve(entry.address)
          } catch {}
        }
      }
    }
    void pump()
  })
  /** Every line of its log so far (read on as it comes). */
  return { proc, url, lines }
}

describe('the server and its launcher', () => {
  test('SIGKILL to the Node launcher running `serve`: the server stops within seconds, and a new start on the same data directory succeeds', async () => {
    const dataDir = tempDir()
    const node = Bun.which('node')
    if (!node) throw new Error('node is not on PATH')
    const { proc, url, lines } = await start([node, LAUNCHER, 'serve'], dataDir)
    const [server] = childrenOf(proc.pid)
    expect(server).toBeGreaterThan(0)
    expect((await fetch(`${url}/api/health`)).ok).toBe(true)
    // the launcher's variable is taken out before the server reads its configuration (no unknown-variable warning)
    expect(lines.join('\n')).not.toContain('QUARRY_LAUNCHER_PID')
    proc.kill('SIGKILL')
    await proc.exited
    await waitUntil('the server process is gone', () => !alive(server!), 10_000)
    // the data directory's lock went with it: a second server starts on the same directory
    const again = await start([node, LAUNCHER, 'serve'], dataDir)
    expect((await fetch(`${again.url}/api/health`)).ok).toBe(true)
    again.proc.kill('SIGTERM')
    expect(await again.proc.exited).toBe(0)
  }, 60_000)

  test('run as the bin, the launcher becomes Bun (exec): the PID is the server, SIGKILL to it frees the data directory', async () => {
    const dataDir = tempDir()
    const { proc, url } = await start([LAUNCHER, 'serve'], dataDir)
    expect(readFileSync(`/proc/${proc.pid}/cmdline`, 'utf8').split('\0')).toContain(MAIN)
    expect(childrenOf(proc.pid)).toEqual([])
    expect((await fetch(`${url}/api/health`)).ok).toBe(true)
    proc.kill('SIGKILL')
    await proc.exited
    const again = await start([LAUNCHER, 'serve'], dataDir)
    expect((await fetch(`${again.url}/api/health`)).ok).toBe(true)
    again.proc.kill('SIGTERM')
    expect(await again.proc.exited).toBe(0)
  }, 60_000)

  test('the launcher\'s variable is read once and removed; a server started without the launcher serves as before', async () => {
    const env: Record<string, string | undefined> = { QUARRY_LAUNCHER_PID: '1234', OTHER: 'x' }
    expect(takeLauncherPid(env)).toBe(1234)
    expect(env).toEqual({ OTHER: 'x' })
    expect(takeLauncherPid(env)).toBeUndefined()
    for (const bad of ['', '1', '0', '-5', 'abc', '1.5']) expect(takeLauncherPid({ QUARRY_LAUNCHER_PID: bad })).toBeUndefined()
    const { proc, url } = await start([process.execPath, 'run', MAIN, 'serve'], tempDir())
    expect((await fetch(`${url}/api/health`)).ok).toBe(true)
    proc.kill('SIGTERM')
    expect(await proc.exited).toBe(0)
  }, 60_000)
})
