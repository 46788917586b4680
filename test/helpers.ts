// A real app on a temporary store, driven through app.handle() with real Requests.
// Each call builds its own store and clock, so test files are independent and may run in any order.
import { afterAll, afterEach, expect, spyOn } from 'bun:test'
import type { Subprocess } from 'bun'
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type AppDeps, createApp } from '../server/app'
import { type BlobStore, createDiskBlobStore } from '../server/blob'
import { type Config, loadConfig } from '../server/runtime/config'
import { createLogger } from '../server/runtime/log'
import { readInitialPassword } from '../server/runtime/initial-password'
import { type Store, createSqliteStore } from '../server/repos'
import { createPgStore } from '../server/repos.pg'
import { SQL } from 'bun'
import { freshDatabase, onPg, pgRows, testDatabaseUrl } from './pg'
import { q } from '../server/store/pg'
import { appendFileSync } from 'node:fs'
import { type Documented, documented } from './documented'

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
  /** Segment size of the compaction (see AppDeps.segments). */
  segments?: AppDeps['segments']
}

/**
 * A store for a test: SQLite in `dir`, or with QUARRY_TEST_STORE=pg a fresh database on the test PostgreSQL server.
 * `rows` reaches its tables directly (for checks the API cannot make) with `?` placeholders on both engines,
 * answering integers and booleans as numbers as SQLite does; `tables` lists them.
 */
export async function openTestStore(dir: string): Promise<TestStore> {
  if (!onPg) {
    const store = createSqliteStore(join(dir, 'quarry.db'))
    const testStore: TestStore = {
      store,
      rows: async (text, params = []) => store.db.query(text).all(...(params as never[])) as Record<string, unknown>[],
      tables: async () =>
        store.db
          .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
          .all()
          .map((t) => t.name),
      snapshot: (tableWanted, columnWanted) => {
        const tables = store.db
          .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
          .all()
          .map((t) => t.name)
          .filter(tableWanted)
        const snapshot: Record<string, unknown[]> = {}
        for (const table of tables) {
          const columns = store.db.query<{ name: string }, []>(`PRAGMA table_info(${table})`).all().map((c) => c.name).filter(columnWanted)
          snapshot[table] = store.db.query(`SELECT ${columns.join(', ')} FROM ${table} ORDER BY ${columns.join(', ')}`).all()
        }
        return snapshot
      },
      snapshotAsync: async (tableWanted, columnWanted) => testStore.snapshot(tableWanted, columnWanted),
      changes: async () => String(store.db.query<{ n: number }, []>('SELECT total_changes() AS n').get()!.n),
      close: async () => store.close(),
    }
    return testStore
  }
  const db = await freshDatabase({ migrated: true })
  const store = await createPgStore(db.url, { max: 4 })
  let raw: SQL | undefined
  let layout: Record<string, string[]> | undefined
  const rawPool = () => (raw ??= new SQL(db.url, { bigint: true, max: 1 }))
  return {
    store,
    rows: (text, params = []) => pgRows(rawPool(), text, params),
    tables: async () =>
      (await pgRows(rawPool(), "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name COLLATE \"C\"")).map(
        (t) => t.name as string,
      ),
    snapshot: (tableWanted, columnWanted) => {
      layout ??= JSON.parse(psql(db.url, LAYOUT_SQL)) as Record<string, string[]>
      const query = snapshotSql(layout, tableWanted, columnWanted)
      return query ? (JSON.parse(psql(db.url, query)) as Record<string, unknown[]>) : {}
    },
    snapshotAsync: async (tableWanted, columnWanted) => {
      layout ??= ((await q(rawPool(), LAYOUT_SQL))[0] as { j: Record<string, string[]> }).j
      const query = snapshotSql(layout, tableWanted, columnWanted)
      return query ? ((await q(rawPool(), query))[0] as { j: Record<string, unknown[]> }).j : {}
    },
    changes: async () => ((await q(rawPool(), 'SELECT pg_current_snapshot()::text AS s'))[0] as { s: string }).s,
    close: async () => {
      await store.close()
      await raw?.close()
      // The database goes in the background: nothing reads it any more, and the next test need not wait.
      void db.drop().catch(() => {})
    },
  }
}

export interface TestStore {
  store: Store
  rows(text: string, params?: unknown[]): Promise<Record<string, unknown>[]>
  tables(): Promise<string[]>
  /**
   * Every row of every wanted table, by table, in a stable order: synchronous on both engines (PostgreSQL's
   * through psql), so "nothing changed" checks read the same everywhere.
   */
  snapshot(tableWanted: (t: string) => boolean, columnWanted: (c: string) => boolean): Record<string, unknown[]>
  /**
   * A mark that moves whenever a row may have changed since it was last read, so a snapshot need not be taken again
   * while it stays: SQLite's total_changes() on the app's connection (every row written, by triggers too);
   * PostgreSQL's current snapshot (`xmin:xmax:in-progress`): a writing transaction takes an xid, which moves `xmax`,
   * and one in progress when a snapshot was read is listed until it ends, so its commit moves the mark again.
   * Conservative: other databases' transactions on the test server move it too (a snapshot then costs time, never
   * a missed change).
   */
  changes(): Promise<string>
  /** The same, without a subprocess on PostgreSQL (what `refused` uses). */
  snapshotAsync(tableWanted: (t: string) => boolean, columnWanted: (c: string) => boolean): Promise<Record<string, unknown[]>>
  close(): Promise<void>
}

