// The internal routes of a cluster (server/cluster): how one replica hands another a request that needs a search
// the other holds. Not part of the public API.
//
// Guarantees:
// - Every path under /api/internal/ is refused unless the request carries the cluster secret (X-Quarry-Cluster-Secret,
//   compared in constant time): 401 without it, 403 with another value (or on a server without a secret). A user's
//   JWT or API token alone never reaches it; the check runs before anything else reads the request.
// - /api/internal/forward/<path>: the request to <path> as its caller sent it to the other replica (their own
//   credentials included), served here through the whole app (authentication, permissions, limits), and marked so
//   that it is never forwarded again. Only /api/ paths outside /api/internal/ can be reached this way.
// - /api/internal/ws/search is the search WebSocket (plugins/ws), for replicas that proxy a socket to this one; it
//   checks the secret in the same way before the upgrade.
import { Elysia } from 'elysia'
import { FORWARD_PREFIX, INTERNAL_WS_SEARCH, SECRET_HEADER, type Cluster } from '../../server/cluster'
import { JSON_TYPE } from '../../server/http/wire'

const refusal = (status: number, message: string) =>
  new Response(JSON.stringify({ Error: message }), { status, headers: { 'content-type': JSON_TYPE } })

/** The answer to an internal request whose secret does not hold; undefined when it holds. */
export function internalRefusal(cluster: Cluster, request: Request): Response | undefined {
  const verdict = cluster.checkSecret(request.headers.get(SECRET_HEADER))
  if (verdict === 'missing') return refusal(401, 'internal route: the cluster secret is required')
  if (verdict === 'wrong') return refusal(403, 'internal route: wrong cluster secret')
  return undefined
}

export function clusterPlugin({ cluster, handle }: { cluster: Cluster; handle: (request: Request) => Promise<Response> }) {
  // A wrapper around the app's handlers (Elysia's `wrap`, the outermost: its answers are not requests of the API and
  // are not counted), not a request hook: any request hook makes Elysia build every request's URL and query (issue
  // 17). Requests that Bun's route table sent to one of its routes (they carry `params`) cannot be internal ones: no
  // route there matches a path under /api/internal (checked by test/hot-path.test.ts), so they pass untouched. The
  // others (Elysia's own router, 404s, WebSockets) are looked at: a substring test, then internalAnswer.
  const gate = (next: (request: Request) => unknown, request: Request) => {
    if ((request as { params?: unknown }).params !== undefined || request.url.indexOf('/api/internal') === -1) return next
    return (r: Request) => internalAnswer(cluster, handle, r) ?? next(r)
  }
  return new Elysia({ name: 'quarry-cluster' }).wrap(gate as unknown as Parameters<Elysia['wrap']>[0])
}

/**
 * The answer to a request whose URL mentions /api/internal: a refusal, the promise of the forwarded request's answer
 * (never of undefined: Elysia would take the promise itself for an answer), or undefined to let the route table
 * have it (a path that only contains the words elsewhere, or the internal WebSocket, whose route checks again).
 */
function internalAnswer(cluster: Cluster, handle: (request: Request) => Promise<Response>, request: Request): Response | Promise<Response> | undefined {
  let url: URL
  try {
    url = new URL(request.url)
  } catch {
    return undefined
  }
  const path = url.pathname
  if (path !== '/api/internal' && !path.startsWith('/api/internal/')) return undefined
  const refused = internalRefusal(cluster, request)
  if (refused) return refused
  if (path === INTERNAL_WS_SEARCH || path === `${INTERNAL_WS_SEARCH}/`) return undefined // the WebSocket route checks it again
  if (!path.startsWith(`${FORWARD_PREFIX}/api/`) || path.startsWith(`${FORWARD_PREFIX}/api/internal`))
    return refusal(404, 'no such internal route')
  const headers = new Headers(request.headers)
  headers.delete(SECRET_HEADER)
  const hasBody = !['GET', 'HEAD'].includes(request.method)
  const inner = new Request(`${url.protocol}//${url.host}${path.slice(FORWARD_PREFIX.length)}${url.search}`, {
    method: request.method,
    headers,
    body: hasBody ? request.body : undefined,
    ...(hasBody ? { duplex: 'half' } : {}),
  } as RequestInit)
  return handle(cluster.accept(inner))
}
