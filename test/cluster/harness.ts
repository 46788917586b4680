// A Quarry cluster for tests: several real replica processes (server/main.ts) on one fresh PostgreSQL database and
// one fresh S3 bucket, each with its own port and data directory, as they run behind a load balancer. It needs the
// suite's PostgreSQL and S3 servers (test/run.sh starts both for every run, whatever store the rest of the suite
// uses): without them it fails, it never skips.
//
// `client()` spreads requests round-robin over the live replicas (a load balancer without sticky sessions); every
// replica can also be called directly. `kill(i)` ends a replica with SIGKILL (no drain, no cleanup: a crash),
// `restart(i)` starts it again on the same port and data directory.
import type { Subprocess } from 'bun'
import { SQL } from 'bun'
import { expect } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { PgPool } from '../../server/store/pg'
import { readInitialPassword } from '../../server/runtime/initial-password'
import { MISSING_S3, testS3 } from '../s3'
import { freshDatabase, pgRows } from '../pg'
import type { CallOptions as ServerCallOptions, CallResult as ServerCallResult } from '../helpers'

const SERVER_MAIN = join(import.meta.dir, '..', '..', 'server', 'main.ts')
/** What the replicas show each other on their internal routes (QUARRY_CLUSTER_SECRET). */
export const CLUSTER_SECRET = 'the-test-cluster-secret-0123456789abcdef'

/** A call through one replica: helpers.ts's options, with an API token and FormData bodies too. */
export interface CallOptions extends Omit<ServerCallOptions, 'form' | 'body'> {
  /** An API token secret, sent as `Service-Token`. */
  token?: string
  body?: string | FormData | Uint8Array
}

export interface CallResult extends ServerCallResult {
  /** Which replica answered (its name: A, B, C...). */
  replica: string
}

export interface Replica {
  /** A, B, C... */
  readonly name: string
  readonly dataDir: string
  /** The port it listens on; a restart keeps it. */
  port: number
  url: string
  proc: Subprocess<'ignore', 'pipe', 'pipe'>
  /** Every log line (stdout) since its last start, parsed. */
  lines: Record<string, unknown>[]
  /** Its stderr since its last start (the generated admin password, refusals). */
  stderr: () => string
  alive: boolean
  call(method: string, path: string, opts?: CallOptions): Promise<CallResult>
}

export interface ClusterOptions {
  /** Replicas to start (3). */
  replicas?: number
  /** More environment for every replica (e.g. QUARRY_LEASE_TTL). */
  env?: Record<string, string>
  /** The PEM CA the test's own requests check the replicas' certificates against (replicas serving HTTPS). */
  ca?: string
}

export interface Cluster {
  replicas: Replica[]
  /** The cluster's database, for checks the API cannot make (`?` placeholders; integers as numbers). */
  rows(text: string, params?: unknown[]): Promise<Record<string, unknown>[]>
  databaseUrl: string
  bucket: string
  /** The admin password one of the replicas generated at the first start. */
  adminPassword: string
  /** A client that sends each request to the next live replica in turn. */
  client(): { call(method: string, path: string, opts?: CallOptions): Promise<CallResult> }
  login(user: string, pass: string, on?: Replica): Promise<string>
  /** Creates a user through the API (as admin) and answers its uid and credentials. */
  createUser(prefix?: string): Promise<{ uid: number; User: string; Pass: string }>
  /** SIGKILL: no drain, the process is gone at once. */
  kill(r: Replica): Promise<void>
  /** Starts a stopped or killed replica again on its port and data directory; resolves once it listens. */
  restart(r: Replica): Promise<void>
  stop(): Promise<void>
}