/** Every table's columns, in order, as one JSON object (column `j`). */
const LAYOUT_SQL = `SELECT json_object_agg(table_name, cols) AS j FROM (SELECT table_name, json_agg(column_name ORDER BY ordinal_position) AS cols
  FROM information_schema.columns WHERE table_schema = 'public' GROUP BY table_name) t`

/** One query answering every wanted table's rows (as arrays, in a stable order) as one JSON object (column `j`). */
function snapshotSql(layout: Record<string, string[]>, tableWanted: (t: string) => boolean, columnWanted: (c: string) => boolean) {
  const tables = Object.keys(layout).filter(tableWanted).sort()
  if (tables.length === 0) return undefined
  const parts = tables.map((table) => {
    const list = layout[table]!.filter(columnWanted).join(', ')
    return `'${table}', coalesce((SELECT json_agg(json_build_array(${list}) ORDER BY ${list}) FROM ${table}), '[]')`
  })
  return `SELECT json_build_object(${parts.join(', ')}) AS j`
}

const PSQL = (() => {
  const bins = Bun.spawnSync(['bash', '-c', 'ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1']).stdout.toString().trim()
  return bins ? `${bins}/psql` : 'psql'
})()

/** A query's one value through psql (synchronous: for the synchronous snapshot). */
function psql(url: string, query: string): string {
  const r = Bun.spawnSync([PSQL, '-X', '-A', '-t', '-q', '-v', 'ON_ERROR_STOP=1', '-d', url, '-c', query], { stdout: 'pipe', stderr: 'pipe' })
  if (r.exitCode !== 0) throw new Error(`psql failed (${r.exitCode}): ${r.stderr.toString()}`)
  return r.stdout.toString()
}

export async function createTestServer(overrides: Partial<Config> = {}, options: TestServerOptions = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-test-'))
  const testStore = await openTestStore(dir)
  const { store } = testStore
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
  const log = createLogger('debug', (line) => void logs.push(line))
  const build = () => createApp({ config, store, blobs, log, clock: () => now, search: options.search, segments: options.segments })
  let { app, auth, searches, cluster, entries, removal } = await build()

  /**
   * Sends a request as built by the caller (multipart bodies, streams) and reads the answer, which must be what the
   * OpenAPI document says the operation answers (test/documented.ts): an answer it does not document fails the test.
   */
  async function handle(request: Request): Promise<CallResult> {
    const { method, url } = request
    const upgrade = request.headers.get('upgrade')?.toLowerCase() === 'websocket'
    const res = await app.handle(request)
    const text = await res.text()
    let parsed: unknown
    try {
      parsed = text === '' ? undefined : JSON.parse(text)
    } catch {
      parsed = undefined
    }
    const problem = (await documentOf(app)).problem(method, url, res.status, res.headers.get('content-type') ?? '', parsed, upgrade)
    if (problem) {
      if (process.env.TEST_UNDOCUMENTED_LOG) appendFileSync(process.env.TEST_UNDOCUMENTED_LOG, `${problem}\n`)
      else throw new Error(`an answer the OpenAPI document does not describe: ${problem}`)
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

  // Without a configured password the server generates one into a file of the data directory.
  const adminPassword = config.adminPassword ?? readInitialPassword(dir) ?? ''
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
    ;({ app, auth, searches, cluster, entries, removal } = await build())
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
    /** The entries as searches see them: rows and sealed segments; `compact()` runs a compaction. */
    get entries() {
      return entries
    },
    /** Retention and deletion (server/search/retention.ts); `sweep()` runs a retention sweep. */
    get removal() {
      return removal
    },
    /** The replica registry and search records (server/cluster); not started (no listening server). */
    get cluster() {
      return cluster
    },
    restart,
    store,
    /** Direct reads of the store's tables (see openTestStore). */
    rows: testStore.rows,
    blobs,
    config,
    dir,
    logs,
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
    /** Ends the server and removes its store; callers that do not await it leave the removal running. */
    close(): Promise<void> {
      void searches.close()
      return testStore.close().finally(() => rmSync(dir, { recursive: true, force: true }))
    },
    /** The store's tables and columns (for snapshots). */
    testStore,
  }
}

export type TestServer = Awaited<ReturnType<typeof createTestServer>>

/** The document every answer is checked against; the same for every app of the suite, so built once. */
let documentChecker: Promise<Documented> | undefined
function documentOf(app: { handle(r: Request): Promise<Response>; routes: readonly unknown[] }): Promise<Documented> {
  return (documentChecker ??= app.handle(new Request('http://localhost/api/docs/json')).then(async (r) => documented((await r.json()) as Record<string, unknown>, rawAnswers(app.routes))))
}

/** The operations whose answers no schema check of Elysia's sees (server/http/openapi.ts rawAnswer), as the document names them. */
export function rawAnswers(routes: readonly unknown[]): Set<string> {
  const raw = new Set<string>()
  for (const r of routes as { method: string; path: string; hooks?: { detail?: Record<string, unknown> } }[])
    if (r.hooks?.detail?.['x-raw-answer']) raw.add(`${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`)
  return raw
}

/** The error wire shape of docs/api.md: a JSON `{"Error": "<message>"}` and nothing else (plus `extra` members). */
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
  return s.testStore.snapshot((t) => !VOLATILE_TABLES.has(t), (c) => !VOLATILE_COLUMNS.has(c))
}

