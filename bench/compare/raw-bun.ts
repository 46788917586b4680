// The raw baseline of bench/compare (bench/README.md): Bun.serve with `routes` and bun:sqlite, doing exactly Quarry's
// work per request (bench/compare/work.mjs) and nothing else: no framework, no hooks, no schema checks.
//
//   COMPARE_DB=<quarry.db> COMPARE_PORT=<port> bun run bench/compare/raw-bun.ts
// @ts-expect-error plain JavaScript shared with the Node baseline
import { answerHeaders } from './work.mjs'
import { openCompareStore } from './store'

const { db, work } = openCompareStore()

// The headers Quarry's answers carry (security headers, JSON type, request id): part of the work.
const send = (req: Request, a: { status: number; body: string }) => new Response(a.body, { status: a.status, headers: answerHeaders(req.headers.get('x-request-id')) })

const server = Bun.serve({
  hostname: '127.0.0.1',
  port: Number(process.env.COMPARE_PORT ?? 0),
  routes: {
    '/api/info/whoami': { GET: (req) => send(req, work.whoami(req.headers.get('authorization'))) },
    '/api/dashboards': { GET: (req) => send(req, work.dashboards(req.headers.get('authorization'))) },
    '/api/dashboards/:id': { GET: (req) => send(req, work.dashboard(req.headers.get('authorization'), req.params.id)) },
    '/api/test': { GET: (req) => send(req, { status: 200, body: '{}' }) },
  },
  fetch: (req) => send(req, { status: 404, body: '{"Error":"no such route"}' }),
})
console.log(`raw-bun listening on http://127.0.0.1:${server.port}`)
const stop = () => {
  server.stop(true)
  db.close()
  process.exit(0)
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
