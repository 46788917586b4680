// Login, sessions and JWTs over HTTP (docs/api.md "Conventions", "Logging in and sessions").
import { describe, expect, spyOn, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp } from '../../server/app'
import { createDiskBlobStore } from '../../server/blob'
import { parseTrustedProxies } from '../../server/http/client-address'
import { loadConfig } from '../../server/runtime/config'
import { createLogger } from '../../server/runtime/log'
import { writeSearchArchive } from '../../server/search/archive'
import { ZERO_TIME } from '../../server/runtime/time'
import { ADMIN_PASSWORD, type CallResult, type TestServer, createTestServer, expectError, heldGuessBurst, openStoreAt, refused, serverPerTest } from '../../test/helpers'

const INVALID = 'Invalid username or password'
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+Z$/

const setup = serverPerTest()

function expectLoginFailure(res: CallResult, status: number, reason?: string) {
  expect(res.status).toBe(status)
  expect(res.body.LoginStatus).toBe(false)
  expect(typeof res.body.Reason).toBe('string')
  expect(res.body.Reason.length).toBeGreaterThan(0)
  if (reason !== undefined) expect(res.body.Reason).toBe(reason)
  expect(res.body.JWT).toBeUndefined()
}

function expectLoginSuccess(res: CallResult, admin: boolean) {
  expect(res.status).toBe(200)
  expect(res.body).toEqual({ LoginStatus: true, JWT: expect.any(String), Admin: admin, MFARequired: false, MFASetupRequired: false })
}

