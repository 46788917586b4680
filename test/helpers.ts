// A real app on a temporary store, driven through app.handle() with real Requests.
// Each call builds its own store and clock, so test files are independent and may run in any order.
import { afterEach, expect, spyOn } from 'bun:test'
import type { Subprocess } from 'bun'
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type AppDeps, createApp } from '../server/app'
import { type BlobStore, createDiskBlobStore } from '../server/blob'
import { type Config, loadConfig } from '../server/config'
import { createLogger } from '../server/log'
import { createSqliteStore } from '../server/store'

export const ADMIN_PASSWORD = 'admin-password-1'

export interface CallOptions {
  /** Sent as `Authorization: Bearer`. */
  jwt?: string
  /** Sent as JSON. */
  json?: unknown
  /** Sent as application/x-www-form-urlencoded. */
  form?: Record<string, string>
  /** Sent as is (with the given headers). */
  body?: string | Uint8Array
  headers?: Record<string, string>
}

export interface CallResult {
  status: number
  headers: Headers
  text: string
  /** The body parsed as JSON (undefined when empty or not JSON). */
  body: any
}

export interface TestServerOptions {
  /**
   * The blob store to use instead of a disk store in the server's temporary directory `dir` (e.g. the test S3
   * server, or a disk store wrapped by the test).
   */
  blobs?: (dir: string) => Promise<BlobStore>
  /** Search chunk size and step (see AppDeps.search). */
  search?: AppDeps['search']
}

