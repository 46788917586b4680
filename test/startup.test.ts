// Start-up that tells the truth (docs/operations.md), with real processes: a store or blob store the server
// cannot write stops the start with one line and exit 2; the first admin is created only by a start that listens;
// SIGTERM to `npm start` and to `quarry serve` stops the server itself; the Dockerfile's health check.
import { afterAll, describe, expect, test } from 'bun:test'
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { listening } from './helpers'
import { createApp } from '../server/app'
import { createDiskBlobStore } from '../server/blob'
import { loadConfig } from '../server/runtime/config'
import { createLogger } from '../server/runtime/log'
import { createSqliteStore } from '../server/repos'

const ROOT = join(import.meta.dir, '..')
const SERVER_MAIN = join(ROOT, 'server', 'main.ts')
const dirs: string[] = []
/** Two real starts, the first hashing the admin password: on a loaded 2-core machine this took over 30 s. */
const PROCESS_TEST_MS = 90_000
// The tests take write permission away (a 0500 blob directory): given back first, so that a user other than root
// can remove what they made.
afterAll(() =>
  dirs.forEach((d) => {
    Bun.spawnSync(['chmod', '-R', 'u+rwX', d])
    rmSync(d, { recursive: true, force: true })
  }),
)

/** Modes do not stop root: as root the server runs as `nobody`, for whom a 0400 file is read-only as for anyone. */
const asRoot = process.getuid?.() === 0
const NOBODY = 65534

function tempDir() {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-startup-'))
  dirs.push(dir)
  if (asRoot) chownSync(dir, NOBODY, NOBODY)
  return dir
}

function spawnAsOwner(env: Record<string, string>) {
  const cmd = [process.execPath, 'run', SERVER_MAIN]
  return Bun.spawn(asRoot ? ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', ...cmd] : cmd, {
    env: { PATH: process.env.PATH ?? '', HOME: tmpdir(), QUARRY_LISTEN: '127.0.0.1:0', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
}

/** Its exit code and output; `stdout` only when nothing (listening()) reads it already. */
async function finished(proc: ReturnType<typeof spawnAsOwner>, readStdout = true) {
  const [code, stdout, stderr] = await Promise.all([proc.exited, readStdout ? new Response(proc.stdout).text() : '', new Response(proc.stderr).text()])
  return { code, stdout, stderr: stderr.trim() }
}

/** A first start that makes the store and the blob directory, then stops. */
async function initialised(): Promise<string> {
  const dataDir = tempDir()
  const proc = spawnAsOwner({ QUARRY_DATA_DIR: dataDir, QUARRY_ADMIN_PASSWORD: 'admin-password-1' })
  await listening(proc)
  proc.kill('SIGTERM')
  expect(await proc.exited).toBe(0)
  return dataDir
}

describe('a store or blob store the server cannot write stops the start', () => {
  test('a read-only store: one line naming the store, exit 2', async () => {
    const dataDir = await initialised()
    chmodSync(join(dataDir, 'quarry.db'), 0o400)
    const r = await finished(spawnAsOwner({ QUARRY_DATA_DIR: dataDir }))
    expect(r.code).toBe(2)
    expect(r.stderr.split('\n')).toEqual([expect.stringMatching(/^quarry: cannot open the store in .* \(not writable\): /)])
    expect(r.stdout).not.toContain('listening')
  }, PROCESS_TEST_MS)

  test('a blob directory that is not writable: one line naming the blob store, exit 2, never listens', async () => {
    const dataDir = await initialised()
    // every fan-out directory already there and writable, as after many uploads: a probe write into one of them
    // succeeds, and only the blob directory's own mode tells (the probe passed by chance in 2 of about 10 runs)
    for (let i = 0; i < 256; i++) {
      const fanOut = join(dataDir, 'blobs', i.toString(16).padStart(2, '0'))
      mkdirSync(fanOut, { recursive: true, mode: 0o700 })
      if (asRoot) chownSync(fanOut, NOBODY, NOBODY)
    }
    chmodSync(join(dataDir, 'blobs'), 0o500)
    const r = await finished(spawnAsOwner({ QUARRY_DATA_DIR: dataDir }))
    expect(r.code).toBe(2)
    expect(r.stderr.split('\n')).toEqual([expect.stringMatching(/^quarry: the blob store \(.*blobs\) is not writable: /)])
    expect(r.stdout).not.toContain('listening')
  }, PROCESS_TEST_MS)
})

describe('the first admin is created by the start that serves', () => {
  test('a login that arrives before the first admin exists waits for it instead of failing (found by bench/load.sh)', async () => {
    const dir = tempDir()
    const store = createSqliteStore(join(dir, 'quarry.db'))
    const blobs = await createDiskBlobStore({ dataDir: dir })
    const config = { ...loadConfig({}).config, dataDir: dir, adminPassword: 'first-admin-pass', passwordHash: { memoryCost: 256, timeCost: 1 } }
    const { app, createFirstAdmin } = await createApp({ config, store, blobs, log: createLogger('error', () => {}), deferFirstAdmin: true })
    const login = app.handle(
      new Request('http://localhost/api/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ User: 'admin', Pass: 'first-admin-pass' }) }),
    )
    await Bun.sleep(50) // the login is in, the admin not yet (the server makes it once it listens)
    await createFirstAdmin()
    const res = await login
    expect(res.status).toBe(200)
    expect(((await res.json()) as { LoginStatus: boolean }).LoginStatus).toBe(true)
    await store.close()
  })

  test('a start that fails on a port in use creates no admin; the next start writes the password, which works', async () => {
    const blocker = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
    const dataDir = tempDir()
    try {
      const failed = await finished(spawnAsOwner({ QUARRY_DATA_DIR: dataDir, QUARRY_LISTEN: `127.0.0.1:${blocker.port}` }))
      expect(failed.code).toBe(1)
      expect(failed.stderr).toContain('address in use')
      expect(failed.stdout).not.toContain('created the admin account')
      expect(existsSync(join(dataDir, 'initial-admin-password'))).toBe(false)
    } finally {
      blocker.stop(true)
    }
    const proc = spawnAsOwner({ QUARRY_DATA_DIR: dataDir })
    const { url, lines } = await listening(proc)
    // the account is made right after the listening line
    for (let i = 0; i < 200 && !lines.some((l) => l.includes('created the admin account')); i++) await Bun.sleep(20)
    proc.kill('SIGTERM')
    const r = await finished(proc, false)
    expect(r.code).toBe(0)
    const password = readFileSync(join(dataDir, 'initial-admin-password'), 'utf8').trim()
    expect(password).not.toBe('')
    const again = spawnAsOwner({ QUARRY_DATA_DIR: dataDir })
    const next = await listening(again)
    try {
      const login = await fetch(`${next.url}/api/login`, { method: 'POST', body: JSON.stringify({ User: 'admin', Pass: password }) })
      expect(login.status).toBe(200)
      expect(url).toStartWith('http://127.0.0.1:')
    } finally {
      again.kill('SIGTERM')
      expect(await again.exited).toBe(0)
    }
  }, PROCESS_TEST_MS)
})
