// GET /metrics: the Prometheus text format of server/runtime/metrics.ts. With QUARRY_METRICS_TOKEN set, only a request
// with `Authorization: Bearer <that token>` gets it (401 otherwise); without it the endpoint is public, as
// Grafana's /metrics is by default: it holds counts, durations and route templates, never names, ids or paths.
import { Elysia } from 'elysia'
import { Errors } from '../../server/http/errors'
import { METRICS_CONTENT_TYPE, type Metrics } from '../../server/runtime/metrics'
import { area, refusals } from '../../server/http/openapi'

// Bun's hasher and crypto.timingSafeEqual: node:crypto is not loaded at start (bench/README.md, cold start).
const digest = (s: string) => new Bun.CryptoHasher('sha256').update(s).digest()

export function metricsPlugin(deps: { metrics: Metrics; token: string | undefined }) {
  // Compared as SHA-256 digests: equal lengths for timingSafeEqual, so neither the token's characters nor its
  // length can be learnt from how long a refusal takes.
  const expected = deps.token === undefined ? undefined : digest(deps.token)
  return new Elysia({ name: 'quarry-metrics', detail: area('Metrics') }).get(
    '/metrics',
    async ({ request, set }) => {
      if (expected) {
        const m = /^Bearer +(\S+)$/i.exec(request.headers.get('authorization') ?? '')
        if (!m || !crypto.timingSafeEqual(digest(m[1]!), expected)) {
          set.headers['www-authenticate'] = 'Bearer realm="quarry metrics"'
          throw Errors.unauthenticated('GET /metrics needs Authorization: Bearer with the metrics token (QUARRY_METRICS_TOKEN)')
        }
      }
      return new Response(await deps.metrics.text(), { headers: { 'content-type': METRICS_CONTENT_TYPE, 'cache-control': 'no-store' } })
    },
    // 401 only with QUARRY_METRICS_TOKEN set and a request without it
    { response: refusals(401), detail: { summary: 'Get Prometheus metrics', description: 'The Prometheus text format. Public unless QUARRY_METRICS_TOKEN is set; then it needs `Authorization: Bearer <that token>` (401 otherwise).' } },
  )
}