export async function createTestServer(overrides: Partial<Config> = {}, options: TestServerOptions = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-test-'))
  const store = createSqliteStore(join(dir, 'quarry.db'))
  const blobs = options.blobs ? await options.blobs(dir) : await createDiskBlobStore({ dataDir: dir })
  const config: Config = {
    ...loadConfig({}).config,
    dataDir: dir,
    adminPassword: ADMIN_PASSWORD,
    // the slow hash is slow on purpose; tests only need it to be a real one
    passwordHash: { memoryCost: 256, timeCost: 1 },
    ...overrides,
  }
  let now = Date.now()
  const logs: string[] = []
  const announced: string[] = []
  const log = createLogger('debug', (line) => void logs.push(line))
  const build = () => createApp({ config, store, blobs, log, clock: () => now, announce: (l) => void announced.push(l), search: options.search })
  let { app, auth, searches } = await build()

  /** Sends a request as built by the caller (multipart bodies, streams) and reads the answer. */
  async function handle(request: Request): Promise<CallResult> {
    const res = await app.handle(request)
    const text = await res.text()
    let parsed: unknown
    try {
      parsed = text === '' ? undefined : JSON.parse(text)
    } catch {
      parsed = undefined
    }
    return { status: res.status, headers: res.headers, text, body: parsed }
  }

  async function call(method: string, path: string, opts: CallOptions = {}): Promise<CallResult> {
    const headers: Record<string, string> = { ...opts.headers }
    if (opts.jwt) headers.authorization = `Bearer ${opts.jwt}`
    let body: string | Uint8Array | undefined = opts.body
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json)
      headers['content-type'] ??= 'application/json'
    } else if (opts.form) {
      body = new URLSearchParams(opts.form).toString()
      headers['content-type'] ??= 'application/x-www-form-urlencoded'
    }
    return handle(new Request(`http://localhost${path}`, { method, headers, body }))
  }

  async function login(user: string, pass: string): Promise<string> {
    const res = await call('POST', '/api/login', { json: { User: user, Pass: pass } })
    if (res.status !== 200) throw new Error(`login of ${user} failed: ${res.status} ${res.text}`)
    return res.body.JWT as string
  }

  // Without a configured password the server generates one and announces it once.
  const adminPassword = config.adminPassword ?? /generated password (\S+)/.exec(announced.join('\n'))?.[1] ?? ''
  const adminJwt = await login('admin', adminPassword)

  let userCounter = 0
  /** Creates a user through the API and logs them in. */
  async function createUser(fields: { User?: string; Pass?: string; Name?: string; Email?: string; Admin?: boolean } = {}) {
    userCounter++
    const user = {
      User: fields.User ?? `user${userCounter}`,
      Pass: fields.Pass ?? `password-${userCounter}`,
      Name: fields.Name ?? `User ${userCounter}`,
      Email: fields.Email ?? `user${userCounter}@example.com`,
      Admin: fields.Admin ?? false,
    }
    const res = await call('POST', '/api/users', { jwt: adminJwt, json: user })
    if (res.status !== 200) throw new Error(`creating ${user.User} failed: ${res.status} ${res.text}`)
    const uid = res.body as number
    return { uid, ...user, jwt: await login(user.User, user.Pass) }
  }

  async function createGroup(name: string, members: number[] = []): Promise<number> {
    const res = await call('POST', '/api/groups', { jwt: adminJwt, json: { Name: name, Desc: `${name} group` } })
    if (res.status !== 200) throw new Error(`creating group ${name} failed: ${res.status} ${res.text}`)
    const gid = res.body as number
    for (const uid of members) {
      const added = await call('POST', `/api/users/${uid}/group`, { jwt: adminJwt, json: { GIDs: [gid] } })
      if (added.status !== 200) throw new Error(`adding ${uid} to ${name} failed: ${added.status} ${added.text}`)
    }
    return gid
  }

  /**
   * A restart of the server on the same store, blob store and data directory: running searches stop, a new app
   * is built (loading what was saved), and every later call goes to it. Sessions survive, as they do in the store.
   * `crash`: the old searches are not stopped first (they may go on, but nothing reaches them any more).
   */
  async function restart(opts: { crash?: boolean } = {}): Promise<void> {
    if (!opts.crash) await searches.close()
    ;({ app, auth, searches } = await build())
  }

  return {
    get app() {
      return app
    },
    get auth() {
      return auth
    },
    get searches() {
      return searches
    },
    restart,
    store,
    blobs,
    config,
    dir,
    logs,
    announced,
    adminJwt,
    adminPassword,
    call,
    handle,
    login,
    createUser,
    createGroup,
    clock: {
      now: () => now,
      advance: (ms: number) => void (now += ms),
    },
    close() {
      void searches.close()
      store.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

export type TestServer = Awaited<ReturnType<typeof createTestServer>>

/** The error wire shape of decisions §1: a JSON `{"Error": "<message>"}` and nothing else (plus `extra` members). */
export function expectError(res: CallResult, status: number, extra: Record<string, unknown> = {}) {
  expect({ status: res.status, text: res.text }).toMatchObject({ status })
  expect(res.headers.get('content-type') ?? '').toContain('application/json')
  expect(Object.keys(res.body ?? {}).sort()).toEqual(['Error', ...Object.keys(extra)].sort())
  expect(typeof res.body.Error).toBe('string')
  expect(res.body.Error.length).toBeGreaterThan(0)
  expect(res.body).toMatchObject(extra)
}

/** Columns that move on every authenticated request, and counters a refused password rightly bumps. */
const VOLATILE_COLUMNS = new Set(['last_hit', 'last_active'])
const VOLATILE_TABLES = new Set(['login_attempts', 'schema_migrations'])

/** Every row of every table of the store, for "nothing changed" checks; volatile columns left out. */
export function storeSnapshot(s: TestServer): Record<string, unknown[]> {
  const db = s.store.db
  const tables = db
    .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .all()
    .map((t) => t.name)
    .filter((t) => !VOLATILE_TABLES.has(t))
  const snapshot: Record<string, unknown[]> = {}
  for (const table of tables) {
    const columns = db
      .query<{ name: string }, []>(`PRAGMA table_info(${table})`)
      .all()
      .map((c) => c.name)
      .filter((c) => !VOLATILE_COLUMNS.has(c))
    snapshot[table] = db.query(`SELECT ${columns.join(', ')} FROM ${table} ORDER BY ${columns.join(', ')}`).all()
  }
  return snapshot
}

/** A refused request: its status, the error body, and no change anywhere in the store. */
export async function refused(s: TestServer, status: number, method: string, path: string, opts: CallOptions = {}): Promise<CallResult> {
  const before = storeSnapshot(s)
  const res = await s.call(method, path, opts)
  expectError(res, status)
  expect(storeSnapshot(s)).toEqual(before)
  return res
}

/** A `setup()` for a test file: each call builds a server, and every server is closed after each test. */
export function serverPerTest() {
  const servers: TestServer[] = []
  afterEach(() => {
    for (const s of servers.splice(0)) s.close()
  })
  return async (overrides: Partial<Config> = {}) => {
    const s = await createTestServer(overrides)
    servers.push(s)
    return s
  }
}

/** Every file under a test server's blob directory (temporary files included), for "no stray blob" checks. */
export function blobFiles(s: TestServer): string[] {
  const root = join(s.dir, 'blobs')
  if (!existsSync(root)) return []
  return (readdirSync(root, { recursive: true }) as string[]).filter((p) => statSync(join(root, p)).isFile()).sort()
}

/**
 * A disk blob store (in the server's directory) whose `body` can be held: `during()` holds the next download
 * between reading its row and opening the blob. For the race of a download with a replace or delete of the same item.
 */
export function heldBodies() {
  let armed: { reached: () => void; gate: Promise<void> } | undefined
  return {
    blobs: async (dir: string): Promise<BlobStore> => {
      const inner = await createDiskBlobStore({ dataDir: dir })
      return {
        ...inner,
        async body(key: string) {
          const held = armed
          armed = undefined
          if (held) {
            held.reached()
            await held.gate
          }
          return inner.body(key)
        },
      }
    },
    /**
     * Starts `download`, holds it once it has read its row, runs `change` meanwhile (a replace or delete of the
     * same item; what it answers may include checks made while the download is held), then lets the download go
     * on. Answers both results.
     */
    async during<D, C>(download: () => Promise<D>, change: () => Promise<C>): Promise<{ changed: C; downloaded: D }> {
      const reached = Promise.withResolvers<void>()
      const gate = Promise.withResolvers<void>()
      armed = { reached: reached.resolve, gate: gate.promise }
      const downloading = download()
      await reached.promise
      let changed: C
      try {
        changed = await change()
      } finally {
        gate.resolve()
      }
      return { changed, downloaded: await downloading }
    },
  }
}

/** The callers of item tests: owner, member (shares group `gid` with the owner), stranger, and the admin's JWT. */
export async function itemWorld(s: TestServer) {
  const owner = await s.createUser()
  const member = await s.createUser()
  const stranger = await s.createUser()
  const gid = await s.createGroup('team', [owner.uid, member.uid])
  return { s, owner, member, stranger, gid, admin: s.adminJwt }
}

const SERVER_MAIN = join(import.meta.dir, '..', 'server', 'main.ts')

/** Starts the real server process (server/main.ts) on a free loopback port, with only PATH and `env` set. */
export function spawnServer(env: Record<string, string>) {
  return Bun.spawn([process.execPath, 'run', SERVER_MAIN], {
    env: { PATH: process.env.PATH ?? '', QUARRY_LISTEN: '127.0.0.1:0', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
}

/**
 * Keeps reading the process's stdout (a closed pipe would break the server's logging) into `lines`, one log line
 * each, and answers the base URL once the server listens.
 */
export function listening(proc: Subprocess<any, 'pipe', any>): Promise<{ url: string; lines: string[] }> {
  const lines: string[] = []
  return new Promise((resolve, reject) => {
    void (async () => {
      const decoder = new TextDecoder()
      let buffered = ''
      for await (const chunk of proc.stdout) {
        buffered += decoder.decode(chunk)
        const parts = buffered.split('\n')
        buffered = parts.pop()!
        for (const line of parts) {
          lines.push(line)
          const entry = JSON.parse(line)
          if (entry.msg === 'listening') resolve({ url: entry.address, lines })
        }
      }
      reject(new Error('server exited before listening'))
    })()
  })
}

/**
 * A burst of password guesses with every password check held open until the burst is in: `wrong` guesses are sent
 * at once, and the right one (`right`) only once each wrong one has either reached the password check or been
 * answered, so it arrives while the checked guesses are still being verified (the race of issue 12 point 5, made
 * certain rather than left to scheduling). Answers every status (the right one last) and how many checks ran.
 */
export async function heldGuessBurst(
  s: TestServer,
  wrong: number,
  guess: (i: number) => Promise<CallResult>,
  right: () => Promise<CallResult>,
): Promise<{ statuses: Record<number, number>; checks: number; answers: CallResult[]; last: CallResult }> {
  const original = s.auth.verifyPassword.bind(s.auth)
  let release!: () => void
  const gate = new Promise<void>((r) => (release = r))
  let checks = 0
  const spy = spyOn(s.auth, 'verifyPassword').mockImplementation(async (password: string, hash: string) => {
    checks++
    await gate
    return original(password, hash)
  })
  try {
    let answered = 0
    const guesses = Array.from({ length: wrong }, (_, i) => guess(i).finally(() => void answered++))
    for (let i = 0; i < 2000 && checks + answered < wrong; i++) await Bun.sleep(1)
    expect(checks + answered).toBe(wrong)
    // the right guess is let go only once it has reached the check too, or been answered without one
    const held = checks
    let rightAnswered = false
    const last = right().finally(() => void (rightAnswered = true))
    for (let i = 0; i < 2000 && checks === held && !rightAnswered; i++) await Bun.sleep(1)
    release()
    const answers = [...(await Promise.all(guesses)), await last]
    const statuses: Record<number, number> = {}
    for (const r of answers) statuses[r.status] = (statuses[r.status] ?? 0) + 1
    return { statuses, checks, answers, last: answers.at(-1)! }
  } finally {
    release()
    spy.mockRestore()
  }
}
