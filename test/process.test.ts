// The real server process: start-up on an empty data directory, refusal of bad configuration, and the
// SIGTERM drain that lets in-flight requests finish before the store closes.
import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { listening, openStoreAt, spawnServer, tempDirs } from './helpers'

const tempDir = tempDirs('proc')

describe('server process', () => {
  test('bad configuration stops the start with one clear line', async () => {
    const proc = spawnServer({ QUARRY_DATA_DIR: tempDir(), QUARRY_LISTEN: 'nowhere' })
    const code = await proc.exited
    const stderr = (await new Response(proc.stderr).text()).trim()
    expect(code).toBe(2)
    expect(stderr.split('\n')).toHaveLength(1)
    expect(stderr).toContain('QUARRY_LISTEN')
  })

  test('PostgreSQL without the S3 blob store: a replica refuses to start with one line, before it opens anything', async () => {
    const dataDir = tempDir()
    // nothing listens there: the refusal comes before any connection
    const proc = spawnServer({ QUARRY_DATA_DIR: dataDir, QUARRY_DATABASE_URL: 'postgres://quarry:secret-pw@127.0.0.1:1/quarry' })
    const code = await proc.exited
    const stderr = (await new Response(proc.stderr).text()).trim()
    expect(code).toBe(2)
    expect(stderr.split('\n')).toHaveLength(1)
    expect(stderr).toStartWith('quarry: invalid configuration: QUARRY_DATABASE_URL: PostgreSQL needs the S3 blob store')
    expect(stderr).not.toContain('secret-pw')
    expect(readdirSync(dataDir)).toEqual([])
  })

  test('requests without a Host header (HTTP/1.0, as a load balancer\'s health check sends them) are answered and logged; the server goes on', async () => {
    const proc = spawnServer({ QUARRY_DATA_DIR: tempDir(), QUARRY_ADMIN_PASSWORD: 'process-test-password' })
    try {
      const { url, lines } = await listening(proc)
      const { hostname, port } = new URL(url)
      /** One request over its own connection, as written; answers the status line. */
      const raw = (request: string) =>
        new Promise<string>((resolve, reject) => {
          let got = ''
          void Bun.connect({
            hostname,
            port: Number(port),
            socket: {
              open: (s) => void s.write(request),
              data: (_s, chunk) => void (got += new TextDecoder().decode(chunk)),
              close: () => resolve(got.split('\r\n')[0]!),
              error: (_s, e) => reject(e),
            },
          })
        })
      for (let i = 0; i < 5; i++) expect(await raw('GET /api/health/ready?probe=1 HTTP/1.0\r\n\r\n')).toBe('HTTP/1.1 200 OK')
      // a cookie-authenticated change with no Host to compare its Origin with is refused (403), not a 500
      const login = await fetch(`${url}/api/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ User: 'admin', Pass: 'process-test-password' }),
      })
      const { JWT } = (await login.json()) as { JWT: string }
      expect(await raw(`POST /api/searchctrl/import HTTP/1.0\r\nCookie: token=${JWT}\r\nOrigin: http://${hostname}:${port}\r\n\r\n`)).toStartWith('HTTP/1.1 403')
      expect((await fetch(`${url}/api/info/whoami`, { headers: { authorization: `Bearer ${JWT}` } })).status).toBe(200)
      for (let i = 0; i < 100 && lines.filter((l) => JSON.parse(l).path === '/api/health/ready').length < 5; i++) await Bun.sleep(20)
      expect(lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request' && l.path === '/api/health/ready')).toHaveLength(5)
      expect((await fetch(`${url}/api/health`)).status).toBe(200)
      expect(proc.exitCode).toBeNull()
    } finally {
      proc.kill('SIGTERM')
      await proc.exited
    }
  })

  test('first start creates admin with a generated password in a 0600 file, never in the output; a second start keeps it', async () => {
    const dataDir = tempDir()
    const passwordFile = join(dataDir, 'initial-admin-password')
    const first = spawnServer({ QUARRY_DATA_DIR: dataDir })
    const { url, lines } = await listening(first)
    // the blob sweep runs in the background right after start
    for (let i = 0; i < 100 && !lines.some((l) => JSON.parse(l).msg === 'blob sweep'); i++) await Bun.sleep(20)
    expect(lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'blob sweep')).toMatchObject({ removed: 0, missing: 0 })
    first.kill('SIGTERM')
    expect(await first.exited).toBe(0)
    const stderr = await new Response(first.stderr).text()
    const password = readFileSync(passwordFile, 'utf8').trim()
    expect(password.length).toBeGreaterThanOrEqual(16)
    expect(statSync(passwordFile).mode & 0o777).toBe(0o600)
    // what log collectors keep says where the password is, never what it is
    expect(stderr).not.toContain(password)
    expect(lines.join('\n')).not.toContain(password)
    expect(lines.map((l) => JSON.parse(l)).filter((l) => String(l.msg).startsWith('created the admin account'))).toEqual([
      expect.objectContaining({ level: 'warn', uid: 1, passwordFile }),
    ])

    const second = spawnServer({ QUARRY_DATA_DIR: dataDir })
    const again = await listening(second)
    const login = await fetch(`${again.url}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ User: 'admin', Pass: password }),
    })
    expect(login.status).toBe(200)
    const { JWT } = (await login.json()) as { JWT: string }
    // the signing key is kept in the data directory, so a JWT stays valid for the same store
    expect(url).toStartWith('http://127.0.0.1:')
    const whoami = await fetch(`${again.url}/api/info/whoami`, { headers: { authorization: `Bearer ${JWT}` } })
    expect(((await whoami.json()) as { UID: number }).UID).toBe(1)
    expect(again.lines.some((l) => l.includes('created the admin account'))).toBe(false)
    // the first change of the password removes the file
    const changed = await fetch(`${again.url}/api/users/1/pwd`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${JWT}`, 'content-type': 'application/json' },
      body: JSON.stringify({ OrigPass: password, NewPass: 'a-password-of-my-own' }),
    })
    expect(changed.status).toBe(200)
    expect(existsSync(passwordFile)).toBe(false)
    second.kill('SIGTERM')
    expect(await second.exited).toBe(0)
    expect(await new Response(second.stderr).text()).not.toContain(password)
  })

  test('the stats key the engine by the address the server got: port 0 becomes the real port', async () => {
    const proc = spawnServer({ QUARRY_DATA_DIR: tempDir(), QUARRY_LISTEN: '127.0.0.1:0', QUARRY_ADMIN_PASSWORD: 'process-test-password' })
    try {
      const { url } = await listening(proc)
      const port = new URL(url).port
      expect(Number(port)).toBeGreaterThan(0)
      const login = await fetch(`${url}/api/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ User: 'admin', Pass: 'process-test-password' }),
      })
      const { JWT } = (await login.json()) as { JWT: string }
      const ping = await fetch(`${url}/api/stats/ping`, { headers: { authorization: `Bearer ${JWT}` } })
      expect(await ping.json()).toEqual({ webserver: 'OK', [`127.0.0.1:${port}`]: 'OK' })
      const sysDesc = (await (await fetch(`${url}/api/stats/sysDesc`, { headers: { authorization: `Bearer ${JWT}` } })).json()) as object
      expect(Object.keys(sysDesc).sort()).toEqual([`127.0.0.1:${port}`, 'webserver'])
    } finally {
      proc.kill('SIGTERM')
      await proc.exited
    }
  })

  test('SIGTERM lets an in-flight request finish, then closes the store', async () => {
    const dataDir = tempDir()
    const proc = spawnServer({ QUARRY_DATA_DIR: dataDir, QUARRY_ADMIN_PASSWORD: 'admin-password-1' })
    const { url } = await listening(proc)
    const login = await fetch(`${url}/api/login`, {
      method: 'POST',
      body: JSON.stringify({ User: 'admin', Pass: 'admin-password-1' }),
      headers: { 'content-type': 'application/json' },
    })
    const { JWT } = (await login.json()) as { JWT: string }

    // A request whose body trickles in over 600 ms; SIGTERM arrives while it is being read.
    const encoder = new TextEncoder()
    const parts = ['{"theme":', '"dark",', '"size":', '12}']
    const body = new ReadableStream({
      async pull(controller) {
        const next = parts.shift()
        if (next === undefined) return controller.close()
        await Bun.sleep(150)
        controller.enqueue(encoder.encode(next))
      },
    })
    const inFlight = fetch(`${url}/api/users/1/preferences`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${JWT}`, 'content-type': 'application/json' },
      body,
    })
    await Bun.sleep(200)
    proc.kill('SIGTERM')
    const res = await inFlight
    expect(res.status).toBe(200)
    expect(await proc.exited).toBe(0)

    const at = await openStoreAt(dataDir)
    const [row] = await at.rows("SELECT data FROM preferences WHERE uid = 1 AND name = 'prefs'")
    await at.close()
    expect(row?.data).toBe('{"theme":"dark","size":12}')
  })
})
