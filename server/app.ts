// The composition root: builds the whole API from its dependencies. No environment reads, no listen.
// First, before any plugin module makes its schemas: t.Integer and t.Numeric compile their checkers when first used.
import './runtime/lazy-numeric'
import { Elysia } from 'elysia'
import { type BlobStore, guardBlobStore } from './blob'
import { BodyRules, bodyPlugin } from './http/body'
import { type Config, isCluster } from './runtime/config'
import { Dependencies } from './runtime/dependencies'
import type { ClusterEvents } from './runtime/events'
import { errorPlugin } from './http/errors'
import { securityHeadersPlugin } from './http/headers'
import type { Logger } from './runtime/log'
import { Metrics } from './runtime/metrics'
import { clientAddressOf, fromTrustedProxyOf } from './http/client-address'
import { metricsPlugin } from '../plugins/metrics'
import { Quotas } from './store/quota'
import { requestLogPlugin } from './http/request-log'
import type { Store } from './repos'
import { UniqueViolation } from './store/unique'
import { initialPasswordPath, pendingInitialPassword, prepareInitialPassword, readInitialPassword, removeInitialPassword } from './runtime/initial-password'
import { authPlugin } from '../plugins/auth'
import { bodyGate } from '../plugins/auth/guard'
import { AuthService } from '../plugins/auth/service'
import { groupsPlugin } from '../plugins/groups'
import { systemPlugin } from '../plugins/system'
import { ApiDocs, docsPlugin } from '../plugins/system/docs'
import { consolePlugin, loadConsoleFiles } from '../plugins/console'
import { readinessCheck } from '../plugins/system/health'
import { PRIMARY_ADMIN, usersPlugin } from '../plugins/users'
import { tokensPlugin } from '../plugins/tokens'
import { resourcesPlugin } from '../plugins/resources'
import { filesPlugin } from '../plugins/files'
import { ingestPlugin } from '../plugins/ingest'
import { otlpPlugin } from '../plugins/ingest/otlp'
import { lokiPlugin } from '../plugins/ingest/loki'
import { elasticPlugin } from '../plugins/ingest/elastic'
import { splunkPlugin } from '../plugins/ingest/splunk'
import { linesIngestPlugin } from '../plugins/ingest/lines'
import { IngestSink } from './ingest/sink'
import { TimestampFinder } from './ingest/timestamps'
import { notificationsPlugin } from '../plugins/notifications'
import { searchCtrlPlugin } from '../plugins/searchctrl'
import { statsPlugin } from '../plugins/stats'
import { websocketOptions, wsPlugin } from '../plugins/ws'
import { SearchManager } from './search/manager'
import { UUID, pickReached } from './rules/sharing'
import { SegmentedEntries } from './search/segments'
import { TagDirectory } from './search/tags'
import { FreeSpaceFloor } from './runtime/disk-space'
import { Cluster } from './cluster'
import { clusterPlugin } from '../plugins/cluster'
import type { MatchPool } from './search/match'
import { dashboardsPlugin } from '../plugins/dashboards'
import { libraryPlugin } from '../plugins/library'
import { autoExtractorsPlugin, extractorsFor } from '../plugins/autoextractors'
import { adminDataPlugin } from '../plugins/admin-data'
import { DataRemoval } from './search/retention'
import { MODULES } from '../engine/registry'

export interface AppDeps {
  config: Config
  store: Store
  /** Contents of resources and user files (disk or S3); their metadata stays in `store`. */
  blobs: BlobStore
  log: Logger
  /** Milliseconds since the epoch; tests pass a clock they can move. */
  clock?: () => number
  /** Tests only: the heartbeat of the replica registry (server/cluster). */
  cluster?: { heartbeatMs?: number }
  /** Tests only: the chunk size of searches and what they await between chunks (server/search/runner.ts). */
  search?: {
    chunk?: number
    chunkBytes?: number
    stepMs?: number
    step?: () => Promise<void>
    matcher?: MatchPool
    compileBudgetMs?: number
    historyKeep?: number
  }
  /** Tests only: the size at which the compaction cuts a segment (server/search/segments.ts). */
  segments?: { targetBytes?: number; maxEntries?: number; sealedIngestBytes?: number }
  /**
   * Leave the first admin to the caller's `createFirstAdmin()` (the server calls it once it listens, so a start that
   * fails, e.g. on a port in use, neither creates the account nor shows a password that the next start never shows).
   */
  deferFirstAdmin?: boolean
  /** How sessions and tokens that end here are told to the other replicas, and theirs to this one (server/runtime/events.ts). */
  events?: ClusterEvents
  /** QUARRY_PEER_CA's certificates (PEM), read at start: what the other replicas' https addresses are checked against. */
  peerCa?: string
  /** This process's name among the lease holders (server/runtime/jobs.ts); 'local' by default. */
  replica?: string
}

