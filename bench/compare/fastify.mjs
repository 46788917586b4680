// The mainstream baseline of bench/compare (issue 17): Fastify + better-sqlite3 on Node, doing exactly Quarry's work
// per request (bench/compare/work.mjs). Installed by bench/compare/run.sh into bench/compare/node_modules.
//
//   COMPARE_DB=<quarry.db> COMPARE_PORT=<port> node bench/compare/fastify.mjs
import Database from 'better-sqlite3'
import Fastify from 'fastify'
import { answerHeaders, makeWork } from './work.mjs'

const dbPath = process.env.COMPARE_DB
if (!dbPath) throw new Error('COMPARE_DB is required')
const db = new Database(dbPath)
db.pragma('journal_mode = WAL')
db.pragma('busy_timeout = 5000')
db.pragma('synchronous = NORMAL')
db.pragma('foreign_keys = ON')
const key = db.prepare('SELECT value FROM server_settings WHERE key = ?').get('jwt_signing_key')?.value
if (!key) throw new Error('no jwt_signing_key in the store')
// better-sqlite3 binds numbered parameters (?1, ?2) only from an object keyed by number.
function prepare(sql) {
  const s = db.prepare(sql)
  if (!/\?\d/.test(sql)) return s
  const named = (args) => Object.fromEntries(args.map((v, i) => [i + 1, v]))
  return { get: (...a) => s.get(named(a)), all: (...a) => s.all(named(a)), run: (...a) => s.run(named(a)) }
}
const work = makeWork(prepare, key)

const app = Fastify({ logger: false })
// The headers Quarry's answers carry (security headers, JSON type, request id): part of the work.
const send = (req, reply, a) => reply.code(a.status).headers(answerHeaders(req.headers['x-request-id'])).send(a.body)
app.get('/api/info/whoami', (req, reply) => send(req, reply, work.whoami(req.headers.authorization)))
app.get('/api/dashboards', (req, reply) => send(req, reply, work.dashboards(req.headers.authorization)))
app.get('/api/dashboards/:id', (req, reply) => send(req, reply, work.dashboard(req.headers.authorization, req.params.id)))
app.get('/api/test', (req, reply) => send(req, reply, { status: 200, body: '{}' }))
await app.listen({ host: '127.0.0.1', port: Number(process.env.COMPARE_PORT ?? 0) })
console.log(`fastify listening on http://127.0.0.1:${app.server.address().port}`)
const stop = async () => {
  await app.close()
  db.close()
  process.exit(0)
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
