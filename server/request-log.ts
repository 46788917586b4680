// Per-request bookkeeping for the whole app: a request id (echoed in X-Request-Id and in 500 messages),
// `Connection: close` echoed when the client sent it, and one JSON log line per request.
import { Elysia } from 'elysia'
import type { Logger } from './log'

const started = new WeakMap<Request, { rid: string; t0: number }>()

export function requestLogPlugin(log: Logger) {
  const logRequests = log.enabled('info')
  const plugin = new Elysia({ name: 'quarry-request-log' })
    .onRequest(({ request, set }) => {
      const rid = crypto.randomUUID()
      if (logRequests) started.set(request, { rid, t0: performance.now() })
      set.headers['x-request-id'] = rid
      if (request.headers.get('connection')?.toLowerCase() === 'close') set.headers['connection'] = 'close'
    })
  // Below info level there is no request line to write, so no per-request work is done for it.
  if (!logRequests) return plugin
  return plugin.onAfterResponse({ as: 'global' }, (ctx) => {
    const info = started.get(ctx.request)
    const url = new URL(ctx.request.url)
    const caller = (ctx as { caller?: { uid: number; token?: { id: string } } }).caller
    log.info('request', {
      rid: info?.rid,
      method: ctx.request.method,
      path: url.pathname,
      status: typeof ctx.set.status === 'number' ? ctx.set.status : 200,
      ms: info ? Math.round((performance.now() - info.t0) * 100) / 100 : undefined,
      uid: caller?.uid,
      // the token's id, never its secret
      token: caller?.token?.id,
    })
  })
}
