// The `quarry` CLI driven as a user drives it, against a live server (see test/cli.ts).
import { describe, expect, test } from 'bun:test'
import { appendFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '../cli/client'
import { commandTree } from '../cli/completion'
import { Output } from '../cli/output'
import { expiryOf } from '../cli/commands/tokens'
import { cli, run } from '../cli/main'
import { redirectOut } from '../cli/stdio'
import { ADMIN_PASSWORD, SLOW, cliHarness, expectFailure } from './cli'

const server = cliHarness()
const { tempDir, quarry, ok, adminHome, savedJwt } = server

describe('login, whoami, logout', () => {
  test('login reads the password from stdin and keeps the session in a 0600 credentials file', async () => {
    const home = tempDir()
    const login = await ok(home, ['login', 'admin', '--password-stdin'], { stdin: `${ADMIN_PASSWORD}\n` })
    expect(login.stdout).toContain(`Logged in to ${server.url} as admin`)
    const file = join(home, '.config', 'quarry', 'credentials.json')
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(statSync(join(home, '.config', 'quarry')).mode & 0o777).toBe(0o700)
    const saved = JSON.parse(readFileSync(file, 'utf8'))
    expect(saved.current).toBe(server.url)
    expect(saved.servers[server.url].user).toBe('admin')

    const me = (await ok(home, ['whoami', '--json'])).json()
    expect(me).toMatchObject({ UID: 1, User: 'admin', Admin: true })
    // readable output by default; the server of the last login is used when none is named
    const table = await ok(home, ['whoami'], { env: { QUARRY_URL: '' } })
    expect(table.stdout).toMatch(/User:\s+admin/)

    const out = await ok(home, ['logout'])
    expect(out.stdout).toContain('Logged out')
    expect(JSON.parse(readFileSync(file, 'utf8')).servers[server.url]).toBeUndefined()
    expectFailure(await quarry(home, ['whoami']), 1, `not logged in to ${server.url}`)
    // the JWT really ended on the server
    const res = await fetch(`${server.url}/api/info/whoami`, { headers: { authorization: `Bearer ${saved.servers[server.url].jwt}` } })
    expect(res.status).toBe(401)
  }, SLOW)

  test('XDG_CONFIG_HOME decides where the credentials file lives', async () => {
    const home = tempDir()
    const config = tempDir()
    await ok(home, ['login', 'admin', '--password-stdin'], { stdin: `${ADMIN_PASSWORD}\n`, env: { XDG_CONFIG_HOME: config } })
    expect(statSync(join(config, 'quarry', 'credentials.json')).mode & 0o777).toBe(0o600)
    expect(existsSync(join(home, '.config'))).toBe(false)
  }, SLOW)

  test('a credentials file made readable by others is replaced by a 0600 one; a damaged one is reported', async () => {
    const home = tempDir()
    const file = join(home, '.config', 'quarry', 'credentials.json')
    mkdirSync(join(home, '.config', 'quarry'), { recursive: true })
    writeFileSync(file, '{"servers": {}}', { mode: 0o644 })
    await ok(home, ['login', 'admin', '--password-stdin'], { stdin: `${ADMIN_PASSWORD}\n` })
    expect(statSync(file).mode & 0o777).toBe(0o600)
    writeFileSync(file, 'not json')
    expectFailure(await quarry(home, ['whoami']), 1, `${file} is not a credentials file`)
  }, SLOW)

  test('a wrong password gives the server\'s reason, exit 1, and saves nothing', async () => {
    const home = tempDir()
    expectFailure(await quarry(home, ['login', 'admin', '--password-stdin'], { stdin: 'wrong-password\n' }), 1, 'Invalid username or password')
    expect(existsSync(join(home, '.config', 'quarry', 'credentials.json'))).toBe(false)
  }, SLOW)

  test('on a terminal, login asks for the password without echoing it', async () => {
    const home = tempDir()
    const { code, seen } = await server.onTerminal(home, ['login', 'admin'], [{ after: 'Password for admin: ', type: `${ADMIN_PASSWORD}\r` }])
    expect(code).toBe(0)
    expect(seen).toContain(`Logged in to ${server.url} as admin`)
    expect(seen).not.toContain(ADMIN_PASSWORD)
    expect((await ok(home, ['whoami', '--json'])).json().UID).toBe(1)
  }, SLOW)

  test('without a terminal and without --password-stdin, login is bad usage', async () => {
    expectFailure(await quarry(tempDir(), ['login', 'admin']), 2, 'no terminal to ask for')
  }, SLOW)
})

describe('users, groups and a locked account', () => {
  test('create a group and a user, add the user to it; lock the user and their session ends', async () => {
    const admin = await adminHome()
    const gid = (await ok(admin, ['group', 'create', 'analysts', '--desc', 'The analysts', '--json'])).json()
    expect(typeof gid).toBe('number')
    const created = await ok(admin, ['user', 'create', 'alice', '--name', 'Alice Liddell', '--email', 'alice@example.com', '--password-stdin'], {
      stdin: 'alice-password-1\n',
    })
    const uid = Number(/UID (\d+)/.exec(created.stdout)?.[1])
    expect(uid).toBeGreaterThan(1)
    await ok(admin, ['user', 'groups', 'add', 'alice', 'analysts'])

    const members = (await ok(admin, ['group', 'members', String(gid), '--json'])).json()
    expect(members.map((u: { User: string }) => u.User)).toEqual(['alice'])
    const shown = (await ok(admin, ['user', 'show', 'alice', '--json'])).json()
    expect(shown).toMatchObject({ UID: uid, User: 'alice', Name: 'Alice Liddell', Locked: false, Groups: [{ GID: gid, Name: 'analysts' }] })
    const table = (await ok(admin, ['user', 'list'])).stdout
    expect(table.split('\n')[0]).toMatch(/^UID\s+USER\s+NAME\s+EMAIL\s+ADMIN\s+LOCKED\s+GROUPS$/)
    expect(table).toMatch(/alice\s+Alice Liddell\s+alice@example.com\s+no\s+no\s+analysts/)

    // alice logs in in her own HOME
    const alice = tempDir()
    await ok(alice, ['login', 'alice', '--password-stdin'], { stdin: 'alice-password-1\n' })
    expect((await ok(alice, ['whoami', '--json'])).json().UID).toBe(uid)

    await ok(admin, ['user', 'lock', 'alice'])
    expect((await ok(admin, ['user', 'show', String(uid), '--json'])).json().Locked).toBe(true)
    expectFailure(await quarry(alice, ['whoami']), 1, 'session has ended (log in again with `quarry login`)')
    expectFailure(await quarry(alice, ['login', 'alice', '--password-stdin'], { stdin: 'alice-password-1\n' }), 1, 'Account is locked')

    await ok(admin, ['user', 'unlock', 'alice'])
    await ok(alice, ['login', 'alice', '--password-stdin'], { stdin: 'alice-password-1\n' })
    // her own password: the current one, then the new one, on stdin
    await ok(alice, ['user', 'passwd', '--password-stdin'], { stdin: 'alice-password-1\nalice-password-2\n' })
    await ok(tempDir(), ['login', 'alice', '--password-stdin'], { stdin: 'alice-password-2\n' })
    // a non-admin may not make herself admin: the server's message, exit 1
    expectFailure(await quarry(alice, ['user', 'admin', 'alice']), 1, 'admin rights required')

    // the admin sets her password without knowing the old one
    await ok(admin, ['user', 'passwd', 'alice', '--password-stdin'], { stdin: 'alice-password-3\n' })
    await ok(tempDir(), ['login', 'alice', '--password-stdin'], { stdin: 'alice-password-3\n' })

    await ok(admin, ['user', 'admin', 'alice'])
    expect((await ok(admin, ['user', 'show', 'alice', '--json'])).json().Admin).toBe(true)
    await ok(admin, ['user', 'unadmin', 'alice'])
    await ok(admin, ['user', 'update', 'alice', '--name', 'Alice L.', '--email', 'al@example.org'])
    expect((await ok(admin, ['user', 'show', 'alice', '--json'])).json()).toMatchObject({ Name: 'Alice L.', Email: 'al@example.org' })
    expect((await ok(admin, ['user', 'groups', 'list', 'alice', '--json'])).json()).toEqual([
      { GID: gid, Name: 'analysts', Desc: 'The analysts', Synced: false },
    ])
    await ok(admin, ['user', 'groups', 'rm', 'alice', String(gid)])
    expect((await ok(admin, ['group', 'members', 'analysts', '--json'])).json()).toEqual([])

    await ok(admin, ['group', 'update', 'analysts', '--name', 'hunters', '--desc', 'Threat hunters'])
    expect((await ok(admin, ['group', 'show', String(gid), '--json'])).json()).toMatchObject({ Name: 'hunters', Desc: 'Threat hunters' })
    expect((await ok(admin, ['group', 'list'])).stdout).toMatch(/hunters\s+Threat hunters/)
    await ok(admin, ['group', 'delete', 'hunters', '--yes'])
    expectFailure(await quarry(admin, ['group', 'show', String(gid)]), 1, 'group not found')

    await ok(admin, ['user', 'delete', 'alice', '-y'])
    expectFailure(await quarry(admin, ['user', 'show', String(uid)]), 1, 'user not found')
    expectFailure(await quarry(admin, ['user', 'show', 'alice']), 1, 'no user named "alice"')
  }, SLOW)

  test('the server\'s refusals come out as its Error message with exit 1', async () => {
    const admin = await adminHome()
    await ok(admin, ['group', 'create', 'twice'])
    expectFailure(await quarry(admin, ['group', 'create', 'twice']), 1, 'group name is taken')
    expectFailure(await quarry(admin, ['user', 'lock', 'admin']), 1, 'you cannot lock your own account')
    expectFailure(
      await quarry(admin, ['user', 'create', 'shorty', '--name', 'S', '--email', 's@example.com', '--password-stdin'], { stdin: 'short\n' }),
      1,
      'password must be at least 8 characters',
    )
    // an unreachable server is a plain message too
    expectFailure(await quarry(admin, ['--server', 'http://127.0.0.1:1', 'whoami', '--token', 'x']), 1, 'cannot reach http://127.0.0.1:1')
  }, SLOW)
})

describe('tokens', () => {
  test('a token made from a group of permissions works through --token and QUARRY_TOKEN, within its permissions', async () => {
    const admin = await adminHome()
    const before = Date.now()
    const created = (await ok(admin, ['token', 'create', 'nightly', '--group', 'Dashboards', '--perm', 'ListUsers', '--expires', '30d', '--json'])).json()
    expect(created.capabilities).toEqual(['DashboardRead', 'DashboardWrite', 'ListUsers'])
    const expires = Date.parse(created.expiresAt)
    expect(expires - before).toBeGreaterThanOrEqual(30 * 86_400_000 - 1000)
    expect(expires - Date.now()).toBeLessThanOrEqual(30 * 86_400_000)
    const secret: string = created.token

    const nobody = tempDir() // no saved login at all: the token alone authenticates
    expect((await ok(nobody, ['whoami', '--json', '--token', secret])).json().UID).toBe(1)
    expect((await ok(nobody, ['user', 'list', '--json'], { env: { QUARRY_TOKEN: secret } })).json().length).toBeGreaterThanOrEqual(1)
    // a permission the token lacks: the server's 403 message
    expectFailure(await quarry(nobody, ['--token', secret, 'token', 'list']), 1, 'permission TokenRead required')
    // admin-only routes never accept a token
    expectFailure(await quarry(nobody, ['--token', secret, 'group', 'create', 'via-token']), 1, 'API tokens cannot be used for admin-level APIs')

    // the secret is printed once, readable, by create; list and show never carry it
    const human = await ok(admin, ['token', 'create', 'readable', '--perm', 'Search,Download'])
    expect(human.stdout).toMatch(/Secret \(shown only this once.*\):\n[A-Za-z0-9_-]{43}\n/)
    expect(human.stdout).toMatch(/Expires:\s+never/)
    const list = (await ok(admin, ['token', 'list', '--json'])).json()
    expect(list.map((t: { name: string }) => t.name).sort()).toEqual(['nightly', 'readable'])
    expect(JSON.stringify(list)).not.toContain(secret)
    expect((await ok(admin, ['token', 'list'])).stdout).toMatch(new RegExp(`${created.id}\\s+nightly\\s+1\\s+`))
    const shown = (await ok(admin, ['token', 'show', created.id, '--json'])).json()
    expect(shown).toEqual({ ...created, token: undefined } as never)

    const updated = (await ok(admin, ['token', 'update', created.id, '--description', 'weekly now', '--perm', 'ListUsers', '--expires', 'never', '--json'])).json()
    expect(updated).toMatchObject({ description: 'weekly now', capabilities: ['ListUsers'], expiresAt: '0001-01-01T00:00:00Z' })
    expectFailure(await quarry(nobody, ['--token', secret, 'token', 'list']), 1, 'permission TokenRead required')
    expect((await ok(nobody, ['--token', secret, 'user', 'list', '--json'])).json().length).toBeGreaterThanOrEqual(1)

    const refreshed = (await ok(admin, ['token', 'refresh', created.id, '--expires', '2099-01-01T00:00:00Z', '--json'])).json()
    expect(refreshed.expiresAt).toBe('2099-01-01T00:00:00.000Z')
    expect(refreshed.token).not.toBe(secret)
    expectFailure(await quarry(nobody, ['--token', secret, 'whoami']), 1, 'invalid API token')
    expect((await ok(nobody, ['--token', refreshed.token, 'whoami', '--json'])).json().UID).toBe(1)

    await ok(admin, ['token', 'delete', created.id, '--yes'])
    expectFailure(await quarry(nobody, ['--token', refreshed.token, 'whoami']), 1, 'invalid API token')
    expectFailure(await quarry(admin, ['token', 'show', created.id]), 1, 'token not found')

    const perms = (await ok(admin, ['token', 'permissions', '--json'])).json()
    expect(perms).toContainEqual(expect.objectContaining({ Name: 'DashboardRead', Category: 'Dashboards' }))
  }, SLOW)

  test('--expires takes a duration, a time or never; anything else is bad usage', () => {
    const now = Date.UTC(2026, 0, 1)
    expect(expiryOf('30d', now)).toBe('2026-01-31T00:00:00.000Z')
    expect(expiryOf('90m', now)).toBe('2026-01-01T01:30:00.000Z')
    expect(expiryOf('2027-01-01T02:00:00+02:00', now)).toBe('2027-01-01T00:00:00.000Z')
    expect(expiryOf('never', now)).toBeNull()
    expect(() => expiryOf('soon', now)).toThrow('--expires')
    expect(() => expiryOf('0d', now)).toThrow('positive')
  }, SLOW)
})

describe('bad usage', () => {
  test('exit 2 with a message and a pointer to --help, nothing sent', async () => {
    const admin = await adminHome()
    const cases: [string[], string][] = [
      [['frobnicate'], 'Unknown command frobnicate'],
      [['user'], 'No command specified'],
      [['user', 'list', '--bogus'], 'unknown option --bogus'],
      [['user', 'show'], 'Missing required positional argument: USER'],
      [['user', 'show', 'a', 'b'], 'too many arguments'],
      [['user', 'create', 'bob', '--email', 'b@example.com'], 'missing --name NAME (the real name): every account needs both, and there is no terminal to ask on'],
      [['user', 'update', 'admin'], 'nothing to change'],
      [['token', 'create', 'x'], 'name at least one permission'],
      [['token', 'create', 'x', '--perm', 'Search', '--expires', 'tomorrow'], '--expires: "tomorrow"'],
      [['token', 'refresh', '5b0f0000-0000-4000-8000-000000000000'], 'Missing required argument: --expires'],
      [['group', 'update', '3'], 'nothing to change'],
      [['search', 'show', 'abc'], 'search ID "abc" is not a string of digits'],
      [['search', 'save', '123', '--metadata', '{nope'], '--metadata must be valid JSON'],
      [['search', 'import', 'x.tar', '--gid', '0'], '--gid: "0" is not a positive integer'],
      [['--server', 'ftp://x', 'whoami'], '--server: "ftp://x" must be an http or https URL'],
      [['whoami', '--server'], 'option --server needs a value'],
      [['completion', 'fish'], 'name the shell'],
      [['login', 'admin', '--token', 'x'], 'login makes a session; it cannot be combined with --token'],
    ]
    const runs = await Promise.all(cases.map(([args]) => quarry(admin, args)))
    runs.forEach((r, i) => {
      expectFailure(r, 2, cases[i]![1])
      expect(r.stderr).toContain('--help` for usage.')
    })
    expect((await quarry(admin, ['user', 'show'])).stderr).toContain('Run `quarry user show --help`')
    // bare `quarry`: the usage on stderr, exit 2
    const bare = await quarry(admin, [])
    expect(bare.code).toBe(2)
    expect(bare.stderr).toContain('USAGE quarry')
  }, SLOW)

  test('--help on every command, with usage and examples, exit 0', async () => {
    const tree = await commandTree(cli, () => [])
    const written: string[] = []
    const restore = redirectOut((text) => written.push(text))
    try {
      for (const path of tree.keys()) {
        written.length = 0
        const code = await run([...path.split(' ').filter(Boolean), '--help'], {})
        const text = written.join('')
        expect({ path, code }).toEqual({ path, code: 0 })
        expect(text).toContain(`USAGE quarry${path}`)
        expect({ path, examples: text.includes('EXAMPLES\n\n  $ ') }).toEqual({ path, examples: true })
      }
    } finally {
      restore()
    }
    expect(tree.size).toBeGreaterThan(40)
  }, SLOW)
})

describe('streaming uploads and downloads', () => {
  test('a file goes up as a streamed multipart form and comes back byte for byte, with progress counted', async () => {
    const home = await adminHome()
    const c = new Client({ server: server.url, jwt: savedJwt(home) })
    const dir = tempDir()
    const source = join(dir, 'blob.bin')
    const contents = new Uint8Array(3 * 1024 * 1024 + 17)
    crypto.getRandomValues(contents.subarray(0, 65536))
    for (let i = 65536; i < contents.length; i++) contents[i] = i % 251
    writeFileSync(source, contents)
    const { GUID } = await c.post<{ GUID: string }>('/api/resources', { ResourceName: 'streamed' })

    const counted = { up: 0, down: 0, upTotal: -1 as number | undefined, downTotal: -1 as number | undefined, stops: 0 }
    const meta = await c.upload<{ Size: number }>('PUT', `/api/resources/${GUID}/raw`, source, { ignored: 'a "quoted"\nfield' }, {
      start: (t) => void (counted.upTotal = t),
      advance: (n) => void (counted.up += n),
      stop: () => void counted.stops++,
    })
    expect(meta.Size).toBe(contents.length)
    expect(counted.up).toBe(contents.length)
    expect(counted.upTotal).toBe(contents.length)

    const target = join(dir, 'back.bin')
    const n = await c.download(`/api/resources/${GUID}/raw`, target, {
      start: (t) => void (counted.downTotal = t),
      advance: (b) => void (counted.down += b),
      stop: () => void counted.stops++,
    })
    expect(n).toBe(contents.length)
    expect(counted).toMatchObject({ down: contents.length, downTotal: contents.length, stops: 2 })
    expect(Buffer.from(readFileSync(target)).equals(Buffer.from(contents))).toBe(true)
    expect(existsSync(`${target}.part`)).toBe(false)

    // a file that grows while it goes up stops the upload with a clear message; the resource keeps its contents
    const growing = c.upload('PUT', `/api/resources/${GUID}/raw`, source, {}, {
      start: () => appendFileSync(source, 'more'),
      advance: () => {},
      stop: () => {},
    })
    await expect(growing).rejects.toThrow(`${source} changed while it was being uploaded`)
    expect((await c.get<{ Size: number }>(`/api/resources/${GUID}`)).Size).toBe(contents.length)

    // a refused download leaves nothing behind
    await expect(c.download('/api/resources/00000000-0000-4000-8000-000000000000/raw', join(dir, 'none.bin'))).rejects.toThrow('resource not found')
    expect(existsSync(join(dir, 'none.bin'))).toBe(false)
  }, SLOW)

  test('progress bars only on a terminal and never with --json; they end at 100%, also when the size was unknown', () => {
    expect(new Output(false, false).progress('x')).toBeUndefined()
    expect(new Output(true, true).progress('x')).toBeUndefined()
    let shown = ''
    const terminal = {
      isTTY: true,
      columns: 100,
      write: (s: string) => ((shown += s), true),
      cursorTo: () => true,
      clearLine: () => true,
      moveCursor: () => true,
      on: () => {},
      removeListener: () => {},
    } as unknown as NodeJS.WriteStream
    const strip = (s: string) => s.replace(/\u001b\[[0-9;?]*[A-Za-z]|\u001b[78]/g, '\n')
    const known = new Output(false, true).progress('import', terminal)!
    known.start(4096)
    known.advance(1024)
    known.advance(3072)
    known.stop()
    expect(strip(shown)).toContain('import [========================================] 100% 4.0 KiB/4.0 KiB')
    shown = ''
    const unknown = new Output(false, true).progress('export', terminal)!
    unknown.start(undefined)
    unknown.advance(3000)
    unknown.stop()
    expect(strip(shown)).toContain('export 0 B')
    expect(strip(shown)).toContain('export [========================================] 100% 2.9 KiB/2.9 KiB')
  })
})

describe('shell completion', () => {
  test('bash: valid syntax; completes commands, subcommands and options', async () => {
    const script = join(tempDir(), 'quarry.bash')
    writeFileSync(script, (await ok(tempDir(), ['completion', 'bash'])).stdout)
    const check = Bun.spawnSync(['bash', '-n', script])
    expect(check.exitCode).toBe(0)
    const complete = (line: string) => {
      const words = line.split(' ')
      const program = `source ${script}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _quarry; echo "\${COMPREPLY[@]}"`
      return Bun.spawnSync(['bash', '-c', program]).stdout.toString().trim().split(' ')
    }
    expect(complete('quarry tok')).toEqual(['token'])
    expect(complete('quarry token cr')).toEqual(['create'])
    expect(complete('quarry --json user groups ')).toEqual(expect.arrayContaining(['list', 'add', 'rm', '--help']))
    expect(complete('quarry token create x --p')).toEqual(['--perm'])
    expect(complete('quarry search import f.tar --b')).toEqual(['--batch-name', '--batch-info'])
    // the values of a positional argument that lists them; only the options each command takes
    expect(complete('quarry completion ').sort()).toEqual(['--help', 'bash', 'zsh'])
    expect(complete('quarry serve ')).toEqual(['--help'])
    expect(complete('quarry migrate ').sort()).toEqual(['--create', '--help', '--json'])
    expect(complete('quarry admin reset-password --').sort()).toEqual(['--generate', '--help', '--password-stdin'])
    expect(complete('quarry search run x --').sort()).toEqual(
      ['--background', '--ca', '--csv', '--end', '--help', '--json', '--no-history', '--rows', '--save', '--server', '--start', '--token'],
    )
  }, SLOW)

  test('zsh: valid syntax (checked with zsh -n where zsh is installed)', async () => {
    const text = (await ok(tempDir(), ['completion', 'zsh'])).stdout
    expect(text.startsWith('#compdef quarry\n')).toBe(true)
    expect(text).toContain('" token create") qwords=(--description --perm --group --expires --server --token --ca --json --help)')
    if (Bun.which('zsh')) {
      const script = join(tempDir(), '_quarry')
      writeFileSync(script, text)
      expect(Bun.spawnSync(['zsh', '-n', script]).exitCode).toBe(0)
    }
  }, SLOW)
})
