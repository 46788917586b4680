// The server as an operator runs it: HTTPS served directly from QUARRY_TLS_CERT and QUARRY_TLS_KEY (a self-signed
// certificate made here with openssl), the CLI trusting it through --ca or QUARRY_CA, TLS files that cannot be used
// stopping the start with one line, and the line that says a shutdown completed.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { chmodSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { listening, spawnServer, tempDirs } from './helpers'

const CLI = join(import.meta.dir, '..', 'cli', 'main.ts')
const PASSWORD = 'tls-test-password'
const tempDir = tempDirs('ops')

/** A self-signed certificate for 127.0.0.1 and localhost, valid for a day; answers the PEM file paths. */
function selfSigned(dir: string, name = 'server', keyType: 'ec' | 'rsa' = 'ec'): { cert: string; key: string } {
  const cert = join(dir, `${name}.crt`)
  const key = join(dir, `${name}.key`)
  const newKey = keyType === 'ec' ? ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'] : ['-newkey', 'rsa:2048']
  const made = Bun.spawnSync(
    ['openssl', 'req', '-x509', ...newKey, '-nodes', '-keyout', key, '-out', cert,
      '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'],
    { stderr: 'pipe' },
  )
  if (made.exitCode !== 0) throw new Error(`openssl failed: ${made.stderr.toString()}`)
  return { cert, key }
}