const JWT_KEY_SETTING = 'jwt_signing_key'

export async function createApp(deps: AppDeps) {
  const { config, log } = deps
  const clock = deps.clock ?? Date.now
  let searches: SearchManager | undefined
  let ingest: IngestSink | undefined
  const metrics = new Metrics({
    liveSessions: () => deps.store.sessions.countLive(clock(), config.sessionIdleMs),
    searchStates: () =>
      (searches?.list({ uid: 0, admin: true, groups: new Set() }, true) ?? []).map((s) => ({
        // one word per search, from the search states (docs/api.md): saved, saving, backgrounded, active (attached) or
        // dormant
        state: s.save !== 'none' ? s.save : s.background ? 'backgrounded' : s.clients.size > 0 ? 'active' : 'dormant',
        running: s.running,
      })),
    ingest: () => ingest?.counts.values() ?? [],
  })
  // What the store and the blob store did last (GET /api/health, one log line per outage and per recovery).
  const dependencies = new Dependencies(log, clock)
  // No blob operation waits on the blob store longer than QUARRY_BLOB_TIMEOUT: a frozen store fails what needs it (503)
  // instead of holding those requests.
  const guardedBlobs = guardBlobStore(deps.blobs, config.blobTimeoutMs, dependencies)
  // Every repository call and blob operation of the app goes through these (store latency, blob bytes and errors).
  const store = metrics.instrumentStore(deps.store)
  const blobs = metrics.instrumentBlobs(guardedBlobs)
  const clientOf = clientAddressOf(config.trustedProxies)
  const signingKey = config.jwtKey ?? (await store.settings.setIfAbsent(JWT_KEY_SETTING, randomSecret()))
  const fromTrustedProxy = fromTrustedProxyOf(config.trustedProxies)
  const auth = new AuthService({ config, repos: { users: store.users, sessions: store.sessions, tokens: store.tokens }, synchronous: store.kind === 'sqlite', log, clock, signingKey, events: deps.events, fromTrustedProxy: (request) => fromTrustedProxy(app.server, request) })
  const firstAdmin = Promise.withResolvers<void>()
  auth.loginsWaitFor(firstAdmin.promise)
  const createFirstAdmin = async () => {
    try {
      await ensurePrimaryAdmin({ ...deps, store }, auth, clock())
    } finally {
      firstAdmin.resolve()
    }
  }
  if (!deps.deferFirstAdmin) await createFirstAdmin()
  const quotas = new Quotas(config, store)
  // Several replicas share a PostgreSQL store: searches are published there and requests forwarded to their owner.
  const shared = isCluster(config)
  // Searches walk the sealed segments and the rows not compacted yet; ingest writes rows (server/search/segments.ts).
  const entries = new SegmentedEntries(store.entries, store.segments, blobs, { targetBytes: config.segmentBytes, cacheBytes: config.segmentCacheBytes, ...deps.segments, log })
  // Retention and deletion of entries (server/search/retention.ts): its sweep is a job of server/main.ts.
  const removal = new DataRemoval({
    entries,
    tags: store.entries,
    repo: store.removal,
    blobs,
    leases: store.leases,
    holder: deps.replica ?? 'local',
    leaseTtlMs: config.leaseTtlMs,
    variables: config.retentionRules,
    log,
    clock,
  })
  // Read whole once here; requests then resolve tags from memory (server/search/tags.ts).
  const tags = new TagDirectory(entries, deps.events, log)
  await tags.load()
  // The data directory's filesystem holds the SQLite store or the blobs on disk (with PostgreSQL and S3, neither).
  const space = new FreeSpaceFloor(store.kind === 'sqlite' || config.s3 === undefined ? config.dataDir : undefined, config.minFreeSpaceBytes)
  // Times read from the lines of raw HEC requests, as the lines route reads them (server/ingest/timestamps.ts).
  const lineTimes = new TimestampFinder({ zone: config.timestampZone, format: config.timestampFormat })
  ingest = new IngestSink({ config, entries, quotas, tags, space })
  searches = new SearchManager({
    shared,
    quotas,
    entries,
    tags,
    searches: store.searches,
    blobs,
    log,
    clock,
    dataDir: config.dataDir,
    graceMs: config.searchGraceMs,
    maxPerUser: config.maxSearchesPerUser,
    unsavedElsewhere: (uid) => cluster.unsavedElsewhere(uid),
    resource: (uid, name, maxBytes) => readableResource(store, blobs, uid, name, maxBytes),
    extractors: (uid, tags) => extractorsFor(store.autoextractors, uid, tags),
    ...deps.search,
  })
  await searches.init()
  const cluster = new Cluster({
    repo: store.cluster,
    saved: store.searches,
    manager: searches,
    log,
    clock,
    shared,
    secret: config.clusterSecret,
    heartbeatMs: deps.cluster?.heartbeatMs,
    userExists: async (uid) => (await store.users.get(uid)) !== undefined,
    peerCa: deps.peerCa,
  })

  // No response schema here uses t.Transform, so Elysia's encode pass over every response would do nothing
  // but cost (measured: about 12 % of a whoami request). Responses are still checked against their schemas.
  const readiness = readinessCheck(store.settings, guardedBlobs, dependencies)
  const bodies = new BodyRules({ limit: config.maxBodyBytes, gateOf: (hooks) => bodyGate(auth, hooks) })
  const docs = new ApiDocs()
  const consoleFiles = await loadConsoleFiles()
  // The internal routes serve a forwarded request through the whole app, which exists only once it is built.
  let handleRef: (request: Request) => Promise<Response> = async () => new Response(null, { status: 503 })
  const requestLog = requestLogPlugin(log, metrics, clientOf, () => app.server)
  const app = new Elysia({ encodeSchema: false, websocket: websocketOptions() })
    .use(securityHeadersPlugin({ https: config.tls !== undefined }))
    .use(requestLog.plugin)
    .use(clusterPlugin({ cluster, handle: (request): Promise<Response> => handleRef(request) }))
    .use(errorPlugin(log))
    .use(bodyPlugin(bodies))
    .use(docsPlugin(docs))
    .use(consolePlugin(consoleFiles))
    .use(systemPlugin({ config, auth, clock, distributed: shared, startedAt: clock(), readiness, dependencies: () => dependencies.states() }))
    .use(metricsPlugin({ metrics, token: config.metricsToken }))
    .use(authPlugin(auth, clientOf))
    .use(usersPlugin({ config, repos: { users: store.users, groups: store.groups, sessions: store.sessions }, auth, clock, log, onUserDeleted: (uid) => searches.removeOwnedBy(uid) }))
    .use(groupsPlugin({ repos: { users: store.users, groups: store.groups }, auth }))
    .use(tokensPlugin({ config, repos: { users: store.users, tokens: store.tokens }, auth, clock }))
    .use(resourcesPlugin({ config, repos: { groups: store.groups, resources: store.resources }, blobs, auth, log, clock, quotas, space }))
    .use(filesPlugin({ config, repos: { users: store.users, groups: store.groups, files: store.files }, blobs, auth, log, clock, quotas, space }))
    .use(ingestPlugin({ auth, clock, sink: ingest }))
    .use(otlpPlugin({ auth, clock, sink: ingest, config, clientOf }))
    .use(lokiPlugin({ auth, clock, sink: ingest, config, clientOf }))
    .use(elasticPlugin({ auth, clock, sink: ingest, config, clientOf: (request): string => clientOf(app.server, request) }))
    .use(splunkPlugin({ auth, clock, sink: ingest, config, clientOf: (request): string => clientOf(app.server, request), timeOf: (line, at) => lineTimes.find(line, at) }))
    .use(adminDataPlugin({ auth, removal, intervalMs: config.retentionIntervalMs }))
    .use(linesIngestPlugin({ auth, clock, sink: ingest, config }))
    .use(searchCtrlPlugin({ config, repos: { groups: store.groups }, auth, searches, cluster, clock, quotas, space }))
    .use(statsPlugin({ config, auth, searches, cluster }))
    .use(wsPlugin({ config, repos: { groups: store.groups }, auth, searches, cluster, clock, log }))
    .use(notificationsPlugin({ config, repos: { users: store.users, groups: store.groups, notifications: store.notifications }, auth, clock }))
    .use(dashboardsPlugin({ repos: { users: store.users, groups: store.groups, dashboards: store.dashboards }, auth, clock, quotas }))
    .use(libraryPlugin({ repos: { users: store.users, groups: store.groups, library: store.library }, auth, clock, quotas }))
    .use(autoExtractorsPlugin({ repos: { users: store.users, groups: store.groups, autoextractors: store.autoextractors }, auth, clock, modules: MODULES, compile: (src) => searches.parse(src) }))
  // Last, once every route is there: each route's body rule (who is checked before reading, who streams).
  bodies.learn(app.routes)
  requestLog.routes.learn(app.routes)
  docs.learn(app)
  handleRef = (request) => app.handle(request)
  return { app, auth, searches, cluster, metrics, createFirstAdmin, entries, readiness, ingest, removal }
}