/** Starts the cluster: every replica at the same moment, on an empty database (the migrations race, on purpose). */
export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const s3 = testS3()
  if (!s3) throw new Error(MISSING_S3)
  const db = await freshDatabase()
  const bucket = `quarry-cluster-${Bun.randomUUIDv7().replaceAll('-', '').slice(-16)}`
  const raw: PgPool = new SQL(db.url, { bigint: true, max: 2 })
  const env = (dataDir: string, port: number): Record<string, string> => ({
    PATH: process.env.PATH ?? '',
    QUARRY_LISTEN: `127.0.0.1:${port}`,
    QUARRY_DATA_DIR: dataDir,
    QUARRY_DATABASE_URL: db.url,
    QUARRY_S3_ENDPOINT: s3.config.endpoint,
    QUARRY_S3_BUCKET: bucket,
    QUARRY_S3_ACCESS_KEY: s3.config.accessKey,
    QUARRY_S3_SECRET_KEY: s3.config.secretKey,
    QUARRY_S3_REGION: s3.config.region,
    QUARRY_CLUSTER_SECRET: CLUSTER_SECRET,
    ...options.env,
  })

  const spawn = async (r: Replica): Promise<void> => {
    r.lines = []
    let stderr = ''
    r.proc = Bun.spawn([process.execPath, 'run', SERVER_MAIN], { env: env(r.dataDir, r.port), stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
    r.stderr = () => stderr
    const proc = r.proc
    void (async () => {
      const decoder = new TextDecoder()
      for await (const chunk of proc.stderr) stderr += decoder.decode(chunk)
    })()
    const url = await new Promise<string>((resolve, reject) => {
      void (async () => {
        const decoder = new TextDecoder()
        let buffered = ''
        // Reads stdout to its end: a pipe nobody reads would block the server's logging.
        for await (const chunk of proc.stdout) {
          buffered += decoder.decode(chunk)
          const parts = buffered.split('\n')
          buffered = parts.pop()!
          for (const line of parts) {
            const entry = JSON.parse(line) as Record<string, unknown>
            r.lines.push(entry)
            if (entry.msg === 'listening') resolve(entry.address as string)
          }
        }
        reject(new Error(`replica ${r.name} exited before listening: ${stderr.trim()}`))
      })()
    })
    r.url = url
    r.port = Number(new URL(url).port)
    r.alive = true
  }

  const dirs: string[] = []
  const replicas: Replica[] = Array.from({ length: options.replicas ?? 3 }, (_, i) => {
    const dataDir = mkdtempSync(join(tmpdir(), `quarry-cluster-${String.fromCharCode(65 + i)}-`))
    dirs.push(dataDir)
    const r: Replica = {
      name: String.fromCharCode(65 + i),
      dataDir,
      port: 0,
      url: '',
      proc: undefined as never,
      lines: [],
      stderr: () => '',
      alive: false,
      call: (method, path, opts) => call(r, method, path, opts, options.ca),
    }
    return r
  })
  await Promise.all(replicas.map(spawn))

  // Exactly one replica created the admin (the others found it made, or lost the race to make it): only its data
  // directory holds the generated password.
  const passwords = () => replicas.map((r) => readInitialPassword(r.dataDir)).filter((p) => p !== undefined)
  for (let i = 0; i < 250 && passwords().length === 0; i++) await Bun.sleep(20) // made right after listening
  const written = passwords()
  expect(written).toHaveLength(1)
  const adminPassword = written[0]!

  let turn = 0
  const cluster: Cluster = {
    replicas,
    databaseUrl: db.url,
    bucket,
    adminPassword,
    rows: (text, params = []) => pgRows(raw, text, params),
    client: () => ({
      call(method, path, opts) {
        const live = replicas.filter((r) => r.alive)
        if (live.length === 0) throw new Error('no live replica')
        return call(live[turn++ % live.length]!, method, path, opts, options.ca)
      },
    }),
    async login(user, pass, on) {
      const res = await (on ?? cluster.client()).call('POST', '/api/login', { json: { User: user, Pass: pass } })
      if (res.status !== 200) throw new Error(`login of ${user} on ${res.replica} failed: ${res.status} ${res.text}`)
      return res.body.JWT as string
    },
    async createUser(prefix = 'user') {
      adminJwt ??= await cluster.login('admin', adminPassword)
      const User = `${prefix}${++users}`
      const Pass = `password-${User}`
      const res = await cluster.client().call('POST', '/api/users', {
        jwt: adminJwt,
        json: { User, Pass, Name: User, Email: `${User}@example.com`, Admin: false },
      })
      if (res.status !== 200) throw new Error(`creating ${User} failed: ${res.status} ${res.text}`)
      return { uid: res.body as number, User, Pass }
    },
    async kill(r) {
      r.alive = false
      r.proc.kill('SIGKILL')
      await r.proc.exited
    },
    async restart(r) {
      if (r.alive) throw new Error(`replica ${r.name} is running`)
      await spawn(r)
    },
    async stop() {
      await Promise.all(
        replicas.map(async (r) => {
          if (!r.alive) return
          r.alive = false
          r.proc.kill('SIGTERM')
          if ((await Promise.race([r.proc.exited, Bun.sleep(10_000).then(() => 'late')])) === 'late') r.proc.kill('SIGKILL')
          await r.proc.exited
        }),
      )
      await raw.close()
      await db.drop().catch(() => {})
      for (const d of dirs) rmSync(d, { recursive: true, force: true })
      await removeBucket(s3.minio, bucket).catch(() => {})
    },
  }
  let adminJwt: string | undefined
  let users = 0
  return cluster
}

async function call(r: Replica, method: string, path: string, opts: CallOptions = {}, ca?: string): Promise<CallResult> {
  const headers: Record<string, string> = { ...opts.headers }
  if (opts.jwt) headers.authorization = `Bearer ${opts.jwt}`
  if (opts.token) headers['service-token'] = opts.token
  let body = opts.body
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json)
    headers['content-type'] ??= 'application/json'
  }
  const res = await fetch(`${r.url}${path}`, { method, headers, body, ...(ca ? { tls: { ca } } : {}) } as RequestInit)
  const text = await res.text()
  let parsed: unknown
  try {
    parsed = text === '' ? undefined : JSON.parse(text)
  } catch {
    parsed = undefined
  }
  return { status: res.status, headers: res.headers, text, body: parsed, replica: r.name }
}

async function removeBucket(minio: NonNullable<ReturnType<typeof testS3>>['minio'], bucket: string) {
  const keys: string[] = []
  for await (const o of minio.listObjectsV2(bucket, '', true)) if (o.name) keys.push(o.name)
  if (keys.length > 0) await minio.removeObjects(bucket, keys)
  await minio.removeBucket(bucket)
}

/** Polls `read` until `done` holds of its answer (at most `ms`); answers the last answer. */
export async function until<T>(read: () => Promise<T> | T, done: (v: T) => boolean, ms = 20_000): Promise<T> {
  const end = Date.now() + ms
  let v = await read()
  while (!done(v) && Date.now() < end) {
    await Bun.sleep(100)
    v = await read()
  }
  return v
}
