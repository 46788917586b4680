// The raw baseline of bench/compare (issue 17): Bun.serve with `routes` and bun:sqlite, doing exactly Quarry's work
// per request (bench/compare/work.mjs) and nothing else: no framework, no hooks, no schema checks.
//
//   COMPARE_DB=<quarry.db> COMPARE_PORT=<port> bun run bench/compare/raw-bun.ts
import { Database } from 'bun:sqlite'
// @ts-expect-error plain JavaScript shared with the Node baseline
import { JSON_TYPE, makeWork } from './work.mjs'

const dbPath = process.env.COMPARE_DB
if (!dbPath) throw new Error('COMPARE_DB is required')
const db = new Database(dbPath, { strict: true })
db.run('PRAGMA journal_mode = WAL')
db.run('PRAGMA busy_timeout = 5000')
db.run('PRAGMA synchronous = NORMAL')
db.run('PRAGMA foreign_keys = ON')
const key = db.query<{ value: string }, [string]>('SELECT value FROM server_settings WHERE key = ?').get('jwt_signing_key')?.value
if (!key) throw new Error('no jwt_signing_key in the store')
const work = makeWork((sql: string) => db.query(sql), key)

const headers = { 'content-type': JSON_TYPE }
const send = (a: { status: number; body: string }) => new Response(a.body, { status: a.status, headers })

const server = Bun.serve({
  hostname: '127.0.0.1',
  port: Number(process.env.COMPARE_PORT ?? 0),
  routes: {
    '/api/info/whoami': { GET: (req) => send(work.whoami(req.headers.get('authorization'))) },
    '/api/dashboards': { GET: (req) => send(work.dashboards(req.headers.get('authorization'))) },
    '/api/dashboards/:id': { GET: (req) => send(work.dashboard(req.headers.get('authorization'), req.params.id)) },
    '/api/test': { GET: () => send({ status: 200, body: '{}' }) },
  },
  fetch: () => send({ status: 404, body: '{"Error":"no such route"}' }),
})
console.log(`raw-bun listening on http://127.0.0.1:${server.port}`)
const stop = () => {
  server.stop(true)
  db.close()
  process.exit(0)
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
