// The test PostgreSQL server (test/pg-server.sh, started by test/run.sh): a fresh database per store, so tests
// stay independent and may run in parallel. Tests that need it fail (never skip) when it is not configured.
import { SQL } from 'bun'
import { type PgPool, q } from '../server/store/pg'

/** Whether this run puts the HTTP suite's test servers on PostgreSQL (QUARRY_TEST_STORE=pg). */
export const onPg = process.env.QUARRY_TEST_STORE === 'pg'

export function testDatabaseUrl(): string {
  const url = process.env.QUARRY_TEST_DATABASE_URL
  if (!url)
    throw new Error(
      'QUARRY_TEST_DATABASE_URL is not set: run the tests through test/run.sh, or start test/pg-server.sh start DIR and source DIR/env',
    )
  return url
}

let admin: SQL | undefined
const adminPool = () => (admin ??= new SQL(testDatabaseUrl(), { max: 2, idleTimeout: 5 }))

let template: Promise<string> | undefined

/**
 * A database with every migration applied, made once per test process: test databases are copies of it, which
 * costs a file copy instead of running the migrations again (about ten times faster).
 */
function migratedTemplate(): Promise<string> {
  template ??= (async () => {
    const name = `quarry_tpl_${process.pid}_${Date.now()}`
    await adminPool().unsafe(`CREATE DATABASE ${name}`)
    const url = new URL(testDatabaseUrl())
    url.pathname = `/${name}`
    const { createPgStore } = await import('../server/repos.pg')
    const store = await createPgStore(url.toString(), { max: 1 })
    await store.close()
    return name
  })()
  return template
}

/**
 * A database on the test server, fresh for one store: empty, or with `migrated` a copy of the migrated template.
 * `drop` removes it (ending any connection still open on it).
 */
export async function freshDatabase(options: { migrated?: boolean } = {}): Promise<{ url: string; name: string; drop: () => Promise<void> }> {
  const name = `quarry_t_${Bun.randomUUIDv7().replaceAll('-', '').slice(-20)}_${process.pid}`
  const from = options.migrated ? ` TEMPLATE ${await migratedTemplate()}` : ''
  await adminPool().unsafe(`CREATE DATABASE ${name}${from}`)
  const url = new URL(testDatabaseUrl())
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    name,
    drop: async () => {
      await adminPool().unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    },
  }
}

/**
 * Direct access to a store's tables for checks the API cannot make, with `?` placeholders on both engines. `sql`
 * must be opened with `bigint: true`; rows come back as SQLite answers them: integers and booleans as numbers.
 */
export async function pgRows(sql: PgPool, text: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
  let n = 0
  const rows = await q(sql, text.replace(/\?/g, () => `$${++n}`), params)
  return rows.map((r) => {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(r))
      out[k] = typeof v === 'boolean' ? (v ? 1 : 0) : typeof v === 'bigint' ? Number(v) : v instanceof Uint8Array ? new Uint8Array(v) : v
    return out
  })
}
