// The composition root: builds the whole API from its dependencies. No environment reads, no listen.
import { Elysia } from 'elysia'
import type { BlobStore } from './blob'
import { BodyRules, bodyPlugin } from './body'
import type { Config } from './config'
import { errorPlugin } from './errors'
import { securityHeadersPlugin } from './headers'
import type { Logger } from './log'
import { Quotas } from './quota'
import { requestLogPlugin } from './request-log'
import type { Store } from './store'
import { UniqueViolation } from './unique'
import { authPlugin } from '../plugins/auth'
import { bodyGate } from '../plugins/auth/guard'
import { AuthService } from '../plugins/auth/service'
import { groupsPlugin } from '../plugins/groups'
import { docsPlugin, systemPlugin } from '../plugins/system'
import { PRIMARY_ADMIN, usersPlugin } from '../plugins/users'
import { tokensPlugin } from '../plugins/tokens'
import { resourcesPlugin } from '../plugins/resources'
import { filesPlugin } from '../plugins/files'
import { ingestPlugin } from '../plugins/ingest'
import { notificationsPlugin } from '../plugins/notifications'
import { searchCtrlPlugin } from '../plugins/searchctrl'
import { statsPlugin } from '../plugins/stats'
import { websocketOptions, wsPlugin } from '../plugins/ws'
import { SearchManager } from './search/manager'
import type { MatchPool } from './search/match'
import { dashboardsPlugin } from '../plugins/dashboards'
import { libraryPlugin } from '../plugins/library'

export interface AppDeps {
  config: Config
  store: Store
  /** Contents of resources and user files (disk or S3); their metadata stays in `store`. */
  blobs: BlobStore
  log: Logger
  /** Milliseconds since the epoch; tests pass a clock they can move. */
  clock?: () => number
  /** Tests only: the chunk size of searches and what they await between chunks (server/search/manager.ts). */
  search?: { chunk?: number; stepMs?: number; step?: () => Promise<void>; matcher?: MatchPool; compileBudgetMs?: number; historyKeep?: number }
  /** Where a generated admin password is shown, once. */
  announce?: (line: string) => void
}

const JWT_KEY_SETTING = 'jwt_signing_key'

export async function createApp(deps: AppDeps) {
  const { config, store, log } = deps
  const clock = deps.clock ?? Date.now
  const signingKey = config.jwtKey ?? (await store.settings.setIfAbsent(JWT_KEY_SETTING, randomSecret()))
  const auth = new AuthService({ config, store, log, clock, signingKey })
  await ensurePrimaryAdmin(deps, auth, clock())
  const quotas = new Quotas(config, store)
  const searches = new SearchManager({
    quotas,
    entries: store.entries,
    searches: store.searches,
    blobs: deps.blobs,
    log,
    clock,
    dataDir: config.dataDir,
    graceMs: config.searchGraceMs,
    maxPerUser: config.maxSearchesPerUser,
    ...deps.search,
  })
  await searches.init()

  // No response schema here uses t.Transform, so Elysia's encode pass over every response would do nothing
  // but cost (measured: about 12 % of a whoami request). Responses are still checked against their schemas.
  const bodies = new BodyRules({ limit: config.maxBodyBytes, gateOf: (hooks) => bodyGate(auth, hooks) })
  const app = new Elysia({ encodeSchema: false, websocket: websocketOptions() })
    .use(securityHeadersPlugin())
    .use(requestLogPlugin(log))
    .use(errorPlugin(log))
    .use(bodyPlugin(bodies))
    .use(docsPlugin())
    .use(systemPlugin({ config, auth, clock, startedAt: clock() }))
    .use(authPlugin(auth))
    .use(usersPlugin({ config, store, auth, clock, onUserDeleted: (uid) => searches.removeOwnedBy(uid) }))
    .use(groupsPlugin({ store, auth }))
    .use(tokensPlugin({ config, store, auth, clock }))
    .use(resourcesPlugin({ config, store, blobs: deps.blobs, auth, log, clock, quotas }))
    .use(filesPlugin({ config, store, blobs: deps.blobs, auth, log, clock, quotas }))
    .use(ingestPlugin({ store, auth, clock }))
    .use(searchCtrlPlugin({ config, store, auth, searches, clock, quotas }))
    .use(statsPlugin({ config, auth, searches }))
    .use(wsPlugin({ config, store, auth, searches, clock, log }))
    .use(notificationsPlugin({ auth }))
    .use(dashboardsPlugin({ store, auth, clock, quotas }))
    .use(libraryPlugin({ store, auth, clock, quotas }))
  // Last, once every route is there: each route's body rule (who is checked before reading, who streams).
  bodies.learn(app.routes)
  return { app, auth, searches }
}

export type App = Awaited<ReturnType<typeof createApp>>['app']

function randomSecret(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
}

/** On an empty store, creates UID 1 `admin` with the configured password or a random one shown once. */
async function ensurePrimaryAdmin(deps: AppDeps, auth: AuthService, now: number) {
  const { store, config, log } = deps
  if ((await store.users.count()) > 0) return
  const password = config.adminPassword ?? randomSecret()
  try {
    await store.users.create(
      { username: PRIMARY_ADMIN, name: 'Administrator', email: 'admin@localhost', passwordHash: await auth.hashPassword(password), admin: true },
      now,
    )
  } catch (e) {
    if (e instanceof UniqueViolation) return // another replica created it first
    throw e
  }
  log.info('created the admin account', { uid: 1, passwordFrom: config.adminPassword ? 'QUARRY_ADMIN_PASSWORD' : 'generated' })
  if (!config.adminPassword)
    (deps.announce ?? console.error)(`quarry: created user "admin" with the generated password ${password} (shown only this once; change it)`)
}