const b64url = (v: string | Buffer) => Buffer.from(v).toString('base64url')
const decodePart = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'))
function parts(jwt: string) {
  const [h, p, s] = jwt.split('.')
  return { header: decodePart(h!), payload: decodePart(p!), h: h!, p: p!, s: s! }
}
function hmacJwt(header: object, payload: object, key: string, hash = 'sha256') {
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}`
  return `${input}.${createHmac(hash, key).update(input).digest('base64url')}`
}
async function signingKey(s: TestServer) {
  const key = await s.store.settings.get('jwt_signing_key')
  expect(key).toBeString()
  return key!
}

const whoami = (s: TestServer, jwt?: string, headers?: Record<string, string>) => s.call('GET', '/api/info/whoami', { jwt, headers })

describe('POST /api/login', () => {
  test('JSON login answers LoginStatus, JWT, Admin and the MFA flags', async () => {
    const s = await setup()
    const res = await s.call('POST', '/api/login', { json: { User: 'admin', Pass: ADMIN_PASSWORD } })
    expectLoginSuccess(res, true)
    const me = await whoami(s, res.body.JWT)
    expect(me.status).toBe(200)
    expect(me.body.UID).toBe(1)
    expect(me.body.User).toBe('admin')
  })

  test('form login works the same and a non-admin gets Admin false', async () => {
    const s = await setup()
    const u = await s.createUser({ User: 'formuser', Pass: 'form-password-1' })
    const res = await s.call('POST', '/api/login', { form: { User: 'formuser', Pass: 'form-password-1' } })
    expectLoginSuccess(res, false)
    const me = await whoami(s, res.body.JWT)
    expect(me.status).toBe(200)
    expect(me.body.UID).toBe(u.uid)
    expectLoginFailure(await s.call('POST', '/api/login', { form: { User: 'formuser', Pass: 'nope-nope-nope' } }), 422, INVALID)
  })

  test('wrong password and unknown user are both 422 with the same Reason', async () => {
    const s = await setup()
    await s.createUser({ User: 'alice', Pass: 'alice-password' })
    const wrong = await s.call('POST', '/api/login', { json: { User: 'alice', Pass: 'not-her-password' } })
    const unknown = await s.call('POST', '/api/login', { json: { User: 'nobody-here', Pass: 'whatever-pass' } })
    expectLoginFailure(wrong, 422, INVALID)
    expectLoginFailure(unknown, 422, INVALID)
    expect(unknown.body).toEqual(wrong.body)
  })

  test('a locked account gets 423 with the right password, and no session', async () => {
    const s = await setup()
    const u = await s.createUser({ User: 'locky', Pass: 'locky-password' })
    expect((await s.call('PUT', `/api/users/${u.uid}/lock`, { jwt: s.adminJwt })).status).toBe(200)
    expectError(await whoami(s, u.jwt), 401) // locking ended the existing session
    const res = await s.call('POST', '/api/login', { json: { User: 'locky', Pass: 'locky-password' } })
    expectLoginFailure(res, 423)
    expect(res.body.Reason).not.toBe(INVALID)
    // a wrong password on a locked account tells nothing about the lock
    expectLoginFailure(await s.call('POST', '/api/login', { json: { User: 'locky', Pass: 'wrong-password' } }), 422, INVALID)
    const sessions = await s.call('GET', `/api/users/${u.uid}/sessions`, { jwt: s.adminJwt })
    expect(sessions.body.Sessions).toEqual([])
    expect((await s.call('DELETE', `/api/users/${u.uid}/lock`, { jwt: s.adminJwt })).status).toBe(200)
    expectLoginSuccess(await s.call('POST', '/api/login', { json: { User: 'locky', Pass: 'locky-password' } }), false)
  })

  test('missing or mistyped fields are 400 with an Error body', async () => {
    const s = await setup()
    for (const json of [{ User: 'admin' }, { Pass: ADMIN_PASSWORD }, {}, [], { User: 1, Pass: ADMIN_PASSWORD }, { User: 'admin', Pass: null }])
      expectError(await s.call('POST', '/api/login', { json }), 400)
    expectError(await s.call('POST', '/api/login', { form: { User: 'admin' } }), 400)
    expectError(await s.call('POST', '/api/login', { body: '', headers: { 'content-type': 'application/json' } }), 400)
  })
})

describe('brute-force throttling', () => {
  async function fail(s: TestServer, user: string, times: number) {
    for (let i = 0; i < times; i++)
      expectLoginFailure(await s.call('POST', '/api/login', { json: { User: user, Pass: `wrong-${i}-password` } }), 422, INVALID)
  }
  const attempt = (s: TestServer, user: string, pass: string) => s.call('POST', '/api/login', { json: { User: user, Pass: pass } })

  test('after 5 failures within the window the right password gets 429 until the window passes', async () => {
    const s = await setup()
    expect(s.config.loginMaxFailures).toBe(5)
    await s.createUser({ User: 'target', Pass: 'target-password' })
    await fail(s, 'target', 5)
    const refused = await attempt(s, 'target', 'target-password')
    expect(refused.status).toBe(429)
    expect(refused.body.Error).toBeString()
    expect(refused.body.LoginStatus).toBe(false)
    expect(refused.body.JWT).toBeUndefined()
    // another user is not affected
    await s.createUser({ User: 'bystander', Pass: 'bystander-password' })
    expectLoginSuccess(await attempt(s, 'bystander', 'bystander-password'), false)
    // just before the window ends: still refused; once it has passed: in
    s.clock.advance(s.config.loginFailureWindowMs - 1)
    expect((await attempt(s, 'target', 'target-password')).status).toBe(429)
    s.clock.advance(1)
    expectLoginSuccess(await attempt(s, 'target', 'target-password'), false)
  })

  test('four failures are not yet throttled; unknown names are throttled too', async () => {
    const s = await setup()
    await s.createUser({ User: 'four', Pass: 'four-password' })
    await fail(s, 'four', 4)
    expectLoginSuccess(await attempt(s, 'four', 'four-password'), false)
    await fail(s, 'ghost', 5)
    expect((await attempt(s, 'ghost', 'any-password')).status).toBe(429)
  })

  test('a successful login resets the counter', async () => {
    const s = await setup()
    await s.createUser({ User: 'resetme', Pass: 'resetme-password' })
    await fail(s, 'resetme', 4)
    expectLoginSuccess(await attempt(s, 'resetme', 'resetme-password'), false)
    await fail(s, 'resetme', 4)
    expectLoginSuccess(await attempt(s, 'resetme', 'resetme-password'), false)
  })

  test('failures spread over more than the window do not add up', async () => {
    const s = await setup()
    await s.createUser({ User: 'slow', Pass: 'slow-password' })
    await fail(s, 'slow', 4)
    s.clock.advance(s.config.loginFailureWindowMs)
    await fail(s, 'slow', 4)
    expectLoginSuccess(await attempt(s, 'slow', 'slow-password'), false)
  })

  test('UID 1 admin is not locked by 5 failures', async () => {
    const s = await setup()
    await fail(s, 'admin', 5)
    expectLoginSuccess(await attempt(s, 'admin', ADMIN_PASSWORD), true)
  })

  /** `count` wrong guesses at once, then the right one while the checked ones are still being verified. */
  const burst = (s: TestServer, user: string, right: string, count: number) =>
    heldGuessBurst(s, count, (i) => attempt(s, user, `wrong-${i}-password`), () => attempt(s, user, right))

  test('60 parallel guesses at one account: 5 are checked, the rest (the right password too) get 429 unchecked', async () => {
    const s = await setup()
    await s.createUser({ User: 'victim', Pass: 'victim-password' })
    const { statuses, checks, last, answers } = await burst(s, 'victim', 'victim-password', 59)
    expect(statuses).toEqual({ 422: 5, 429: 55 })
    expect(checks).toBe(5)
    expect(last.status).toBe(429)
    for (const r of answers.filter((a) => a.status === 429)) {
      expect(r.body).toEqual({ LoginStatus: false, Reason: expect.any(String), Error: expect.any(String) })
      expect(Number(r.headers.get('retry-after'))).toBe(s.config.loginFailureWindowMs / 1000)
    }
    // still refused until the window has passed, then in
    s.clock.advance(s.config.loginFailureWindowMs - 1)
    expect((await attempt(s, 'victim', 'victim-password')).status).toBe(429)
    s.clock.advance(1)
    expectLoginSuccess(await attempt(s, 'victim', 'victim-password'), false)
  })

  test('an unknown name answers a parallel burst exactly as a known one, and its spellings share one count', async () => {
    const s = await setup()
    const { statuses, checks } = await burst(s, 'nobody-here', 'whatever-password', 59)
    expect(statuses).toEqual({ 422: 5, 429: 55 })
    expect(checks).toBe(5)
    // the lookup ignores ASCII case, so the throttle does too, for known and unknown names alike
    await s.createUser({ User: 'casey', Pass: 'casey-password' })
    for (const [known, unknown] of [['casey', 'ghost'], ['CASEY', 'GHOST'], ['Casey', 'Ghost'], ['cAsey', 'gHost'], ['caseY', 'ghosT']]) {
      expectLoginFailure(await attempt(s, known!, 'wrong-password'), 422, INVALID)
      expectLoginFailure(await attempt(s, unknown!, 'wrong-password'), 422, INVALID)
    }
    expect((await attempt(s, 'casey', 'casey-password')).status).toBe(429)
    expect((await attempt(s, 'ghost', 'any-password')).status).toBe(429)
  })

  test('UID 1 under a parallel burst: adminLoginRate checks a minute, shared by all requests; then in again', async () => {
    const s = await setup()
    expect(s.config.adminLoginRate).toBe(10)
    const first = await burst(s, 'admin', ADMIN_PASSWORD, 59)
    expect(first.statuses).toEqual({ 422: 10, 429: 50 })
    expect(first.checks).toBe(10)
    expect(first.last.status).toBe(429)
    // the rate holds: within the minute every further guess is refused without a check
    s.clock.advance(59_999)
    const second = await burst(s, 'admin', 'wrong-again-password', 9)
    expect(second.statuses).toEqual({ 429: 10 })
    expect(second.checks).toBe(0)
    // a minute after the window opened the admin gets in (strangers cannot lock it out for longer)
    s.clock.advance(1)
    expectLoginSuccess(await attempt(s, 'admin', ADMIN_PASSWORD), true)
    // and a successful login resets the count
    await fail(s, 'admin', 10)
    expect((await attempt(s, 'admin', ADMIN_PASSWORD)).status).toBe(429)
  })

  test('the throttle keeps at most loginThrottleEntries rows; new names past it get 429, rows past their window are swept', async () => {
    const s = await setup({ loginThrottleEntries: 100 })
    const rows = async () => Number((await s.rows('SELECT count(*) AS n FROM login_attempts'))[0]!.n)
    await s.createUser({ User: 'latecomer', Pass: 'latecomer-password' })
    expect(await rows()).toBe(0)
    for (let i = 0; (await rows()) < 100; i++) expectLoginFailure(await attempt(s, `made-up-${i}`, 'wrong-password'), 422, INVALID)
    // a name with no row, known or not, is refused alike, unchecked; nothing is added
    const verify = spyOn(s.auth, 'verifyPassword')
    expect((await attempt(s, 'another-made-up', 'wrong-password')).status).toBe(429)
    expect((await attempt(s, 'latecomer', 'wrong-password')).status).toBe(429)
    expect(verify.mock.calls.length).toBe(0)
    verify.mockRestore()
    expect(await rows()).toBe(100)
    // names with a row go on as before, and UID 1 is never refused by the bound
    expectLoginFailure(await attempt(s, 'made-up-0', 'wrong-password'), 422, INVALID)
    expectLoginSuccess(await attempt(s, 'admin', ADMIN_PASSWORD), true)
    // once their windows have passed, the sweep frees the rows
    s.clock.advance(s.config.loginFailureWindowMs)
    await s.auth.sweepExpiredSessions()
    expect(await rows()).toBe(0)
    expectLoginSuccess(await attempt(s, 'latecomer', 'latecomer-password'), false)
  })

  test('with the real hash cost, a wrong password for a known name and any password for an unknown one take alike', async () => {
    const s = await setup({ passwordHash: loadConfig({}).config.passwordHash })
    // three known names, 5 wrong passwords each (the throttle's limit), against 15 unknown ones: medians of 15, as
    // one of 5 moved past 2 x on a machine shared with the other test worker
    for (let k = 0; k < 3; k++) await s.createUser({ User: `timed-${k}`, Pass: 'timed-password' })
    const time = async (user: string) => {
      const started = performance.now()
      expectLoginFailure(await attempt(s, user, 'wrong-password'), 422, INVALID)
      return performance.now() - started
    }
    await time('warm-up-unknown')
    const known: number[] = []
    const unknown: number[] = []
    // alternating, so load on the machine hits both alike
    for (let i = 0; i < 15; i++) {
      known.push(await time(`timed-${i % 3}`))
      unknown.push(await time(`unknown-${i}`))
    }
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
    const ratio = median(known) / median(unknown)
    expect(ratio).toBeGreaterThan(0.5)
    expect(ratio).toBeLessThan(2)
  })

  test('a password change, lock or deletion while the login\'s check runs wins: no session is made', async () => {
    const s = await setup()
    /** Logs in while `meanwhile` runs with the password check held open. */
    async function during(user: string, pass: string, meanwhile: () => Promise<unknown>) {
      const original = s.auth.verifyPassword.bind(s.auth)
      let release!: () => void
      const gate = new Promise<void>((r) => (release = r))
      let started!: () => void
      const checking = new Promise<void>((r) => (started = r))
      const spy = spyOn(s.auth, 'verifyPassword').mockImplementation(async (p: string, h: string) => {
        started()
        await gate
        return original(p, h)
      })
      const login = attempt(s, user, pass)
      await checking
      await meanwhile()
      release()
      const res = await login
      spy.mockRestore()
      return res
    }
    const sessions = (uid: number) => s.rows('SELECT id FROM sessions WHERE uid = ?', [uid])
    const changed = await s.createUser({ User: 'changed', Pass: 'old-password' })
    const res = await during('changed', 'old-password', () =>
      s.call('PUT', `/api/users/${changed.uid}/pwd`, { jwt: s.adminJwt, json: { NewPass: 'new-password' } }))
    expectLoginFailure(res, 422, INVALID)
    expect(await sessions(changed.uid)).toEqual([])
    const locked = await s.createUser({ User: 'locked', Pass: 'locked-password' })
    expectLoginFailure(await during('locked', 'locked-password', () => s.call('PUT', `/api/users/${locked.uid}/lock`, { jwt: s.adminJwt })), 423)
    expect(await sessions(locked.uid)).toEqual([])
    const deleted = await s.createUser({ User: 'deleted', Pass: 'deleted-password' })
    expectLoginFailure(await during('deleted', 'deleted-password', () => s.call('DELETE', `/api/users/${deleted.uid}`, { jwt: s.adminJwt })), 422, INVALID)
    expect(s.logs.filter((l) => l.includes('"level":"error"'))).toEqual([])
    // undisturbed, the same login goes through
    expectLoginSuccess(await attempt(s, 'changed', 'new-password'), false)
  })

  test('a user name of 1024 characters costs the throttle one row of fixed size', async () => {
    const s = await setup()
    expectLoginFailure(await attempt(s, 'x'.repeat(1024), 'wrong-password'), 422, INVALID)
    const subjects = (await s.rows('SELECT subject FROM login_attempts')).map((r) => r.subject as string)
    expect(subjects.length).toBe(1)
    expect(subjects[0]!.length).toBeLessThan(80)
  })
})

describe('JWT', () => {
  test('is HS256 with sub, jti, iat and exp, signed with the server key', async () => {
    const s = await setup()
    const u = await s.createUser()
    const { header, payload, h, p, s: sig } = parts(u.jwt)
    expect(header.alg).toBe('HS256')
    expect(payload.sub).toBe(String(u.uid))
    expect(payload.jti).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    expect(payload.iat).toBeNumber()
    expect(payload.exp).toBeNumber()
    expect(Math.abs(payload.exp - payload.iat - s.config.sessionLifetimeMs / 1000)).toBeLessThanOrEqual(2)
    expect(createHmac('sha256', await signingKey(s)).update(`${h}.${p}`).digest('base64url')).toBe(sig)
    // every login is its own session
    expect(parts(await s.login(u.User, u.Pass)).payload.jti).not.toBe(payload.jti)
  })

  test('alg none, another key, another alg and a tampered payload are 401', async () => {
    const s = await setup()
    const u = await s.createUser()
    const { header, payload, h, s: sig } = parts(u.jwt)
    const key = await signingKey(s)
    const forged = [
      `${b64url(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${b64url(JSON.stringify(payload))}.`,
      `${b64url(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${b64url(JSON.stringify(payload))}.${sig}`,
      hmacJwt(header, payload, 'a-completely-different-signing-key-0123456789'),
      hmacJwt({ alg: 'HS512', typ: 'JWT' }, payload, key, 'sha512'),
      `${h}.${b64url(JSON.stringify({ ...payload, sub: '1' }))}.${sig}`,
      `${h}.${b64url(JSON.stringify({ ...payload, exp: payload.exp + 3600 }))}.${sig}`,
    ]
    for (const jwt of forged) expectError(await whoami(s, jwt), 401)
    // the genuine one still works
    expect((await whoami(s, u.jwt)).status).toBe(200)
  })

  test('a correctly signed JWT without a matching session row is 401', async () => {
    const s = await setup()
    const u = await s.createUser()
    const { header, payload } = parts(u.jwt)
    const key = await signingKey(s)
    // a session id that was never issued
    expectError(await whoami(s, hmacJwt(header, { ...payload, jti: crypto.randomUUID() }, key)), 401)
    // the user's live session id, claimed for someone else
    const adminJti = parts(s.adminJwt).payload.jti
    expectError(await whoami(s, hmacJwt(header, { ...payload, jti: adminJti }, key)), 401)
    expectError(await whoami(s, hmacJwt(header, { ...payload, jti: payload.jti, sub: '1' }, key)), 401)
    // the same claims re-signed with the right key are fine: the row is what counts
    expect((await whoami(s, hmacJwt(header, payload, key))).status).toBe(200)
  })
})

describe('logout', () => {
  test('PUT /api/logout ends only this session', async () => {
    const s = await setup()
    const u = await s.createUser()
    const other = await s.login(u.User, u.Pass)
    const res = await s.call('PUT', '/api/logout', { jwt: u.jwt })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({})
    expectError(await whoami(s, u.jwt), 401)
    expectError(await s.call('PUT', '/api/logout', { jwt: u.jwt }), 401)
    expect((await whoami(s, other)).status).toBe(200)
    const list = await s.call('GET', `/api/users/${u.uid}/sessions`, { jwt: other })
    expect(list.body.Sessions).toHaveLength(1)
  })

  test('DELETE /api/logout ends every session of the user and no one else\'s', async () => {
    const s = await setup()
    const u = await s.createUser()
    const second = await s.login(u.User, u.Pass)
    const third = await s.login(u.User, u.Pass)
    const res = await s.call('DELETE', '/api/logout', { jwt: second })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({})
    for (const jwt of [u.jwt, second, third]) expectError(await whoami(s, jwt), 401)
    expect((await whoami(s, s.adminJwt)).status).toBe(200)
    const list = await s.call('GET', `/api/users/${u.uid}/sessions`, { jwt: s.adminJwt })
    expect(list.body.Sessions).toEqual([])
  })

  test('logout without a JWT is 401', async () => {
    const s = await setup()
    expectError(await s.call('PUT', '/api/logout'), 401)
    expectError(await s.call('DELETE', '/api/logout'), 401)
  })
})

describe('session timeouts', () => {
  test('a session idle for sessionIdleMs is 401; any use in between keeps it alive', async () => {
    const s = await setup()
    const idle = s.config.sessionIdleMs
    expect(idle).toBe(60 * 60_000)
    const u = await s.createUser()
    s.clock.advance(idle - 1)
    expect((await whoami(s, u.jwt)).status).toBe(200)
    s.clock.advance(idle - 1)
    expect((await whoami(s, u.jwt)).status).toBe(200)
    s.clock.advance(idle)
    expectError(await whoami(s, u.jwt), 401)
    // gone for good: going back in time does not revive it
    s.clock.advance(-idle)
    expectError(await whoami(s, u.jwt), 401)
  })

  test('a session in constant use ends after sessionLifetimeMs', async () => {
    const s = await setup()
    const { sessionIdleMs: idle, sessionLifetimeMs: lifetime } = s.config
    expect(lifetime).toBe(24 * 3_600_000)
    const u = await s.createUser()
    const step = idle - 60_000
    let elapsed = 0
    while (elapsed + step < lifetime - 1) {
      s.clock.advance(step)
      elapsed += step
      expect((await whoami(s, u.jwt)).status).toBe(200)
    }
    s.clock.advance(lifetime - 1 - elapsed)
    expect((await whoami(s, u.jwt)).status).toBe(200)
    s.clock.advance(1)
    expectError(await whoami(s, u.jwt), 401)
  })

  test('configured timeouts are honoured', async () => {
    const s = await setup({ sessionIdleMs: 10_000, sessionLifetimeMs: 25_000 })
    const u = await s.createUser()
    s.clock.advance(9_999)
    expect((await whoami(s, u.jwt)).status).toBe(200)
    s.clock.advance(10_000)
    expectError(await whoami(s, u.jwt), 401)
    const again = await s.login(u.User, u.Pass)
    for (let i = 0; i < 3; i++) {
      s.clock.advance(8_000)
      expect((await whoami(s, again)).status).toBe(200)
    }
    s.clock.advance(1_000)
    expectError(await whoami(s, again), 401)
  })
})

describe('GET /api/login/refreshtoken', () => {
  test('answers a new JWT and ends the old session', async () => {
    const s = await setup()
    const u = await s.createUser()
    const res = await s.call('GET', '/api/login/refreshtoken', { jwt: u.jwt })
    expectLoginSuccess(res, false)
    expect(res.body.JWT).not.toBe(u.jwt)
    expect(parts(res.body.JWT).payload.sub).toBe(String(u.uid))
    expect(parts(res.body.JWT).payload.jti).not.toBe(parts(u.jwt).payload.jti)
    expect((await whoami(s, res.body.JWT)).body.UID).toBe(u.uid)
    expectError(await whoami(s, u.jwt), 401)
    expectError(await s.call('GET', '/api/login/refreshtoken', { jwt: u.jwt }), 401)
    const list = await s.call('GET', `/api/users/${u.uid}/sessions`, { jwt: res.body.JWT })
    expect(list.body.Sessions).toHaveLength(1)
  })

  test('a refreshed session ends when the original would have: refresh does not stretch the lifetime', async () => {
    const s = await setup()
    const u = await s.createUser()
    const step = s.config.sessionIdleMs / 2
    let jwt = u.jwt
    let elapsed = 0
    while (elapsed + step < s.config.sessionLifetimeMs) {
      s.clock.advance(step)
      elapsed += step
      const res = await s.call('GET', '/api/login/refreshtoken', { jwt })
      expectLoginSuccess(res, false)
      jwt = res.body.JWT
    }
    expect((await whoami(s, jwt)).status).toBe(200)
    s.clock.advance(s.config.sessionLifetimeMs - elapsed)
    expectError(await whoami(s, jwt), 401)
  })

  test('an admin refresh keeps Admin true; without a JWT it is 401', async () => {
    const s = await setup()
    expectLoginSuccess(await s.call('GET', '/api/login/refreshtoken', { jwt: s.adminJwt }), true)
    expectError(await s.call('GET', '/api/login/refreshtoken'), 401)
  })
})

describe('GET /api/login/tmptoken', () => {
  test('answers a download-only JWT that normal routes refuse with 401', async () => {
    const s = await setup()
    const u = await s.createUser()
    const res = await s.call('GET', '/api/login/tmptoken', { jwt: u.jwt })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ LoginStatus: true, JWT: expect.any(String) })
    const tmp = res.body.JWT as string
    expect(parts(tmp).payload.sub).toBe(String(u.uid))
    for (const [method, path] of [
      ['GET', '/api/info/whoami'],
      ['GET', '/api/testauth'],
      ['GET', '/api/settings'],
      ['GET', '/api/login/refreshtoken'],
      ['GET', '/api/login/tmptoken'],
      ['GET', `/api/users/${u.uid}`],
      ['GET', '/api/groups'],
      ['PUT', '/api/logout'],
    ] as const)
      expectError(await s.call(method, path, { jwt: tmp }), 401)
    // the session that asked for it carries on
    expect((await whoami(s, u.jwt)).status).toBe(200)
  })

  test('lives 3 seconds: listed as TempSession until then, accepted by download routes until then', async () => {
    const s = await setup()
    const u = await s.createUser()
    const tmp = (await s.call('GET', '/api/login/tmptoken', { jwt: u.jwt })).body.JWT as string
    const temps = async () =>
      (await s.call('GET', `/api/users/${u.uid}/sessions`, { jwt: u.jwt })).body.Sessions.filter((x: { TempSession: boolean }) => x.TempSession)
    // No download route exists yet, so the download acceptance is checked on the service the guard calls.
    const download = (headers: Record<string, string>) =>
      s.auth.authorize(new Request('http://localhost/download', { headers }), { key: 'self', download: true, cookie: true })
    expect((await download({ authorization: `Bearer ${tmp}` })).uid).toBe(u.uid)
    expect((await download({ cookie: `token=${tmp}` })).session?.temp).toBe(true)
    expect(await temps()).toHaveLength(1)
    s.clock.advance(2_999)
    expect(await temps()).toHaveLength(1)
    expect((await download({ authorization: `Bearer ${tmp}` })).uid).toBe(u.uid)
    s.clock.advance(1)
    expect(await temps()).toEqual([])
    await expect(download({ authorization: `Bearer ${tmp}` })).rejects.toMatchObject({ status: 401 })
    expectError(await whoami(s, tmp), 401)
  })

  test('without a JWT it is 401', async () => {
    const s = await setup()
    expectError(await s.call('GET', '/api/login/tmptoken'), 401)
  })
})

describe('credentials on the request', () => {
  test('Authorization header: missing, wrong scheme or garbage is 401 with an Error body', async () => {
    const s = await setup()
    const jwt = s.adminJwt
    expectError(await whoami(s), 401)
    for (const authorization of [
      `Basic ${btoa('admin:' + ADMIN_PASSWORD)}`,
      `Token ${jwt}`,
      jwt,
      'Bearer',
      'Bearer ',
      'Bearer garbage',
      'Bearer a.b.c',
      `Bearer ${jwt} extra`,
      `Bearer ${jwt.slice(0, -2)}`,
      `Bearer ${jwt}x`,
    ])
      expectError(await whoami(s, undefined, { authorization }), 401)
    // the scheme name is case-insensitive (RFC 7235)
    expect((await whoami(s, undefined, { authorization: `bearer ${jwt}` })).status).toBe(200)
  })

  test('a JWT in Sec-WebSocket-Protocol is accepted on a WebSocket upgrade only', async () => {
    const s = await setup()
    const u = await s.createUser()
    const ws = { upgrade: 'websocket', connection: 'Upgrade', 'sec-websocket-protocol': u.jwt }
    const ok = await whoami(s, undefined, ws)
    expect(ok.status).toBe(200)
    expect(ok.body.UID).toBe(u.uid)
    expect((await s.call('GET', '/api/testauth', { headers: ws })).status).toBe(200)
    expectError(await whoami(s, undefined, { 'sec-websocket-protocol': u.jwt }), 401)
    expectError(await whoami(s, undefined, { ...ws, 'sec-websocket-protocol': 'garbage' }), 401)
    await s.call('PUT', '/api/logout', { jwt: u.jwt })
    expectError(await whoami(s, undefined, ws), 401)
  })

  test('a malformed, oversized or empty token cookie is 401 with an Error body, never a server fault', async () => {
    const s = await setup()
    const u = await s.createUser()
    const download = `/api/resources/${crypto.randomUUID()}/raw`
    for (const cookie of [
      'token=%E0%A4%A', 'token=%', 'token=%ZZ', 'token=%C0%AF', 'token=', 'token=""', 'token="', `token=${'a'.repeat(9000)}`,
      `token=${u.jwt}%`, `token=${encodeURIComponent(u.jwt)}x`, 'token=a.b.c', 'token;token=;token=%', `xtoken=${u.jwt}`,
    ]) {
      expectError(await s.call('GET', download, { headers: { cookie } }), 401)
      expectError(await s.call('POST', '/api/searchctrl/import', { headers: { cookie, origin: 'http://localhost' } }), 401)
    }
    expect(s.logs.filter((l) => l.includes('"level":"error"'))).toEqual([])
    // the genuine cookie, plain, percent-encoded or quoted, still authenticates (a 404: no such resource)
    for (const cookie of [`token=${u.jwt}`, `a=b; token=${encodeURIComponent(u.jwt)}`, `token="${u.jwt}"`])
      expectError(await s.call('GET', download, { headers: { cookie } }), 404)
  })

  test('a cookie-authenticated request that changes something must come from this server (Origin or Sec-Fetch-Site)', async () => {
    const s = await setup()
    const u = await s.createUser()
    const cookie = `token=${u.jwt}`
    const form = new FormData()
    form.append('file', new Blob([await new Response(writeSearchArchive(
      { UserQuery: 'tag=x', EffectiveQuery: 'tag=x', StartRange: ZERO_TIME, EndRange: ZERO_TIME, Started: ZERO_TIME, Finished: ZERO_TIME },
      [{ Data: 'aGk=' }],
    )).arrayBuffer()]), 'search.tar.gz')
    const formRes = new Response(form)
    const type = formRes.headers.get('content-type')!
    const bytes = new Uint8Array(await formRes.arrayBuffer())
    const importWith = (headers: Record<string, string>) => ({ body: bytes, headers: { 'content-type': type, ...headers } })
    for (const headers of <Record<string, string>[]>[
      { cookie },
      { cookie, origin: 'https://evil.example' },
      { cookie, origin: 'http://localhost.evil.example' },
      { cookie, origin: 'http://evil.example@localhost' },
      { cookie, origin: 'null' },
      { cookie, origin: 'not a url' },
      { cookie, 'sec-fetch-site': 'cross-site' },
      { cookie, 'sec-fetch-site': 'same-site' },
      { cookie, 'sec-fetch-site': 'none' },
      { cookie, origin: 'https://evil.example', 'sec-fetch-site': 'same-origin' },
      { cookie, host: 'localhost', origin: 'http://localhost:8080' },
    ])
      await refused(s, 403, 'POST', '/api/searchctrl/import', importWith(headers))
    // this server's own pages: by Origin (against the Host the request was sent to) or by Sec-Fetch-Site
    for (const headers of <Record<string, string>[]>[
      { cookie, origin: 'http://localhost' },
      { cookie, 'sec-fetch-site': 'same-origin' },
      { cookie, host: 'quarry.example:8443', origin: 'https://quarry.example:8443' },
    ]) {
      const res = await s.call('POST', '/api/searchctrl/import', importWith(headers))
      expect(res.status).toBe(200)
      expect(res.body.UID).toBe(u.uid)
    }
    // a JWT in a header is no browser's doing: no proof of origin needed; a GET by cookie needs none either
    expect((await s.call('POST', '/api/searchctrl/import', { ...importWith({ origin: 'https://evil.example' }), jwt: u.jwt })).status).toBe(200)
    expectError(await s.call('GET', `/api/resources/${crypto.randomUUID()}/raw`, { headers: { cookie, origin: 'https://evil.example' } }), 404)
  })

  test('behind a trusted proxy that rewrites Host, the cookie\'s origin is checked against X-Forwarded-Host and -Proto', async () => {
    // A real listening server, so that the TCP peer (127.0.0.1) is what decides whether the proxy is trusted; Host is
    // what the proxy sent to (127.0.0.1:port), as nginx's default proxy_pass does.
    const serve = async (trusted: string | undefined) => {
      const s = await setup(trusted ? { trustedProxies: parseTrustedProxies(trusted) } : {})
      s.app.listen({ hostname: '127.0.0.1', port: 0 })
      return { s, base: `http://127.0.0.1:${s.app.server!.port}` }
    }
    const archive = new Uint8Array(await new Response(writeSearchArchive(
      { UserQuery: 'tag=x', EffectiveQuery: 'tag=x', StartRange: ZERO_TIME, EndRange: ZERO_TIME, Started: ZERO_TIME, Finished: ZERO_TIME },
      [{ Data: 'aGk=' }],
    )).arrayBuffer())
    /** An import by cookie with these headers over TCP: its status, and the searches the store then holds. */
    const importAs = async ({ s, base }: Awaited<ReturnType<typeof serve>>, jwt: string, headers: Record<string, string>) => {
      const form = new FormData()
      form.append('file', new Blob([archive]), 'search.tar.gz')
      const res = await fetch(`${base}/api/searchctrl/import`, { method: 'POST', body: form, headers: { cookie: `token=${jwt}`, ...headers } })
      await res.arrayBuffer()
      return { status: res.status, searches: (await s.rows('SELECT count(*) AS n FROM saved_searches'))[0]!.n }
    }
    const page = { origin: 'https://quarry.example', 'x-forwarded-host': 'quarry.example', 'x-forwarded-proto': 'https' }

    const behind = await serve('127.0.0.1')
    try {
      const u = await behind.s.createUser()
      let imported = 0
      const accepted = async (headers: Record<string, string>) => {
        expect({ headers, ...(await importAs(behind, u.jwt, headers)) }).toEqual({ headers, status: 200, searches: ++imported })
      }
      const refusedWith = async (headers: Record<string, string>) => {
        expect({ headers, ...(await importAs(behind, u.jwt, headers)) }).toEqual({ headers, status: 403, searches: imported })
      }
      // Quarry's own page, as the browser saw it through the proxy
      await accepted(page)
      await accepted({ ...page, 'x-forwarded-host': 'Quarry.Example:443' })
      await accepted({ ...page, 'x-forwarded-host': 'client-sent.example, quarry.example' })
      await accepted({ origin: 'http://quarry.example:8080', 'x-forwarded-host': 'quarry.example:8080', 'x-forwarded-proto': 'http' })
      // without X-Forwarded-Host the Host still decides; without -Proto only the host is compared, as before
      await accepted({ origin: behind.base })
      await accepted({ origin: 'https://quarry.example', 'x-forwarded-host': 'quarry.example' })
      // other sites stay out
      await refusedWith({ ...page, origin: 'https://evil.example' })
      await refusedWith({ ...page, 'x-forwarded-host': 'evil.example' })
      await refusedWith({ ...page, 'x-forwarded-host': 'quarry.example, evil.example' })
      await refusedWith({ ...page, 'x-forwarded-proto': 'http' })
      await refusedWith({ ...page, 'x-forwarded-proto': 'javascript' })
      await refusedWith({ ...page, 'x-forwarded-host': 'evil.example@quarry.example' })
      await refusedWith({ ...page, 'x-forwarded-host': 'quarry.example/x' })
      await refusedWith({ origin: behind.base, 'x-forwarded-host': 'quarry.example' })
      await refusedWith({ 'x-forwarded-host': 'quarry.example', 'x-forwarded-proto': 'https' })
    } finally {
      await behind.s.app.stop(true)
    }

    // from a peer that is no trusted proxy, the forwarded headers are anyone's and ignored
    for (const trusted of [undefined, '10.0.0.0/8']) {
      const direct = await serve(trusted)
      try {
        const u = await direct.s.createUser()
        expect(await importAs(direct, u.jwt, page)).toEqual({ status: 403, searches: 0 })
        expect(await importAs(direct, u.jwt, { ...page, origin: direct.base })).toEqual({ status: 200, searches: 1 })
      } finally {
        await direct.s.app.stop(true)
      }
    }
  })

  test('GET /api/testauth is 200 {} with a JWT and 401 without', async () => {
    const s = await setup()
    const ok = await s.call('GET', '/api/testauth', { jwt: s.adminJwt })
    expect(ok.status).toBe(200)
    expect(ok.body).toEqual({})
    expectError(await s.call('GET', '/api/testauth'), 401)
  })
})

