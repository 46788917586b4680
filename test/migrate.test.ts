// `quarry migrate` (docs/operations.md, "Upgrade") as an operator runs it: a process that applies the store's missing
// migrations and serves nothing, on SQLite and on PostgreSQL, also several at once (the upgrade of a cluster whose
// replicas all run it), and a server then starts on the migrated store without migrating anything.
import { describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { Database } from 'bun:sqlite'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { MAIN } from './cli'
import { listening, spawnServer, tempDirs } from './helpers'
import { freshDatabase } from './pg'
import { testWithServers } from './services'
import { MIGRATIONS } from '../server/store/migrations'
import { openDatabase } from '../server/store/db'
import { PG_MIGRATIONS } from '../server/store/migrations-pg'

const tempDir = tempDirs('migrate')

async function migrate(env: Record<string, string>, args = ['--create']) {
  const proc = Bun.spawn([process.execPath, 'run', MAIN, 'migrate', ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: tempDir(), NO_COLOR: '1', ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()])
  return { code, stdout: stdout.trim(), stderr: stderr.trim() }
}

/** The versions a run says it applied ("applied N migration(s) to ...: 1 core, 2 tokens, ...; schema version V"). */
const appliedBy = (stdout: string) => (/: ((?:\d+ \w+(?:, )?)+); schema version/.exec(stdout)?.[1] ?? '').split(', ').filter(Boolean).map((m) => Number(m.split(' ')[0]))

const ALL = MIGRATIONS.map((m) => m.version)

describe('quarry migrate', () => {
  test('SQLite: applies every migration to a new store and says which, then nothing; a server starts on it without migrating', async () => {
    const dataDir = tempDir()
    const first = await migrate({ QUARRY_DATA_DIR: dataDir })
    expect(first).toMatchObject({ code: 0, stderr: '' })
    expect(first.stdout).toStartWith(`quarry: applied ${ALL.length} migration(s) to the new SQLite store ${join(dataDir, 'quarry.db')}: 1 core, 2 tokens,`)
    expect(appliedBy(first.stdout)).toEqual(ALL)
    const again = await migrate({ QUARRY_DATA_DIR: dataDir })
    expect(again).toEqual({ code: 0, stdout: `quarry: the SQLite store ${join(dataDir, 'quarry.db')} is up to date (schema version ${Math.max(...ALL)}); nothing applied`, stderr: '' })
    // served nothing: no lock holder, no blobs; the store has every version once
    const db = new Database(join(dataDir, 'quarry.db'), { readonly: true })
    const rows = db.query<{ version: number; applied: number }, []>('SELECT version, applied FROM schema_migrations ORDER BY version').all()
    db.close()
    expect(rows.map((r) => r.version)).toEqual(ALL)
    const server = spawnServer({ QUARRY_DATA_DIR: dataDir, QUARRY_ADMIN_PASSWORD: 'admin-password-1' })
    try {
      await listening(server)
    } finally {
      server.kill('SIGTERM')
      await server.exited
    }
    const after = new Database(join(dataDir, 'quarry.db'), { readonly: true })
    expect(after.query<{ version: number; applied: number }, []>('SELECT version, applied FROM schema_migrations ORDER BY version').all()).toEqual(rows)
    after.close()
  }, 30_000)

  testWithServers('several at once on one store apply each migration once, and every one exits 0 (SQLite and PostgreSQL)', async () => {
    const db = await freshDatabase()
    try {
      const dataDir = tempDir()
      for (const env of [{ QUARRY_DATA_DIR: dataDir }, { QUARRY_DATA_DIR: tempDir(), QUARRY_DATABASE_URL: db.url }] as Record<string, string>[]) {
        const runs = await Promise.all([1, 2, 3].map(() => migrate(env)))
        for (const r of runs) expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' })
        expect(runs.flatMap((r) => appliedBy(r.stdout)).sort((a, b) => a - b)).toEqual(env.QUARRY_DATABASE_URL ? PG_MIGRATIONS.map((m) => m.version) : ALL)
      }
      const sql = new SQL(db.url, { max: 1 })
      const versions = ((await sql.unsafe('SELECT version FROM schema_migrations ORDER BY version')) as { version: number }[]).map((r) => r.version)
      await sql.close()
      expect(versions).toEqual(PG_MIGRATIONS.map((m) => m.version))
    } finally {
      await db.drop()
    }
  }, 30_000)

  testWithServers('PostgreSQL: says what it applied, without the password of the URL; nothing the second time', async () => {
    const db = await freshDatabase()
    try {
      const env = { QUARRY_DATA_DIR: tempDir(), QUARRY_DATABASE_URL: db.url }
      const first = await migrate(env)
      expect(first.code).toBe(0)
      expect(first.stdout).toStartWith('quarry: applied ')
      expect(first.stdout).toContain(`to the PostgreSQL store at postgres://quarry:***@`)
      expect(first.stdout).not.toContain(new URL(db.url).password)
      expect(appliedBy(first.stdout)).toEqual(PG_MIGRATIONS.map((m) => m.version))
      expect((await migrate(env)).stdout).toEndWith(`is up to date (schema version ${Math.max(...ALL)}); nothing applied`)
    } finally {
      await db.drop()
    }
  }, 30_000)

  test('a store newer than this quarry is refused with one line and left as it is; bad configuration is exit 2', async () => {
    const dataDir = tempDir()
    expect((await migrate({ QUARRY_DATA_DIR: dataDir })).code).toBe(0)
    const db = new Database(join(dataDir, 'quarry.db'))
    db.run("INSERT INTO schema_migrations (version, name, applied) VALUES (999, 'future', 0)")
    db.close()
    const newer = await migrate({ QUARRY_DATA_DIR: dataDir })
    expect(newer.code).toBe(1)
    expect(newer.stdout).toBe('')
    expect(newer.stderr.split('\n')).toHaveLength(1)
    expect(newer.stderr).toContain('schema version 999, newer than this server knows')
    const bad = await migrate({ QUARRY_DATA_DIR: dataDir, QUARRY_DATABASE_URL: 'mysql://x/y' })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toStartWith('quarry: invalid configuration: QUARRY_DATABASE_URL:')
  }, 30_000)
})

describe('quarry migrate refuses to make a store unless asked, and speaks JSON', () => {
  test('a data directory without a store (a mistyped QUARRY_DATA_DIR) is refused and left without one; --create makes it', async () => {
    const dataDir = join(tempDir(), 'mistyped')
    const refused = await migrate({ QUARRY_DATA_DIR: dataDir }, [])
    expect(refused.code).toBe(1)
    expect(refused.stdout).toBe('')
    expect(refused.stderr).toBe(`quarry: no Quarry store in ${dataDir} (set QUARRY_DATA_DIR to the server's data directory, or pass --create to make a new store there)`)
    expect(existsSync(dataDir)).toBe(false)
    expect((await migrate({ QUARRY_DATA_DIR: dataDir }, ['--create'])).code).toBe(0)
    expect(existsSync(join(dataDir, 'quarry.db'))).toBe(true)
    // the store exists now: no --create needed
    expect((await migrate({ QUARRY_DATA_DIR: dataDir }, [])).code).toBe(0)
  }, 30_000)

  test('--json: what was applied, as JSON on standard output', async () => {
    const dataDir = tempDir()
    const first = await migrate({ QUARRY_DATA_DIR: dataDir }, ['--create', '--json'])
    expect(first).toMatchObject({ code: 0, stderr: '' })
    const path = join(dataDir, 'quarry.db')
    expect(JSON.parse(first.stdout)).toEqual({
      Store: `the SQLite store ${path}`,
      Created: true,
      Applied: MIGRATIONS.map((m) => ({ Version: m.version, Name: m.name })),
      SchemaVersion: Math.max(...ALL),
    })
    const again = await migrate({ QUARRY_DATA_DIR: dataDir }, ['--json'])
    expect(JSON.parse(again.stdout)).toEqual({ Store: `the SQLite store ${path}`, Created: false, Applied: [], SchemaVersion: Math.max(...ALL) })
  }, 30_000)
})

describe('opening a SQLite store', () => {
  test('a current store is checked with one read: another connection holding the write lock does not hold it up', () => {
    const path = join(tempDir(), 'quarry.db')
    openDatabase(path).close() // made and migrated
    const other = new Database(path)
    other.run('BEGIN IMMEDIATE')
    try {
      // Migrating would take the write lock (each migration's IMMEDIATE transaction): SQLITE_BUSY after busy_timeout.
      const db = openDatabase(path)
      expect(db.query<{ n: number }, []>('SELECT count(*) AS n FROM schema_migrations').get()!.n).toBe(ALL.length)
      db.close()
    } finally {
      other.run('ROLLBACK')
      other.close()
    }
  }, 30_000)
})