export type App = Awaited<ReturnType<typeof createApp>>['app']

/**
 * The contents of the resource a search's owner names (lookup -r): by GUID, or by name among those they reach
 * (own first, then shared with a group of theirs, then global; an admin reaches every one, last), as the resources
 * API's read rules allow.
 */
async function readableResource(store: Store, blobs: BlobStore, uid: number, name: string, maxBytes: number): Promise<Uint8Array | 'too large' | undefined> {
  const admin = (await store.users.get(uid))?.admin ?? false
  const byGuid = UUID.test(name) ? await store.resources.get(name.toLowerCase()) : undefined
  const candidates = byGuid ? [byGuid] : (admin ? await store.resources.listAll() : await store.resources.listVisible(uid)).filter((r) => r.name === name)
  const reach = await Promise.all(
    candidates.map(async (r) => ({ ...r, shared: r.uid !== uid && r.gids.length > 0 && (await store.resources.sharedWith(r.guid, uid)) })),
  )
  const row = pickReached(reach, { uid, all: admin })
  if (!row) return undefined
  if (row.size > maxBytes) return 'too large'
  if (!row.blobKey) return new Uint8Array(0)
  return new Uint8Array(await new Response(await blobs.get(row.blobKey)).arrayBuffer())
}

function randomSecret(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
}

