// The real server process (docs/security.md): a private data directory, one server per port and per data
// directory, and a shutdown that ends within its grace and leaves no partial upload behind.
import { describe, expect, test } from 'bun:test'
import { chmodSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ADMIN_PASSWORD, listening, openStoreAt, spawnServer, tempDirs } from './helpers'
import { onPg } from './pg'
import { HEARTBEAT_MS } from '../server/cluster'

const tempDir = tempDirs('safety')

const mode = (path: string) => statSync(path).mode & 0o777

/** Every path under `dir` (itself included) whose mode is not 0700 (directories) or 0600 (files), with its mode. */
function loosePaths(dir: string): string[] {
  const out: string[] = []
  const walk = (path: string) => {
    const s = statSync(path)
    const want = s.isDirectory() ? 0o700 : 0o600
    if ((s.mode & 0o777) !== want) out.push(`${path.slice(dir.length) || '/'} ${(s.mode & 0o777).toString(8)}`)
    if (s.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name))
  }
  walk(dir)
  return out
}

async function login(url: string): Promise<string> {
  const res = await fetch(`${url}/api/login`, { method: 'POST', body: JSON.stringify({ User: 'admin', Pass: ADMIN_PASSWORD }) })
  return ((await res.json()) as { JWT: string }).JWT
}

/**
 * What shows that nothing wrote to the store of a data directory: the SQLite file's modification time, or on
 * PostgreSQL (QUARRY_TEST_STORE=pg; no file in the directory) every row of every table of its database.
 */
/**
 * Every row of the store beside a running server, but for what the running server itself keeps moving (its
 * replica heartbeat, its job leases' expiry and last run, its searches' progress): what another process may not
 * have changed.
 */
async function storeState(dataDir: string): Promise<Record<string, string[]>> {
  const moving: Record<string, string[]> = { replicas: ['heartbeat'], leases: ['expires_at', 'last_run'], search_records: ['data', 'updated'] }
  const at = await openStoreAt(dataDir)
  try {
    const tables = onPg
      ? await at.rows("SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name")
      : await at.rows("SELECT name AS t FROM sqlite_master WHERE type = 'table' ORDER BY name")
    const state: Record<string, string[]> = {}
    for (const { t } of tables) {
      const name = t as string
      const rows = await at.rows(`SELECT * FROM ${name}`)
      for (const row of rows) for (const column of moving[name] ?? []) delete row[column]
      state[name] = rows.map((r) => JSON.stringify(r)).sort()
    }
    return state
  } finally {
    await at.close()
  }
}

const stderrOf = async (proc: ReturnType<typeof spawnServer>) => (await new Response(proc.stderr).text()).trim()

