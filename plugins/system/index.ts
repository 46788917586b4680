// Service endpoints: liveness, version, settings, the authenticated echo and the OpenAPI document.
import { Elysia, t } from 'elysia'
import { openapi } from '@elysiajs/openapi'
import type { Config } from '../../server/config'
import { formatTime } from '../../server/time'
import { authGuard } from '../auth/guard'
import { Empty } from '../auth/schema'
import type { AuthService } from '../auth/service'
import pkg from '../../package.json'
import type { Readiness } from './health'

const Version = t.Object({
  API: t.Object({ Major: t.Integer(), Minor: t.Integer() }),
  Build: t.Object({
    Major: t.Integer(), Minor: t.Integer(), Point: t.Integer(), BuildDate: t.String(), BuildID: t.String(), GUIBuildID: t.String(),
  }),
})

const Settings = t.Object({
  MaxFileSize: t.Integer(),
  MaxResourceSize: t.Integer(),
  ServerTime: t.String(),
  ServerTimezone: t.String(),
  ServerTimezoneOffset: t.Integer(),
  DistributedWebservers: t.Boolean(),
  IngestAllowed: t.Boolean(),
  MapTileUrl: t.String(),
  DisableMapTileProxy: t.Boolean(),
})

const Health = t.Object({ status: t.Literal('ok') })
const Ready = t.Object({
  status: t.Union([t.Literal('ok'), t.Literal('unavailable')]),
  checks: t.Object({ store: t.String(), migrations: t.String(), blobs: t.String() }),
  Error: t.Optional(t.String()),
})

export function systemPlugin({
  config,
  auth,
  clock,
  startedAt,
  readiness,
  distributed = false,
}: {
  config: Config
  auth: AuthService
  clock: () => number
  startedAt: number
  readiness: () => Promise<Readiness>
  /** Several replicas share the store (`DistributedWebservers` of /api/settings). */
  distributed?: boolean
}) {
  const version = {
    API: { Major: 0, Minor: 2 },
    Build: { Major: 5, Minor: 0, Point: 0, BuildDate: formatTime(startedAt), BuildID: `${pkg.version}-${config.buildId}`, GUIBuildID: '' },
  }
  return new Elysia({ name: 'quarry-system' })
    .use(authGuard(auth))
    .get('/api/test', () => new Response(null, { status: 200 }), { detail: { summary: 'Liveness: 200 with an empty body, no auth' } })
    .get('/api/health', () => ({ status: 'ok' as const }), {
      response: Health,
      detail: { summary: 'Liveness: 200 {"status":"ok"} while the process answers; no auth, touches nothing' },
    })
    .get(
      '/api/health/ready',
      async ({ set }) => {
        const r = await readiness()
        if (r.ready) return { status: 'ok' as const, checks: r.checks }
        set.status = 503
        const failing = Object.entries(r.checks).filter(([, v]) => v !== 'ok' && v !== 'unknown').map(([k]) => k)
        return { status: 'unavailable' as const, checks: r.checks, Error: `not ready: ${failing.join(', ')}` }
      },
      {
        response: { 200: Ready, 503: Ready },
        detail: {
          summary:
            'Readiness, no auth: 200 when the store answers with every migration applied and the blob store takes a write; ' +
            '503 naming the failing part (checks: store, migrations, blobs) otherwise',
        },
      },
    )
    .get('/api/version', () => version, { response: Version, detail: { summary: 'API and build version, no auth' } })
    .get('/api/testauth', () => ({}), { access: 'self', response: Empty, detail: { summary: '200 when the caller is authenticated' } })
    .get(
      '/api/settings',
      () => {
        const now = new Date(clock())
        return {
          MaxFileSize: config.maxFileBytes,
          MaxResourceSize: config.maxResourceBytes,
          ServerTime: now.toISOString(),
          ServerTimezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
          // seconds east of UTC, as Go's time.Zone() reports it
          ServerTimezoneOffset: -now.getTimezoneOffset() * 60,
          DistributedWebservers: distributed,
          IngestAllowed: true,
          MapTileUrl: config.mapTileUrl,
          DisableMapTileProxy: config.disableMapTileProxy,
        }
      },
      { access: 'self', response: Settings, detail: { summary: 'Server limits and clock' } },
    )
}

/** GET /api/docs: the OpenAPI document generated from every route's schemas, with its x-permission key. */
export function docsPlugin() {
  return openapi({
    path: '/api/docs',
    specPath: '/api/docs',
    provider: null,
    documentation: {
      info: {
        title: 'Quarry web API',
        version: pkg.version,
        description:
          'Every route names the permission it needs in x-permission: a capability name (also what an API token must list), ' +
          '"self" (any authenticated caller, tokens included), "session" (a login session, never a token) or "admin" (an admin with a session).',
      },
    },
  })
}