describe('session list', () => {
  test('shows Origin of the client and LastHit, which follows use', async () => {
    const s = await setup()
    const u = await s.createUser()
    s.app.listen({ hostname: '127.0.0.1', port: 0 })
    try {
      const base = `http://127.0.0.1:${s.app.server!.port}`
      const login = await fetch(`${base}/api/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ User: u.User, Pass: u.Pass }),
      })
      expect(login.status).toBe(200)
      const jwt = ((await login.json()) as { JWT: string }).JWT
      const loginTime = s.clock.now()
      const list = async () => {
        const res = await fetch(`${base}/api/users/${u.uid}/sessions`, { headers: { authorization: `Bearer ${jwt}` } })
        expect(res.status).toBe(200)
        return (await res.json()) as { UID: number; User: string; Sessions: Record<string, unknown>[] }
      }
      const first = await list()
      expect(first.UID).toBe(u.uid)
      expect(first.User).toBe(u.User)
      // the helper's own login (through app.handle) has no network origin; ours came over TCP
      const ours = first.Sessions.find((x) => x.Origin === '127.0.0.1')
      expect(ours).toEqual({ Origin: '127.0.0.1', LastHit: new Date(loginTime).toISOString(), TempSession: false, Synced: false })
      expect(first.Sessions).toHaveLength(2)
      s.clock.advance(90_000)
      const later = (await list()).Sessions.find((x) => x.Origin === '127.0.0.1')!
      expect(later.LastHit).toMatch(ISO)
      expect(later.LastHit).toBe(new Date(loginTime + 90_000).toISOString())
    } finally {
      await s.app.stop(true)
    }
  })

  test('admins see anyone\'s sessions, users only their own', async () => {
    const s = await setup()
    const a = await s.createUser()
    const b = await s.createUser()
    const own = await s.call('GET', `/api/users/${a.uid}/sessions`, { jwt: a.jwt })
    expect(own.status).toBe(200)
    expect(own.body.Sessions).toHaveLength(1)
    expect(own.body.Sessions[0].LastHit).toMatch(ISO)
    expectError(await s.call('GET', `/api/users/${b.uid}/sessions`, { jwt: a.jwt }), 403)
    const byAdmin = await s.call('GET', `/api/users/${b.uid}/sessions`, { jwt: s.adminJwt })
    expect(byAdmin.status).toBe(200)
    expect(byAdmin.body.UID).toBe(b.uid)
    expectError(await s.call('GET', `/api/users/${a.uid}/sessions`), 401)
  })
})

describe('first start', () => {
  async function start(dir: string, logs: string[]) {
    const { store } = await openStoreAt(dir)
    const config = { ...loadConfig({}).config, dataDir: dir, adminPassword: undefined, passwordHash: { memoryCost: 256, timeCost: 1 } }
    const log = createLogger('debug', (line) => void logs.push(line))
    const blobs = await createDiskBlobStore({ dataDir: dir })
    const { app } = await createApp({ config, store, blobs, log })
    const call = (method: string, path: string, jwt?: string, body?: unknown) =>
      app.handle(
        new Request(`http://localhost${path}`, {
          method,
          headers: { 'content-type': 'application/json', ...(jwt ? { authorization: `Bearer ${jwt}` } : {}) },
          body: body === undefined ? undefined : JSON.stringify(body),
        }),
      )
    const login = (Pass: string, User = 'admin') => call('POST', '/api/login', undefined, { User, Pass })
    return { app, store, login, call }
  }
  const fileOf = (dir: string) => join(dir, 'initial-admin-password')
  /** The log lines (parsed) whose message is `msg`. */
  const linesOf = (logs: string[], msg: RegExp) => logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => msg.test(String(l.msg)))
  /** A first start on `dir` that is stopped again; answers the generated password from its file. */
  const firstStart = async (dir: string) => {
    const first = await start(dir, [])
    await first.store.close()
    return readFileSync(fileOf(dir), 'utf8').trim()
  }
  const inTempDir = async (run: (dir: string) => Promise<void>) => {
    const dir = mkdtempSync(join(tmpdir(), 'quarry-first-start-'))
    try {
      await run(dir)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }

  test('without a configured password, UID 1 admin gets a random password in a 0600 file; the log says only where', async () => {
    // createTestServer({ adminPassword: undefined }) cannot be used: the helper logs in with ADMIN_PASSWORD.
    await inTempDir(async (dir) => {
      const logs: string[] = []
      const first = await start(dir, logs)
      const password = readFileSync(fileOf(dir), 'utf8').trim()
      expect(password.length).toBeGreaterThanOrEqual(16)
      expect(statSync(fileOf(dir)).mode & 0o777).toBe(0o600)
      expect(logs.join('')).not.toContain(password)
      expect(linesOf(logs, /^created the admin account/)).toEqual([expect.objectContaining({ level: 'warn', uid: 1, passwordFile: fileOf(dir) })])
      expect((await first.login(ADMIN_PASSWORD)).status).toBe(422)
      const res = await first.login(password)
      expect(res.status).toBe(200)
      const body = (await res.json()) as { JWT: string; Admin: boolean }
      expect(body.Admin).toBe(true)
      const me = await first.call('GET', '/api/info/whoami', body.JWT)
      expect(await me.json()).toMatchObject({ UID: 1, User: 'admin', Admin: true })
      await first.store.close()

      // a restart on the same store makes no new password and keeps the file and the JWT signing key
      const second = await start(dir, logs)
      expect(linesOf(logs, /^created the admin account/)).toHaveLength(1)
      expect(readFileSync(fileOf(dir), 'utf8').trim()).toBe(password)
      expect((await second.login(password)).status).toBe(200)
      expect((await second.call('GET', '/api/info/whoami', body.JWT)).status).toBe(200)
      await second.store.close()

      // a different fresh store gets a different password
      await inTempDir(async (dir2) => {
        const third = await start(dir2, [])
        expect(readFileSync(fileOf(dir2), 'utf8').trim()).not.toBe(password)
        await third.store.close()
      })
    })
  })

  test('the file goes at the admin\'s first password change, not at another user\'s', async () => {
    await inTempDir(async (dir) => {
      const logs: string[] = []
      const s = await start(dir, logs)
      const password = readFileSync(fileOf(dir), 'utf8').trim()
      const jwt = ((await (await s.login(password)).json()) as { JWT: string }).JWT
      const uid = Number(await (await s.call('POST', '/api/users', jwt, { User: 'other', Pass: 'other-password-1', Name: 'O', Email: 'o@example.com', Admin: true })).text())
      expect((await s.call('PUT', `/api/users/${uid}/pwd`, jwt, { NewPass: 'other-password-2' })).status).toBe(200)
      expect(existsSync(fileOf(dir))).toBe(true)
      // a refused change (wrong current password) keeps it
      expect((await s.call('PUT', '/api/users/1/pwd', jwt, { OrigPass: 'wrong', NewPass: 'admin-password-2' })).status).toBe(403)
      expect(existsSync(fileOf(dir))).toBe(true)
      expect((await s.call('PUT', '/api/users/1/pwd', jwt, { OrigPass: password, NewPass: 'admin-password-2' })).status).toBe(200)
      expect(existsSync(fileOf(dir))).toBe(false)
      expect(linesOf(logs, /^removed the file of the generated admin password/)).toEqual([expect.objectContaining({ passwordFile: fileOf(dir) })])
      expect((await s.login('admin-password-2')).status).toBe(200)
      await s.store.close()
    })
  })

  test('a start finds a file whose password no longer logs in (changed elsewhere) and removes it (one that still works stays: see above)', async () => {
    await inTempDir(async (dir) => {
      const password = await firstStart(dir)
      // another replica or `quarry admin reset-password` elsewhere changed it: this directory's copy is stale
      const { store } = await openStoreAt(dir)
      await store.users.setPasswordHash(1, await Bun.password.hash('changed-elsewhere-1', { algorithm: 'argon2id', memoryCost: 256, timeCost: 1 }))
      await store.close()
      const logs: string[] = []
      const second = await start(dir, logs)
      expect(existsSync(fileOf(dir))).toBe(false)
      expect(linesOf(logs, /^removed the file of the generated admin password/)).toHaveLength(1)
      expect((await second.login('changed-elsewhere-1')).status).toBe(200)
      await second.store.close()
    })
  })

  test('a password a start left pending (it stopped before putting the file in place) is kept if it is the admin\'s, else removed', async () => {
    await inTempDir(async (dir) => {
      const password = await firstStart(dir)
      // the account was made, the file not yet renamed into place
      renameSync(fileOf(dir), `${fileOf(dir)}.new`)
      const logs: string[] = []
      const second = await start(dir, logs)
      expect(readFileSync(fileOf(dir), 'utf8').trim()).toBe(password)
      expect(existsSync(`${fileOf(dir)}.new`)).toBe(false)
      expect(linesOf(logs, /^the generated admin password is in the file/)).toEqual([expect.objectContaining({ passwordFile: fileOf(dir) })])
      expect(logs.join('')).not.toContain(password)
      await second.store.close()
      // a pending password that is not the admin's (a start that lost the race, or stopped before creating it) goes
      writeFileSync(`${fileOf(dir)}.new`, 'never-the-password\n', { mode: 0o600 })
      const third = await start(dir, [])
      expect(existsSync(`${fileOf(dir)}.new`)).toBe(false)
      expect(readFileSync(fileOf(dir), 'utf8').trim()).toBe(password)
      await third.store.close()
    })
  })

  test('with a configured password no file is written and that password works', async () => {
    const s = await setup()
    expect(existsSync(fileOf(s.dir))).toBe(false)
    expectLoginSuccess(await s.call('POST', '/api/login', { json: { User: 'admin', Pass: ADMIN_PASSWORD } }), true)
  })
})