/** The same as storeSnapshot, without a subprocess on PostgreSQL. */
export function storeSnapshotAsync(s: TestServer): Promise<Record<string, unknown[]>> {
  return s.testStore.snapshotAsync((t) => !VOLATILE_TABLES.has(t), (c) => !VOLATILE_COLUMNS.has(c))
}

/** A refused request: its status, the error body, and no change anywhere in the store. */
export async function refused(s: TestServer, status: number, method: string, path: string, opts: CallOptions = {}): Promise<CallResult> {
  const before = await storeSnapshotAsync(s)
  const res = await s.call(method, path, opts)
  expectError(res, status)
  expect(await storeSnapshotAsync(s)).toEqual(before)
  return res
}

/** A `setup()` for a test file: each call builds a server, and every server is closed after each test. */
export function serverPerTest() {
  const servers: TestServer[] = []
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()))
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

/**
 * The PostgreSQL database that stands for a data directory's SQLite file (QUARRY_TEST_STORE=pg): made on first use,
 * the same one for every later use of that directory (a restart finds its data). Synchronous (through psql), so
 * that spawnServer stays so.
 */
export function databaseUrlFor(dataDir: string): string {
  const name = `quarry_d_${new Bun.CryptoHasher('sha1').update(dataDir).digest('hex').slice(0, 20)}`
  const admin = testDatabaseUrl()
  const exists = psql(admin, `SELECT count(*) FROM pg_database WHERE datname = '${name}'`).trim() === '1'
  if (!exists) psql(admin, `CREATE DATABASE ${name}`)
  const url = new URL(admin)
  url.pathname = `/${name}`
  return url.toString()
}

/**
 * The store a server process with this data directory uses, opened beside it (for checks after a stop or crash):
 * the SQLite file in the directory, or its PostgreSQL database. `rows` as TestStore.rows.
 */
export async function openStoreAt(dataDir: string): Promise<{ store: Store; rows: TestStore['rows']; close(): Promise<void> }> {
  if (!onPg) {
    const store = createSqliteStore(join(dataDir, 'quarry.db'))
    return { store, rows: async (text, params = []) => store.db.query(text).all(...(params as never[])) as Record<string, unknown>[], close: async () => store.close() }
  }
  const url = databaseUrlFor(dataDir)
  const store = await createPgStore(url, { max: 2 })
  const raw = new SQL(url, { bigint: true, max: 1 })
  return { store, rows: (text, params = []) => pgRows(raw, text, params), close: async () => (await store.close(), await raw.close()) }
}

/**
 * Starts the real server process (server/main.ts) on a free loopback port, with only PATH and `env` set. With
 * QUARRY_TEST_STORE=pg, a server given a data directory keeps its metadata in that directory's database.
 */
export function spawnServer(env: Record<string, string>) {
  // one server alone on its database, its blobs in its data directory (as on SQLite)
  const store =
    onPg && env.QUARRY_DATA_DIR && !env.QUARRY_DATABASE_URL ? { QUARRY_DATABASE_URL: databaseUrlFor(env.QUARRY_DATA_DIR), QUARRY_SINGLE_SERVER: 'true' } : {}
  return Bun.spawn([process.execPath, 'run', SERVER_MAIN], {
    env: { PATH: process.env.PATH ?? '', QUARRY_LISTEN: '127.0.0.1:0', ...store, ...env },
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
 * answered, so it arrives while the checked guesses are still being verified (the race the login throttle closes, made
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

/**
 * A maker of temporary directories for a test file (prefix `quarry-<name>-`); every one it made is removed after
 * the file's tests.
 */
export function tempDirs(name: string): () => string {
  const dirs: string[] = []
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))
  return () => {
    const dir = mkdtempSync(join(tmpdir(), `quarry-${name}-`))
    dirs.push(dir)
    return dir
  }
}