describe('the data directory is private', () => {
  test('a new data directory is 0700 and everything in it 0600, also what uploads and searches write later', async () => {
    const dataDir = join(tempDir(), 'data')
    // a permissive umask, as a service manager may leave it: the server must not depend on it
    const proc = Bun.spawn(['sh', '-c', `umask 000 && exec "${process.execPath}" run "${join(import.meta.dir, '..', 'server', 'main.ts')}"`], {
      env: { PATH: process.env.PATH ?? '', QUARRY_LISTEN: '127.0.0.1:0', QUARRY_DATA_DIR: dataDir, QUARRY_ADMIN_PASSWORD: ADMIN_PASSWORD },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const { url } = await listening(proc)
    const auth = { authorization: `Bearer ${await login(url)}` }
    expect(mode(dataDir)).toBe(0o700)
    expect(existsSync(join(dataDir, 'quarry.db-wal'))).toBe(true)
    // an upload (blob fan-out directories, the temporary file renamed into place), an ingest and a saved search
    const form = new FormData()
    form.append('file', new Blob(['some contents']), 'f.txt')
    expect((await fetch(`${url}/api/files`, { method: 'POST', headers: auth, body: form })).status).toBe(200)
    const ingest = await fetch(`${url}/api/ingest/json`, { method: 'POST', headers: auth, body: JSON.stringify([{ TS: '2020-01-01T00:00:00Z', Tag: 'web', Data: 'aGVsbG8=' }]) })
    expect(ingest.status).toBe(200)
    const launched = await fetch(`${url}/api/searchctrl/launch`, { method: 'POST', headers: auth, body: JSON.stringify({ SearchString: 'tag=web' }) })
    expect(launched.status).toBe(200)
    await Bun.sleep(300)
    expect(readdirSync(join(dataDir, 'searches')).length).toBeGreaterThan(0)
    expect(readdirSync(join(dataDir, 'blobs')).length).toBeGreaterThan(0)
    expect(loosePaths(dataDir)).toEqual([])
    proc.kill('SIGTERM')
    expect(await proc.exited).toBe(0)
    expect(loosePaths(dataDir)).toEqual([])
  }, 60_000)

  test('an existing 0755 directory with a 0644 file is tightened at start, with a log line', async () => {
    const dataDir = join(tempDir(), 'data')
    mkdirSync(join(dataDir, 'searches'), { recursive: true })
    chmodSync(dataDir, 0o755)
    chmodSync(join(dataDir, 'searches'), 0o755)
    writeFileSync(join(dataDir, 'notes.txt'), 'left by an operator')
    chmodSync(join(dataDir, 'notes.txt'), 0o644)
    const proc = spawnServer({ QUARRY_DATA_DIR: dataDir, QUARRY_ADMIN_PASSWORD: ADMIN_PASSWORD })
    const { lines } = await listening(proc)
    expect(loosePaths(dataDir)).toEqual([])
    const logged = lines.map((l) => JSON.parse(l)).find((l) => /readable by other accounts/.test(l.msg))
    expect(logged).toMatchObject({ level: 'warn', was: '755', dirs: 2, files: 1 })
    proc.kill('SIGTERM')
    expect(await proc.exited).toBe(0)
  }, 60_000)

  test('a private (0700) directory holding a 0755 directory and a 0644 file: tightened once the server listens, with a log line', async () => {
    // Nothing in a 0700 directory is reachable by other accounts, so its contents are walked after the start
    // instead of before it (one lstat per blob: seconds for a large store).
    const dataDir = join(tempDir(), 'data')
    mkdirSync(join(dataDir, 'copied'), { recursive: true })
    chmodSync(dataDir, 0o700)
    chmodSync(join(dataDir, 'copied'), 0o755)
    writeFileSync(join(dataDir, 'copied', 'notes.txt'), 'left by an operator')
    chmodSync(join(dataDir, 'copied', 'notes.txt'), 0o644)
    const proc = spawnServer({ QUARRY_DATA_DIR: dataDir, QUARRY_ADMIN_PASSWORD: ADMIN_PASSWORD })
    try {
      const { lines } = await listening(proc)
      const tightened = () => lines.map((l) => JSON.parse(l)).find((l) => /readable by other accounts/.test(l.msg))
      for (let i = 0; i < 300 && !tightened(); i++) await Bun.sleep(50)
      expect(tightened()).toMatchObject({ level: 'warn', was: '700', dirs: 1, files: 1 })
      expect(loosePaths(dataDir)).toEqual([])
      // after the server listened, not before
      const msgs = lines.map((l) => JSON.parse(l).msg as string)
      expect(msgs.findIndex((m) => /readable by other accounts/.test(m))).toBeGreaterThan(msgs.indexOf('listening'))
    } finally {
      proc.kill('SIGTERM')
      await proc.exited
    }
  }, 60_000)
})

describe('one server per port and per data directory', () => {
  test('a port in use stops the start with one line, exit 1, and the first server keeps every connection', async () => {
    const first = spawnServer({ QUARRY_DATA_DIR: tempDir(), QUARRY_ADMIN_PASSWORD: ADMIN_PASSWORD })
    const { url } = await listening(first)
    const port = new URL(url).port
    const second = spawnServer({ QUARRY_DATA_DIR: tempDir(), QUARRY_ADMIN_PASSWORD: ADMIN_PASSWORD, QUARRY_LISTEN: `127.0.0.1:${port}` })
    expect(await second.exited).toBe(1)
    const stderr = await stderrOf(second)
    expect(stderr.split('\n')).toHaveLength(1)
    expect(stderr).toBe(`quarry: cannot listen on 127.0.0.1:${port}: address in use`)
    expect((await fetch(`${url}/api/test`)).status).toBe(200)
    first.kill('SIGTERM')
    expect(await first.exited).toBe(0)
  }, 60_000)

  test('a second server on the same data directory stops with one line naming the holder, before touching anything', async () => {
    const dataDir = tempDir()
    const first = spawnServer({ QUARRY_DATA_DIR: dataDir, QUARRY_ADMIN_PASSWORD: ADMIN_PASSWORD })
    const { url } = await listening(first)
    const auth = { authorization: `Bearer ${await login(url)}` }
    // a live search with working files, which a second server's start would delete
    await fetch(`${url}/api/ingest/json`, { method: 'POST', headers: auth, body: JSON.stringify([{ TS: '2020-01-01T00:00:00Z', Tag: 'web', Data: 'aGVsbG8=' }]) })
    const launched = await fetch(`${url}/api/searchctrl/launch`, { method: 'POST', headers: auth, body: JSON.stringify({ SearchString: 'tag=web' }) })
    const { SearchID } = (await launched.json()) as { SearchID: string }
    await Bun.sleep(300)
    const work = readdirSync(join(dataDir, 'searches')).sort()
    expect(work.length).toBeGreaterThan(0)
    const storeBefore = await storeState(dataDir)

    const second = spawnServer({ QUARRY_DATA_DIR: dataDir, QUARRY_ADMIN_PASSWORD: ADMIN_PASSWORD })
    expect(await second.exited).toBe(1)
    const stderr = await stderrOf(second)
    expect(stderr.split('\n')).toHaveLength(1)
    expect(stderr).toContain(`the data directory ${dataDir} is in use by another Quarry server (pid ${first.pid}, listening on ${url}`)
    expect(readdirSync(join(dataDir, 'searches')).sort()).toEqual(work)
    expect(await storeState(dataDir)).toEqual(storeBefore)
    expect((await fetch(`${url}/api/searchctrl/${SearchID}`, { headers: auth })).status).toBe(200)
    first.kill('SIGTERM')
    expect(await first.exited).toBe(0)
  }, 60_000)

  test('the lock goes with the process: after a SIGKILL the next server starts on the same directory', async () => {
    const dataDir = tempDir()
    const first = spawnServer({ QUARRY_DATA_DIR: dataDir, QUARRY_ADMIN_PASSWORD: ADMIN_PASSWORD })
    await listening(first)
    first.kill('SIGKILL')
    await first.exited
    const next = spawnServer({ QUARRY_DATA_DIR: dataDir, QUARRY_ADMIN_PASSWORD: ADMIN_PASSWORD })
    const { url } = await listening(next)
    expect((await fetch(`${url}/api/test`)).status).toBe(200)
    next.kill('SIGTERM')
    expect(await next.exited).toBe(0)
  }, 60_000)
})

describe('shutdown', () => {
  test('a client trickling an upload in does not hold SIGTERM past the grace, and no partial file is left', async () => {
    const dataDir = tempDir()
    const graceMs = 1000
    const proc = spawnServer({ QUARRY_DATA_DIR: dataDir, QUARRY_ADMIN_PASSWORD: ADMIN_PASSWORD, QUARRY_SHUTDOWN_GRACE: `${graceMs}ms` })
    const { url, lines } = await listening(proc)
    const jwt = await login(url)
    // a multipart upload that sends a little every 100 ms and never ends
    const enc = new TextEncoder()
    let sent = 0
    const body = new ReadableStream<Uint8Array>({
      async pull(c) {
        if (sent === 0) c.enqueue(enc.encode('--b\r\nContent-Disposition: form-data; name="file"; filename="slow"\r\n\r\n'))
        await Bun.sleep(100)
        sent++
        c.enqueue(new Uint8Array(1024).fill(120))
      },
    })
    const upload = fetch(`${url}/api/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${jwt}`, 'content-type': 'multipart/form-data; boundary=b' },
      body,
    }).catch((e: unknown) => e)
    const tmp = join(dataDir, 'blobs', 'tmp')
    for (let i = 0; i < 100 && !(existsSync(tmp) && readdirSync(tmp).length > 0); i++) await Bun.sleep(50)
    expect(readdirSync(tmp)).toHaveLength(1) // the upload's temporary file is there

    const t0 = performance.now()
    proc.kill('SIGTERM')
    expect(await proc.exited).toBe(0)
    const took = performance.now() - t0
    expect(took).toBeGreaterThanOrEqual(graceMs - 50)
    expect(took).toBeLessThan(graceMs + 8000)
    await upload
    expect(readdirSync(tmp)).toEqual([])
    expect(lines.map((l) => JSON.parse(l).msg)).toContain('closing the requests still in flight after the shutdown grace')
  }, 60_000)
})

describe('a server alone', () => {
  test('keeps its replica registry in memory: no row, no heartbeat written while it runs', async () => {
    const dataDir = tempDir()
    const server = spawnServer({ QUARRY_DATA_DIR: dataDir, QUARRY_ADMIN_PASSWORD: ADMIN_PASSWORD })
    try {
      const { url } = await listening(server)
      await Bun.sleep(HEARTBEAT_MS * 1.5) // a heartbeat would have been written by now
      const ping = await fetch(`${url}/api/stats/ping`, { headers: { authorization: `Bearer ${await login(url)}` } })
      expect(Object.keys((await ping.json()) as object).sort()).toEqual([new URL(url).host, 'webserver'])
      expect((await storeState(dataDir)).replicas).toEqual([])
    } finally {
      server.kill('SIGTERM') // also when a check failed: no server outlives the test
    }
    expect(await server.exited).toBe(0)
  }, 60_000)
})
