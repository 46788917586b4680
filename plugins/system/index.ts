// Service endpoints: liveness, version, settings and the authenticated echo (the OpenAPI document: docs.ts).
import { Elysia, t } from 'elysia'
import type { Config } from '../../server/runtime/config'
import { formatTime } from '../../server/runtime/time'
import { authGuard } from '../auth/guard'
import { Empty } from '../auth/schema'
import type { AuthService } from '../auth/service'
import pkg from '../../package.json'
import type { Readiness } from './health'
import type { DependencyName, DependencyState as State } from '../../server/runtime/dependencies'
import { area } from '../../server/http/openapi'
import { MODULES } from '../../engine/registry'

const Version = t.Object({
  Version: t.String({ description: "Quarry's own version (its package.json); Build is the platform release whose API it speaks" }),
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

// The module lists the clients show (the Go client's SearchModuleInfo and RenderModuleInfo; the TypeScript client's
// RawSearchModule and RawRenderModule), from the engine's registry: whatever a query may name is listed, with its help.
const SearchModuleInfo = t.Object({
  Name: t.String(),
  Info: t.String(),
  Examples: t.Array(t.String()),
  FrontendOnly: t.Boolean({ description: 'Always false: every module runs on the server' }),
  Sorting: t.Boolean({ description: 'The module orders its output itself (sort)' }),
})
const RenderModuleInfo = t.Object({ Name: t.String(), Description: t.String(), Examples: t.Array(t.String()) })
const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
const SEARCH_MODULES = MODULES.filter((m) => m.kind !== 'render')
  .toSorted(byName)
  .map((m) => ({ Name: m.name, Info: m.info, Examples: [...m.examples], FrontendOnly: false, Sorting: m.name === 'sort' }))
const RENDER_MODULES = MODULES.filter((m) => m.kind === 'render')
  .toSorted(byName)
  .map((m) => ({ Name: m.name, Description: m.info, Examples: [...m.examples] }))

const DependencyState = t.Union([t.Literal('ok'), t.Literal('failing'), t.Literal('unknown')])
const Health = t.Object({
  status: t.Literal('ok'),
  dependencies: t.Object(
    { store: DependencyState, blobs: DependencyState },
    { description: 'Each dependency as the last operations and checks of this replica found it ("unknown": not used yet)' },
  ),
})
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
  dependencies,
  distributed = false,
}: {
  config: Config
  auth: AuthService
  clock: () => number
  startedAt: number
  readiness: () => Promise<Readiness>
  /** The dependencies' states as last seen (server/runtime/dependencies.ts): read, never checked, by liveness. */
  dependencies: () => Record<DependencyName, State>
  /** Several replicas share the store (`DistributedWebservers` of /api/settings). */
  distributed?: boolean
}) {
  const version = {
    Version: pkg.version,
    API: { Major: 0, Minor: 2 },
    Build: { Major: 5, Minor: 0, Point: 0, BuildDate: formatTime(startedAt), BuildID: `${pkg.version}-${config.buildId}`, GUIBuildID: '' },
  }
  return new Elysia({ name: 'quarry-system', detail: area('System') })
    .use(authGuard(auth))
    .get('/api/test', () => new Response(null, { status: 200 }), { detail: { summary: 'Check that the server answers', description: '200 with an empty body; no credential needed.' } })
    .get('/api/health', () => ({ status: 'ok' as const, dependencies: dependencies() }), {
      response: Health,
      detail: {
        summary: 'Liveness: is the process up',
        description:
          'Answers `{"status":"ok"}` while the process answers, with the state of the metadata store and the blob store as its last ' +
          'operations found them (`ok`, `failing`, `unknown`); touches nothing.',
      },
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
          summary: 'Readiness: can the server serve requests',
          description:
            '200 when the metadata store answers with every migration applied: this replica can serve. The blob store is ' +
            'checked with a write and reported in `checks.blobs`, but a failing blob store does not make a replica unready ' +
            '(it is shared: every replica would be taken out at once); requests that need it answer 503 meanwhile. ' +
            '503 naming the failing part (checks: store, migrations) otherwise.',
        },
      },
    )
    .get('/api/version', () => version, { response: Version, detail: { summary: 'Get the API and build version' } })
    .get('/api/testauth', () => ({}), { access: 'self', response: Empty, detail: { summary: 'Check that your credential works', description: 'Answers `{}` when the JWT or API token is valid.' } })
    .get('/api/info/searchmodules', () => SEARCH_MODULES, {
      access: 'self',
      response: t.Array(SearchModuleInfo),
      detail: { summary: 'List the search modules', description: 'Every module a query may name but the renderers, by name, with its help and examples.' },
    })
    .get('/api/info/rendermodules', () => RENDER_MODULES, {
      access: 'self',
      response: t.Array(RenderModuleInfo),
      detail: { summary: 'List the render modules', description: 'Every renderer a query may end with, by name, with its help and examples.' },
    })
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
      { access: 'self', response: Settings, detail: { summary: 'Get server limits, clock and map settings', description: 'Largest file and resource sizes, the server\'s time and time zone, and the map tile settings.' } },
    )
}
