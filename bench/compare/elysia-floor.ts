// The floor of Elysia itself for bench/compare (bench/README.md): the raw baseline's work (bench/compare/work.mjs) in
// an Elysia app as Quarry builds its root (encodeSchema off, the same security headers through `.headers()`), with
// no hook, no guard, no schema: what any Elysia route costs here. Quarry minus this is Quarry's own code; this minus
// the raw Bun.serve is the framework's.
//
//   COMPARE_DB=<quarry.db> COMPARE_PORT=<port> bun run bench/compare/elysia-floor.ts
import { Elysia } from 'elysia'
import { API_HEADERS } from '../../server/http/headers'
// @ts-expect-error plain JavaScript shared with the Node baseline
import { answerHeaders } from './work.mjs'
import { openCompareStore } from './store'

export const { db, work } = openCompareStore()

const answer = (request: Request, set: { status?: number | string; headers: Record<string, string | number> }, a: { status: number; body: string }) => {
  set.status = a.status
  Object.assign(set.headers, answerHeaders(request.headers.get('x-request-id')))
  return a.body
}

/** The floor app; bench/compare/inprocess.ts --floor calls its `handle` without HTTP. */
export const floorApp = new Elysia({ encodeSchema: false })
  .headers({ ...API_HEADERS })
  .get('/api/info/whoami', ({ request, set }) => answer(request, set, work.whoami(request.headers.get('authorization'))))
  .get('/api/dashboards', ({ request, set }) => answer(request, set, work.dashboards(request.headers.get('authorization'))))
  .get('/api/dashboards/:id', ({ request, params, set }) => answer(request, set, work.dashboard(request.headers.get('authorization'), params.id)))
  .get('/api/test', () => ({}))
if (import.meta.main) listen()

function listen() {
  const app = floorApp.listen({ hostname: '127.0.0.1', port: Number(process.env.COMPARE_PORT ?? 0) })
  console.log(`elysia-floor listening on http://127.0.0.1:${app.server?.port}`)
  const stop = () => {
    void app.stop(true)
    db.close()
    process.exit(0)
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
}
