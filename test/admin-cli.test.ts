// `quarry admin reset-password` (docs/operations.md) as an operator runs it: a process on the server's host, against
// the store of a server that is running, which sees the change at its next request.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MAIN, onPseudoTerminal } from './cli'
import { databaseUrlFor, listening, spawnServer } from './helpers'
import { onPg } from './pg'

const dirs: string[] = []
function tempDir() {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-admin-cli-'))
  dirs.push(dir)
  return dir
}
const ADMIN_PASSWORD = 'admin-password-1'
const dataDir = tempDir()
let server: ReturnType<typeof spawnServer>
let url = ''

beforeAll(async () => {
  server = spawnServer({ QUARRY_DATA_DIR: dataDir, QUARRY_ADMIN_PASSWORD: ADMIN_PASSWORD, QUARRY_LOGIN_MAX_FAILURES: '3' })
  url = (await listening(server)).url
})
afterAll(async () => {
  server.kill('SIGTERM')
  expect(await server.exited).toBe(0)
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }))
})

async function tool(args: string[], opts: { stdin?: string; env?: Record<string, string> } = {}) {
  const proc = Bun.spawn([process.execPath, 'run', MAIN, 'admin', 'reset-password', ...args], {
    // on the PostgreSQL run, the server's store is the database of its data directory (as spawnServer gives it)
    env: { PATH: process.env.PATH ?? '', HOME: tempDir(), NO_COLOR: '1', QUARRY_DATA_DIR: dataDir, ...(onPg ? { QUARRY_DATABASE_URL: databaseUrlFor(dataDir) } : {}), ...opts.env },
    stdin: opts.stdin === undefined ? 'ignore' : new TextEncoder().encode(opts.stdin),
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()])
  return { code, stdout, stderr }
}