/**
 * On an empty store, creates UID 1 `admin` with the configured password or a generated one, which is written to a
 * private file in the data directory (never to the logs). On a store that has its admin, what an earlier
 * start left is settled (settleInitialPassword).
 */
async function ensurePrimaryAdmin(deps: AppDeps, auth: AuthService, now: number) {
  const { store, config, log } = deps
  if ((await store.users.count()) > 0) return settleInitialPassword(deps, auth)
  const password = config.adminPassword ?? randomSecret()
  const file = config.adminPassword ? undefined : prepareInitialPassword(config.dataDir, password)
  try {
    await store.users.create(
      { username: PRIMARY_ADMIN, name: 'Administrator', email: 'admin@localhost', passwordHash: await auth.hashPassword(password), admin: true },
      now,
    )
  } catch (e) {
    file?.drop()
    if (e instanceof UniqueViolation) return // another replica created it first
    throw e
  }
  file?.keep()
  if (file) log.warn('created the admin account with a generated password: read it from the file, then change it (the file goes at the change)', { uid: 1, passwordFile: file.path })
  else log.info('created the admin account', { uid: 1, passwordFrom: 'QUARRY_ADMIN_PASSWORD' })
}

/**
 * On a store that has its admin: a file whose password no longer logs in (changed through another replica, or while
 * this one was down) is removed; one a start left pending (it stopped before putting it in place) is put in place
 * when its password is the admin's, and removed otherwise.
 */
async function settleInitialPassword(deps: AppDeps, auth: AuthService) {
  const { store, config, log } = deps
  const pending = pendingInitialPassword(config.dataDir)
  const kept = readInitialPassword(config.dataDir)
  if (pending === undefined && kept === undefined) return
  const admin = await store.users.getByName(PRIMARY_ADMIN)
  const works = async (password: string) => admin !== undefined && (await auth.verifyPassword(password, admin.passwordHash))
  if (pending) {
    if (kept === undefined && (await works(pending.password))) {
      pending.keep()
      log.warn('the generated admin password is in the file: read it from there, then change it (the file goes at the change)', { uid: 1, passwordFile: pending.path })
      return
    }
    pending.drop()
  }
  if (kept !== undefined && !(await works(kept))) {
    removeInitialPassword(config.dataDir)
    log.info('removed the file of the generated admin password: that password has been changed', { passwordFile: initialPasswordPath(config.dataDir) })
  }
}