async function cli(args: string[], env: Record<string, string> = {}, stdin?: string) {
  const proc = Bun.spawn([process.execPath, 'run', CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: tempDir(), NO_COLOR: '1', ...env },
    stdin: stdin === undefined ? 'ignore' : new TextEncoder().encode(stdin),
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { code, stdout, stderr }
}

describe('HTTPS', () => {
  let dir: string
  let tls: { cert: string; key: string }
  let url: string
  let lines: string[]
  let server: ReturnType<typeof spawnServer>
  beforeAll(async () => {
    dir = tempDir()
    tls = selfSigned(dir)
    server = spawnServer({ QUARRY_DATA_DIR: join(dir, 'data'), QUARRY_ADMIN_PASSWORD: PASSWORD, QUARRY_TLS_CERT: tls.cert, QUARRY_TLS_KEY: tls.key })
    ;({ url, lines } = await listening(server))
  })
  afterAll(async () => {
    server.kill('SIGTERM')
    await server.exited
  })

  test('the server answers HTTPS with the configured certificate, and only HTTPS', async () => {
    expect(url).toStartWith('https://127.0.0.1:')
    const ca = await Bun.file(tls.cert).text()
    const res = await fetch(`${url}/api/version`, { tls: { ca } })
    expect(res.status).toBe(200)
    // a client that does not trust the certificate is refused by TLS itself
    expect(fetch(`${url}/api/version`)).rejects.toThrow()
    // plain HTTP on the same port gets no answer of the API
    const plain = await fetch(url.replace('https:', 'http:') + '/api/version').then((r) => r.status, () => 'refused')
    expect(plain).not.toBe(200)
  })

  test('the CLI talks to it with --ca or QUARRY_CA, and says what to do without', async () => {
    const home = tempDir()
    const login = await cli(['--server', url, '--ca', tls.cert, '--json', 'login', 'admin', '--password-stdin'], { HOME: home }, `${PASSWORD}\n`)
    expect(login.stderr).toBe('')
    expect(login.code).toBe(0)
    expect(JSON.parse(login.stdout)).toMatchObject({ User: 'admin', Admin: true })
    // the saved login's server, trusted through the environment
    const whoami = await cli(['--json', 'whoami'], { HOME: home, QUARRY_CA: tls.cert })
    expect(whoami.stderr).toBe('')
    expect(JSON.parse(whoami.stdout)).toMatchObject({ UID: 1 })
    // --ca is remembered with the login (as an absolute path): later commands to that server need it no more
    const remembered = await cli(['--json', 'whoami'], { HOME: home })
    expect(remembered.stderr).toBe('')
    expect(JSON.parse(remembered.stdout)).toMatchObject({ UID: 1 })
    expect(JSON.parse(readFileSync(join(home, '.config', 'quarry', 'credentials.json'), 'utf8')).servers[url].ca).toBe(tls.cert)
    // a wrong --ca still wins over the remembered one for the command it is given to
    expect((await cli(['--ca', selfSigned(dir, 'third').cert, 'whoami'], { HOME: home })).code).toBe(1)

    const untrusted = await cli(['--server', url, 'login', 'admin', '--password-stdin'], {}, `${PASSWORD}\n`)
    expect(untrusted.code).toBe(1)
    expect(untrusted.stderr).toContain(`cannot reach ${url}`)
    expect(untrusted.stderr).toContain('--ca FILE or QUARRY_CA')
    expect(untrusted.stderr.trim().split('\n')).toHaveLength(1)

    // another certificate than the server's is no help
    const other = selfSigned(dir, 'other')
    const wrong = await cli(['--server', url, '--ca', other.cert, 'login', 'admin', '--password-stdin'], {}, `${PASSWORD}\n`)
    expect(wrong.code).toBe(1)
    expect(wrong.stderr).toContain(`cannot reach ${url}`)

    const missing = await cli(['--server', url, '--ca', join(dir, 'nope.pem'), 'whoami'])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('--ca: cannot read')
  })

  test('every HTTPS answer carries Strict-Transport-Security for a year (API, errors, the docs page)', async () => {
    const ca = await Bun.file(tls.cert).text()
    const answers = await Promise.all([
      fetch(`${url}/api/version`, { tls: { ca } }),
      fetch(`${url}/api/no-such-route`, { tls: { ca } }),
      fetch(`${url}/api/info/whoami`, { tls: { ca } }),
      fetch(`${url}/api/login`, { tls: { ca }, method: 'POST', body: JSON.stringify({ User: 'admin', Pass: PASSWORD }) }),
      fetch(`${url}/api/login`, { tls: { ca }, method: 'POST', body: '{' }),
      fetch(`${url}/api/docs`, { tls: { ca } }),
    ])
    expect(answers.map((r) => r.status)).toEqual([200, 404, 401, 200, 400, 200])
    for (const res of answers) expect({ url: res.url, hsts: res.headers.get('strict-transport-security') }).toEqual({ url: res.url, hsts: 'max-age=31536000' })
  })

  test('TLS 1.2 only with forward-secret AEAD suites, and TLS 1.3 (ECDSA certificate)', async () => {
    const port = new URL(url).port
    expect(await handshake(port, ['-tls1_2', '-cipher', 'ECDHE-ECDSA-AES128-GCM-SHA256'])).toEqual({ protocol: 'TLSv1.2', suite: 'ECDHE-ECDSA-AES128-GCM-SHA256' })
    expect(await handshake(port, ['-tls1_2', '-cipher', 'ECDHE-ECDSA-CHACHA20-POLY1305'])).toEqual({ protocol: 'TLSv1.2', suite: 'ECDHE-ECDSA-CHACHA20-POLY1305' })
    expect((await handshake(port, ['-tls1_3'])).protocol).toBe('TLSv1.3')
    for (const suite of ['ECDHE-ECDSA-AES128-SHA', 'ECDHE-ECDSA-AES256-SHA384']) expect(await handshake(port, ['-tls1_2', '-cipher', suite])).toEqual(REFUSED)
    expect(await handshake(port, ['-tls1_1', '-cipher', 'DEFAULT:@SECLEVEL=0'])).toEqual(REFUSED)
  })

  test('the request lines of HTTPS requests are written as for HTTP', () => {
    expect(lines.map((l) => JSON.parse(l)).some((l) => l.msg === 'request' && l.path === '/api/version' && l.ip === '127.0.0.1')).toBe(true)
  })
})

const REFUSED = { protocol: undefined, suite: undefined }

/** A handshake of `openssl s_client` with these options: the protocol and suite agreed, or both undefined. */
async function handshake(port: string, options: string[]): Promise<{ protocol?: string; suite?: string }> {
  const proc = Bun.spawn(['openssl', 's_client', '-brief', '-connect', `127.0.0.1:${port}`, ...options], { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe', timeout: 20_000 })
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  const text = out + err
  if (!text.includes('CONNECTION ESTABLISHED')) return REFUSED
  return { protocol: /Protocol version: (\S+)/.exec(text)?.[1], suite: /Ciphersuite: (\S+)/.exec(text)?.[1] }
}

describe('TLS profile with an RSA certificate', () => {
  test('RSA key exchange and CBC suites are refused; ECDHE with AEAD and TLS 1.3 are served; plain HTTP has no HSTS', async () => {
    const dir = tempDir()
    const rsa = selfSigned(dir, 'rsa', 'rsa')
    const server = spawnServer({ QUARRY_DATA_DIR: join(dir, 'data'), QUARRY_ADMIN_PASSWORD: PASSWORD, QUARRY_TLS_CERT: rsa.cert, QUARRY_TLS_KEY: rsa.key })
    const plain = spawnServer({ QUARRY_DATA_DIR: join(dir, 'plain'), QUARRY_ADMIN_PASSWORD: PASSWORD })
    try {
      const port = new URL((await listening(server)).url).port
      // without forward secrecy: a stolen key would decrypt recorded traffic
      for (const suite of ['AES128-SHA', 'AES256-SHA', 'AES128-GCM-SHA256', 'AES256-GCM-SHA384']) expect({ suite, got: await handshake(port, ['-tls1_2', '-cipher', suite]) }).toEqual({ suite, got: REFUSED })
      // forward secret but CBC
      expect(await handshake(port, ['-tls1_2', '-cipher', 'ECDHE-RSA-AES128-SHA'])).toEqual(REFUSED)
      for (const suite of ['ECDHE-RSA-AES128-GCM-SHA256', 'ECDHE-RSA-AES256-GCM-SHA384', 'ECDHE-RSA-CHACHA20-POLY1305'])
        expect(await handshake(port, ['-tls1_2', '-cipher', suite])).toEqual({ protocol: 'TLSv1.2', suite })
      // what a client offering everything gets
      expect((await handshake(port, [])).protocol).toBe('TLSv1.3')
      expect((await handshake(port, ['-tls1_3'])).protocol).toBe('TLSv1.3')
      expect(await handshake(port, ['-tls1_1', '-cipher', 'DEFAULT:@SECLEVEL=0'])).toEqual(REFUSED)
      // HSTS means nothing over plain HTTP, and is not sent there
      const res = await fetch(`${(await listening(plain)).url}/api/version`)
      expect(res.status).toBe(200)
      expect(res.headers.get('strict-transport-security')).toBeNull()
    } finally {
      server.kill('SIGTERM')
      plain.kill('SIGTERM')
      await Promise.all([server.exited, plain.exited])
    }
  }, 60_000)
})

describe('TLS files that cannot be used stop the start with one line', () => {
  const cases: [string, (dir: string, tls: { cert: string; key: string }) => Record<string, string>, string][] = [
    ['a certificate without a key', (_, t) => ({ QUARRY_TLS_CERT: t.cert }), 'QUARRY_TLS_KEY: must be set'],
    ['a key without a certificate', (_, t) => ({ QUARRY_TLS_KEY: t.key }), 'QUARRY_TLS_CERT: must be set'],
    ['a certificate file that does not exist', (d, t) => ({ QUARRY_TLS_CERT: join(d, 'missing.crt'), QUARRY_TLS_KEY: t.key }), 'QUARRY_TLS_CERT: cannot read'],
    ['a key file that cannot be read', (d, t) => {
      const key = join(d, 'locked.key')
      writeFileSync(key, 'x')
      chmodSync(key, 0)
      return { QUARRY_TLS_CERT: t.cert, QUARRY_TLS_KEY: process.getuid?.() === 0 ? join(d, 'no-such.key') : key }
    }, 'QUARRY_TLS_KEY: cannot read'],
    ['a certificate that is not PEM', (d, t) => {
      writeFileSync(join(d, 'junk.crt'), 'not a certificate')
      return { QUARRY_TLS_CERT: join(d, 'junk.crt'), QUARRY_TLS_KEY: t.key }
    }, 'QUARRY_TLS_CERT: '],
    ['a key of another certificate', (d, t) => ({ QUARRY_TLS_CERT: t.cert, QUARRY_TLS_KEY: selfSigned(d, 'other').key }), 'QUARRY_TLS_KEY: '],
    ['a CA of the peers that does not exist', (d) => ({ QUARRY_PEER_CA: join(d, 'missing-ca.pem') }), 'QUARRY_PEER_CA: cannot read'],
    ['a CA of the peers that holds no certificate', (d, t) => ({ QUARRY_PEER_CA: t.key }), 'QUARRY_PEER_CA: '],
  ]
  for (const [what, env, message] of cases)
    test(what, async () => {
      const dir = tempDir()
      const tls = selfSigned(dir)
      const proc = spawnServer({ QUARRY_DATA_DIR: join(dir, 'data'), QUARRY_ADMIN_PASSWORD: PASSWORD, ...env(dir, tls) })
      const code = await proc.exited
      const stderr = (await new Response(proc.stderr).text()).trim()
      expect(code).toBe(2)
      expect(stderr.split('\n')).toHaveLength(1)
      expect(stderr).toContain(message)
      // nothing was started: no admin announced, no data directory made
      expect(await Bun.file(join(dir, 'data', 'quarry.db')).exists()).toBe(false)
    })
})

test('after SIGTERM, a last log line says the shutdown completed', async () => {
  const proc = spawnServer({ QUARRY_DATA_DIR: tempDir(), QUARRY_ADMIN_PASSWORD: PASSWORD })
  const { lines } = await listening(proc)
  proc.kill('SIGTERM')
  expect(await proc.exited).toBe(0)
  await Bun.sleep(50)
  const last = JSON.parse(lines.at(-1)!)
  expect(last).toMatchObject({ level: 'info', msg: 'stopped', signal: 'SIGTERM' })
  expect(last.ms).toBeNumber()
})