const login = (user: string, pass: string) =>
  fetch(`${url}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ User: user, Pass: pass }) })
const whoami = async (jwt: string) => (await fetch(`${url}/api/info/whoami`, { headers: { authorization: `Bearer ${jwt}` } })).status
async function jwtOf(user: string, pass: string) {
  const res = await login(user, pass)
  expect(res.status).toBe(200)
  return ((await res.json()) as { JWT: string }).JWT
}

async function createUser(name: string, pass: string) {
  const admin = await jwtOf('admin', ADMIN_PASSWORD)
  const res = await fetch(`${url}/api/users`, {
    method: 'POST',
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    body: JSON.stringify({ User: name, Pass: pass, Name: name, Email: `${name}@example.com`, Admin: false }),
  })
  expect({ status: res.status, body: await res.text() }).toMatchObject({ status: 200 })
}

describe('quarry admin reset-password against a running server', () => {
  test('from stdin: the new password works at once, the old one and the sessions do not, the throttle is cleared', async () => {
    await createUser('alice', 'alice-password-1')
    const session = await jwtOf('alice', 'alice-password-1')
    // three wrong guesses: the account is throttled, even the right password gets 429
    for (let i = 0; i < 3; i++) expect((await login('alice', `wrong-${i}`)).status).toBe(422)
    expect((await login('alice', 'alice-password-1')).status).toBe(429)

    const r = await tool(['alice', '--password-stdin'], { stdin: 'alice-password-2\n' })
    expect(r).toMatchObject({ code: 0, stdout: '' })
    expect(r.stderr).toMatch(/^quarry: the password of "alice" \(UID \d+\) is reset; 1 session\(s\) ended\n$/)
    expect(await whoami(session)).toBe(401)
    expect((await login('alice', 'alice-password-1')).status).toBe(422)
    expect((await login('alice', 'alice-password-2')).status).toBe(200)
  }, 60_000)

  test('the default user is admin; --generate prints the new password once, on stdout', async () => {
    const session = await jwtOf('admin', ADMIN_PASSWORD)
    const r = await tool(['--generate'])
    expect(r.code).toBe(0)
    const password = r.stdout.trim()
    expect(r.stdout).toBe(`${password}\n`)
    expect(password.length).toBeGreaterThanOrEqual(16)
    expect(r.stderr).toContain('"admin" (UID 1)')
    expect(await whoami(session)).toBe(401)
    expect((await login('admin', password)).status).toBe(200)
    // put the shared password back for the other tests
    expect((await tool(['--password-stdin'], { stdin: `${ADMIN_PASSWORD}\n` })).code).toBe(0)
  }, 60_000)

  test('on a terminal it asks twice, without echo, through the Node launcher (no Bun on PATH)', async () => {
    await createUser('carol', 'carol-password-1')
    const node = Bun.which('node')!
    const launcher = join(import.meta.dir, '..', 'cli', 'quarry.cjs')
    const env = {
      PATH: [node.slice(0, node.lastIndexOf('/')), '/usr/bin', '/bin'].join(':'),
      HOME: tempDir(),
      QUARRY_DATA_DIR: dataDir,
      ...(onPg ? { QUARRY_DATABASE_URL: databaseUrlFor(dataDir) } : {}),
    }
    const { code, seen } = await onPseudoTerminal([launcher, 'admin', 'reset-password', 'carol'], env, [
      { after: 'New password for carol: ', type: 'carol-password-2\r' },
      { after: 'Repeat it: ', type: 'carol-password-2\r' },
    ])
    expect(code).toBe(0)
    expect(seen).toContain('the password of "carol"')
    expect(seen).not.toContain('carol-password-2')
    expect((await login('carol', 'carol-password-2')).status).toBe(200)
  }, 60_000)

  test('refusals change nothing: unknown user, short password, no terminal, both sources, wrong data directory', async () => {
    await createUser('bob', 'bob-password-1')
    const session = await jwtOf('bob', 'bob-password-1')
    const cases: [string[], { stdin?: string; env?: Record<string, string> }, number, string][] = [
      [['nobody', '--password-stdin'], { stdin: 'whatever-password\n' }, 1, 'quarry: no user "nobody" in '],
      [['bob', '--password-stdin'], { stdin: 'short\n' }, 1, 'quarry: the password must be at least 8 characters'],
      [['bob'], {}, 2, 'quarry: no terminal to ask for'],
      [['bob', '--generate', '--password-stdin'], { stdin: 'x\n' }, 2, 'quarry: give either --password-stdin or --generate'],
    ]
    for (const [args, opts, code, message] of cases) {
      const r = await tool(args, opts)
      expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code, stdout: '' })
      expect(r.stderr).toStartWith(message)
      expect(r.stderr).not.toMatch(/^\s+at /m)
    }
    const elsewhere = join(tempDir(), 'data')
    if (onPg) {
      // a database that holds no Quarry store is refused as it is: nothing is created in it
      const empty = databaseUrlFor(elsewhere)
      const r = await tool(['bob', '--generate'], { env: { QUARRY_DATABASE_URL: empty } })
      expect(r.code).toBe(1)
      expect(r.stderr).toStartWith('quarry: cannot read the PostgreSQL store at ')
      expect(r.stderr).toContain('(is it a Quarry store?)')
      expect(r.stderr).not.toContain(new URL(empty).password)
    } else {
      const r = await tool(['bob', '--generate'], { env: { QUARRY_DATA_DIR: elsewhere } })
      expect(r.code).toBe(1)
      expect(r.stderr).toBe(`quarry: no Quarry store in ${elsewhere} (set QUARRY_DATA_DIR to the server's data directory)\n`)
      expect(existsSync(elsewhere)).toBe(false)
    }
    // bob's password and session are untouched
    expect(await whoami(session)).toBe(200)
    expect((await login('bob', 'bob-password-1')).status).toBe(200)
  }, 60_000)

  test('the file of a generated first password goes when the admin\'s password is reset, not another user\'s', async () => {
    const ownDir = tempDir()
    const passwordFile = join(ownDir, 'initial-admin-password')
    const own = spawnServer({ QUARRY_DATA_DIR: ownDir })
    try {
      const ownUrl = (await listening(own)).url
      const generated = readFileSync(passwordFile, 'utf8').trim()
      const jwt = ((await (await fetch(`${ownUrl}/api/login`, { method: 'POST', body: JSON.stringify({ User: 'admin', Pass: generated }) })).json()) as { JWT: string }).JWT
      const made = await fetch(`${ownUrl}/api/users`, {
        method: 'POST',
        headers: { authorization: `Bearer ${jwt}` },
        body: JSON.stringify({ User: 'dave', Pass: 'dave-password-1', Name: 'dave', Email: 'dave@example.com', Admin: false }),
      })
      expect(made.status).toBe(200)
      const env = { QUARRY_DATA_DIR: ownDir, ...(onPg ? { QUARRY_DATABASE_URL: databaseUrlFor(ownDir) } : {}) }
      expect((await tool(['dave', '--password-stdin'], { stdin: 'dave-password-2\n', env })).code).toBe(0)
      expect(readFileSync(passwordFile, 'utf8').trim()).toBe(generated)
      const r = await tool(['--password-stdin'], { stdin: 'admin-password-9\n', env })
      expect(r.code).toBe(0)
      expect(r.stderr).toContain(`quarry: removed ${passwordFile} (the generated first password)`)
      expect(existsSync(passwordFile)).toBe(false)
    } finally {
      own.kill('SIGTERM')
      expect(await own.exited).toBe(0)
    }
  }, 60_000)
})
