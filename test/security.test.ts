// The route × caller matrix. Every route the app registers must be either public or declare a permission,
// and must appear in MATRIX below; each row is then called as every kind of caller on a fresh store:
// anonymous → 401, callers without the right → 403 (or the row's `deny`), callers with it → 200.
// The token columns follow from the permission each route declares (x-permission), not from the rows:
// a token of the owner without that permission → 403, with it → what the owner's login gets, expired → 401,
// of a locked owner → 401; admin-level and session-only routes refuse every token with 403. Only the few
// 'self' routes (SELF_ROUTES: who the token is, server facts) admit a token whatever it lists.
import { describe, expect, test } from 'bun:test'
import { CAPABILITY_NAMES, PUBLIC_ROUTES, SELF_ROUTES } from '../server/rules/permissions'
import { writeSearchArchive } from '../server/search/archive'
import { ZERO_TIME } from '../server/runtime/time'
import { type CallOptions, createTestServer, type TestServer } from './helpers'
import { apiRoutes } from './routes'

/**
 * Who may call a route:
 * - any: every authenticated caller;
 * - self: the user named by :id, and admins;
 * - member: members of the group named by :gid, and admins;
 * - admin: admins only.
 */
type Who = 'any' | 'self' | 'member' | 'admin'

interface Row {
  who: Who
  /** A valid body, so that a permitted call succeeds with 200. */
  body?: (f: Fixture) => unknown
  /** What callers without the right get, when not 403 (404 for items they may not even see). */
  deny?: number
  /** The path to call, for rows whose :id is not a UID; called once per caller, so it may make a fresh item. */
  path?: (f: Fixture) => Promise<string>
  /** A non-JSON body (with its Content-Type), for upload routes. */
  raw?: () => CallOptions
  /** Permissions the token column's token holds besides the route's: a token gives a token only what it holds. */
  tokenAlso?: string[]
  /** What a permitted call answers, when not 200 (Loki's push answers 204). */
  ok?: number
}

/** A fresh token of the owner, for rows that change or delete the token they name. */
const ownerToken = (f: Fixture) => async () => `/api/tokens/${await f.makeToken(f.ownerJwt, ['DashboardRead'])}`
const tokenRow = (body?: Row['body']): Row => ({ who: 'self', deny: 404, body, path: (f) => ownerToken(f)(), tokenAlso: ['DashboardRead'] })

/** A fresh resource of the owner, shared with the fixture group or not; answers its path plus `suffix`. */
const ownerResource = (shared: boolean, suffix = '') => async (f: Fixture) => {
  const res = await f.server.call('POST', '/api/resources', { jwt: f.ownerJwt, json: { ResourceName: 'matrix', GroupACL: shared ? [f.gid] : [] } })
  if (res.status !== 200) throw new Error(`resource creation failed: ${res.status} ${res.text}`)
  return `/api/resources/${res.body.GUID}${suffix}`
}
/** Read routes: owner, group members and admins; others do not even see the item. */
const resourceReadRow = (suffix = '', body?: Row['body']): Row => ({ who: 'member', deny: 404, body, path: ownerResource(true, suffix) })
/** Write routes on an unshared item: owner and admins; others do not see it (a reader gets 403, tested in resources.test.ts). */
const resourceWriteRow = (suffix = '', body?: Row['body'], raw?: Row['raw']): Row => ({ who: 'self', deny: 404, body, raw, path: ownerResource(false, suffix) })
const UPLOAD_BOUNDARY = 'matrix-boundary'
const uploadBody = (): CallOptions => ({
  body: `--${UPLOAD_BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="x"\r\n\r\ncontents\r\n--${UPLOAD_BOUNDARY}--\r\n`,
  headers: { 'content-type': `multipart/form-data; boundary=${UPLOAD_BOUNDARY}` },
})

/** A fresh user file of the owner, shared with the fixture group or not; answers its path plus `suffix`. */
const ownerFile = (shared: boolean, suffix = '') => async (f: Fixture) => {
  const meta = JSON.stringify({ Name: 'matrix', GIDs: shared ? [f.gid] : [] })
  const body = `--${UPLOAD_BOUNDARY}\r\nContent-Disposition: form-data; name="meta"\r\n\r\n${meta}\r\n` + uploadBody().body!
  const res = await f.server.call('POST', '/api/files', { jwt: f.ownerJwt, body, headers: uploadBody().headers })
  if (res.status !== 200) throw new Error(`file creation failed: ${res.status} ${res.text}`)
  return `/api/files/${res.body.GUID}${suffix}`
}
/** Read routes: owner, group members and admins; others do not even see the file. */
const fileReadRow = (suffix = ''): Row => ({ who: 'member', deny: 404, path: ownerFile(true, suffix) })
/** Write routes on an unshared file: owner and admins; others do not see it (a reader gets 403, tested in files.test.ts). */
const fileWriteRow = (body?: Row['body'], raw?: Row['raw']): Row => ({ who: 'self', deny: 404, body, raw, path: ownerFile(false) })

/**
 * A fresh search launched by the owner (attached to the owner's session), shared with the fixture group through
 * the owner's default search group or not shared; answers its path plus `suffix`.
 */
const ownerSearch = (shared: boolean, suffix = '') => async (f: Fixture) => {
  const group = shared
    ? await f.server.call('PUT', `/api/users/${f.ownerUid}/searchgroup`, { jwt: f.ownerJwt, json: { GID: f.gid } })
    : await f.server.call('DELETE', `/api/users/${f.ownerUid}/searchgroup`, { jwt: f.ownerJwt })
  if (group.status !== 200) throw new Error(`search group change failed: ${group.status} ${group.text}`)
  const res = await f.server.call('POST', '/api/searchctrl/launch', { jwt: f.ownerJwt, json: { SearchString: 'tag=matrix' } })
  if (res.status !== 200) throw new Error(`search launch failed: ${res.status} ${res.text}`)
  return `/api/searchctrl/${res.body.SearchID}${suffix}`
}
/** Routes for whoever may view a search: owner, group members and admins; others do not even see it. */
const searchViewRow = (suffix = ''): Row => ({ who: 'member', deny: 404, path: ownerSearch(true, suffix) })
/** Stop and delete on an unshared search: owner and admins (a group member gets 403, tested in searchctrl.test.ts). */
const searchModifyRow = (suffix = ''): Row => ({ who: 'self', deny: 404, path: ownerSearch(false, suffix) })

/** A multipart body holding a valid search archive of one record, for the import row. */
const importForm = await (async () => {
  const archive = writeSearchArchive(
    { UserQuery: 'tag=matrix', EffectiveQuery: 'tag=matrix', StartRange: ZERO_TIME, EndRange: ZERO_TIME, Started: ZERO_TIME, Finished: ZERO_TIME },
    [{ Data: 'aGk=' }],
  )
  const form = new FormData()
  form.append('file', new Blob([await new Response(archive).arrayBuffer()]), 'search.tar.gz')
  const res = new Response(form)
  const type = res.headers.get('content-type')! // Bun drops it once the body is read
  return { body: new Uint8Array(await res.arrayBuffer()), type }
})()
const importBody = (): CallOptions => ({ body: importForm.body, headers: { 'content-type': importForm.type } })
/** A fresh dashboard of the owner, shared with the fixture group or not; answers its path. */
const ownerDashboard = (shared: boolean) => async (f: Fixture) => {
  const res = await f.server.call('POST', '/api/dashboards', { jwt: f.ownerJwt, json: { Name: 'matrix', GIDs: shared ? [f.gid] : [], Data: {} } })
  if (res.status !== 200) throw new Error(`dashboard creation failed: ${res.status} ${res.text}`)
  return `/api/dashboards/${res.body}`
}
/** Read by owner, group members and admins; others do not even see it. Writes on an unshared one: owner and admins. */
const dashboardReadRow: Row = { who: 'member', deny: 404, path: ownerDashboard(true) }
const dashboardWriteRow = (body?: Row['body']): Row => ({ who: 'self', deny: 404, body, path: ownerDashboard(false) })

/**
 * A fresh library entry of the owner, shared with the fixture group or not; answers its path with ?admin=true,
 * which gives the admin its reach and is ignored for everyone else (docs/api.md "Conventions").
 */
const ownerEntry = (shared: boolean) => async (f: Fixture) => {
  const res = await f.server.call('POST', '/api/library', { jwt: f.ownerJwt, json: { Name: 'matrix', Query: 'tag=x', GIDs: shared ? [f.gid] : [] } })
  if (res.status !== 200) throw new Error(`library entry creation failed: ${res.status} ${res.text}`)
  return `/api/library/${res.body.ThingUUID}?admin=true`
}
/** The library answers 403 to callers without access to an entry (also to those who may not see it). */
const entryReadRow: Row = { who: 'member', path: ownerEntry(true) }
const entryWriteRow = (body?: Row['body']): Row => ({ who: 'self', body, path: ownerEntry(false) })

/** A fresh notification the owner sent to themselves: only the owner and admins see it. */
const ownerNotification = async (f: Fixture) => {
  const res = await f.server.call('POST', '/api/notifications/targeted/self', { jwt: f.ownerJwt, json: { Msg: 'matrix' } })
  if (res.status !== 200) throw new Error(`notification creation failed: ${res.status} ${res.text}`)
  return `/api/notifications/${res.body}`
}
const notificationRow = (body?: Row['body']): Row => ({ who: 'self', deny: 404, body, path: ownerNotification })

/** The UUID of the auto-extractor ownerExtractor made last (PUT names it in the body). */
let lastExtractor = ''
/** A fresh auto-extractor of the owner, shared with the fixture group or not; answers its path (or the collection's, for PUT). */
const ownerExtractor = (shared: boolean, byId = true) => async (f: Fixture) => {
  const res = await f.server.call('POST', '/api/autoextractors', {
    jwt: f.ownerJwt,
    json: { Name: 'matrix', Tag: 'matrix', Module: 'regex', Params: '(?P<x>.)', GIDs: shared ? [f.gid] : [] },
  })
  if (res.status !== 200) throw new Error(`auto-extractor creation failed: ${res.status} ${res.text}`)
  lastExtractor = res.body as string
  return byId ? `/api/autoextractors/${lastExtractor}` : '/api/autoextractors'
}
/** Read by owner, group members and admins; others do not even see it. Writes on an unshared one: owner and admins. */
const extractorReadRow: Row = { who: 'member', deny: 404, path: ownerExtractor(true) }
const extractorWriteRow = (byId = true, body?: Row['body']): Row => ({ who: 'self', deny: 404, body, path: ownerExtractor(false, byId) })
const EXTRACTOR_BOUNDARY = 'matrix-extractors'
const extractorFile = (): CallOptions => ({
  body: `--${EXTRACTOR_BOUNDARY}\r\nContent-Disposition: form-data; name="extraction"; filename="x.toml"\r\n\r\n[[extraction]]\ntag = "m"\nmodule = "regex"\nparams = "(?P<x>.)"\n\r\n--${EXTRACTOR_BOUNDARY}--\r\n`,
  headers: { 'content-type': `multipart/form-data; boundary=${EXTRACTOR_BOUNDARY}` },
})

const MATRIX: Record<string, Row> = {
  'GET /api/testauth': { who: 'any' },
  'GET /api/settings': { who: 'any' },
  'GET /api/login/refreshtoken': { who: 'any' },
  'GET /api/login/tmptoken': { who: 'any' },
  'PUT /api/logout': { who: 'any' },
  'DELETE /api/logout': { who: 'any' },
  'GET /api/info/whoami': { who: 'any' },
  'GET /api/users': { who: 'any' },
  'POST /api/users': { who: 'admin', body: () => ({ User: 'newbie', Pass: 'newbie-password', Name: 'New', Email: 'n@example.com', Admin: false }) },
  'GET /api/users/preferences': { who: 'admin' },
  'GET /api/users/:id': { who: 'self' },
  'PUT /api/users/:id': { who: 'self', body: () => ({ Name: 'Renamed' }) },
  'DELETE /api/users/:id': { who: 'admin' },
  'PUT /api/users/:id/lock': { who: 'admin' },
  'DELETE /api/users/:id/lock': { who: 'admin' },
  'PUT /api/users/:id/pwd': { who: 'self', body: (f) => ({ OrigPass: f.ownerPass, NewPass: 'another-password' }) },
  'GET /api/users/:id/admin': { who: 'self' },
  'PUT /api/users/:id/admin': { who: 'admin' },
  'DELETE /api/users/:id/admin': { who: 'admin' },
  'GET /api/users/:id/searchgroup': { who: 'self' },
  'PUT /api/users/:id/searchgroup': { who: 'self', body: (f) => ({ GID: f.gid }) },
  'DELETE /api/users/:id/searchgroup': { who: 'self' },
  'GET /api/users/:id/preferences': { who: 'self' },
  'PUT /api/users/:id/preferences': { who: 'self', body: () => ({ theme: 'dark' }) },
  'DELETE /api/users/:id/preferences': { who: 'self' },
  'GET /api/users/:id/group': { who: 'self' },
  'POST /api/users/:id/group': { who: 'admin', body: (f) => ({ GIDs: [f.gid] }) },
  'DELETE /api/users/:id/group/:gid': { who: 'admin' },
  'GET /api/users/:id/sessions': { who: 'self' },
  'POST /api/groups': { who: 'admin', body: () => ({ Name: 'brand-new', Desc: '' }) },
  'GET /api/groups': { who: 'any' },
  'GET /api/groups/:gid': { who: 'member' },
  'PUT /api/groups/:gid': { who: 'admin', body: () => ({ Desc: 'changed' }) },
  'DELETE /api/groups/:gid': { who: 'admin' },
  'GET /api/groups/:gid/members': { who: 'member' },
  'GET /api/tokens': { who: 'any' },
  'POST /api/tokens': { who: 'any', body: () => ({ name: 'script', capabilities: ['DashboardRead'] }), tokenAlso: ['DashboardRead'] },
  'GET /api/tokens/capabilities': { who: 'any' },
  'GET /api/info/capabilities': { who: 'any' },
  'GET /api/info/searchmodules': { who: 'any' },
  'GET /api/info/rendermodules': { who: 'any' },
  'GET /api/tokens/:id': tokenRow(),
  'PUT /api/tokens/:id': tokenRow(() => ({ description: 'changed' })),
  'PATCH /api/tokens/:id': tokenRow(() => ({ expiresAt: null })),
  'DELETE /api/tokens/:id': tokenRow(),
  'GET /api/resources': { who: 'any' },
  'POST /api/resources': { who: 'any', body: () => ({ ResourceName: 'new', GroupACL: [], Global: false, Description: '' }) },
  'GET /api/resources/:guid': resourceReadRow(),
  'PUT /api/resources/:guid': resourceWriteRow('', () => ({ ResourceName: 'renamed' })),
  'DELETE /api/resources/:guid': resourceWriteRow(),
  'PUT /api/resources/:guid/raw': resourceWriteRow('/raw', undefined, uploadBody),
  'GET /api/resources/:guid/raw': resourceReadRow('/raw'),
  'GET /api/resources/:guid/contenttype': resourceReadRow('/contenttype'),
  'POST /api/resources/:guid/clone': resourceReadRow('/clone', () => ({ Name: 'copy' })),
  'GET /api/files': { who: 'any' },
  'POST /api/files': { who: 'any', raw: uploadBody },
  'GET /api/files/:id': fileReadRow(),
  'GET /api/files/:id/details': fileReadRow('/details'),
  'PATCH /api/files/:id': fileWriteRow(() => ({ Name: 'renamed', Desc: 'changed' })),
  'POST /api/files/:id': fileWriteRow(undefined, uploadBody),
  'PUT /api/files/:id': fileWriteRow(undefined, uploadBody),
  'DELETE /api/files/:id': fileWriteRow(),
  'POST /api/ingest/json': { who: 'any', body: () => [{ Tag: 'matrix', Data: 'aGk=' }] },
  'PUT /api/ingest/json': { who: 'any', body: () => [{ Tag: 'matrix', Data: 'aGk=' }] },
  'POST /api/ingest/otlp/v1/logs': { who: 'any', body: () => ({ resourceLogs: [] }) },
  'POST /api/ingest/loki/api/v1/push': { who: 'any', body: () => ({ streams: [{ stream: { job: 'matrix' }, values: [['1767225600000000000', 'hi']] }] }), ok: 204 },
  'POST /api/ingest/lines': {
    who: 'any',
    raw: () => ({ ...uploadBody(), body: `--${UPLOAD_BOUNDARY}\r\nContent-Disposition: form-data; name="tag"\r\n\r\nmatrix\r\n${uploadBody().body}` }),
  },
  'POST /api/searchctrl/launch': { who: 'any', body: () => ({ SearchString: 'tag=matrix grep x' }) },
  'POST /api/parse': { who: 'any', body: () => ({ SearchString: 'tag=matrix grep x', Sequence: 1 }) },
  'GET /api/searchctrl': { who: 'any' },
  'GET /api/searchctrl/all': { who: 'admin' },
  'GET /api/admin/retention': { who: 'admin' },
  'PUT /api/admin/retention': { who: 'admin', body: () => ({ Rules: [{ Tag: 'web', MaxAgeMs: 86_400_000, MaxBytes: null }] }) },
  'POST /api/admin/entries/delete': { who: 'admin', body: () => ({ Tag: 'web', Start: '2026-01-01T00:00:00Z', End: '2026-01-02T00:00:00Z' }) },
  'GET /api/admin/entries/deletions': { who: 'admin' },
  'GET /api/searchctrl/:id': searchViewRow(),
  'GET /api/searchctrl/:id/details': searchViewRow('/details'),
  'PATCH /api/searchctrl/:id/background': searchViewRow('/background'),
  'PATCH /api/searchctrl/:id/save': searchViewRow('/save'),
  'PUT /api/searchctrl/:id/attach': searchViewRow('/attach'),
  'PUT /api/searchctrl/:id/detach': searchViewRow('/detach'),
  'GET /api/searchctrl/:id/download/:format': searchViewRow('/download/json'),
  'PUT /api/searchctrl/:id/stop': searchModifyRow('/stop'),
  'DELETE /api/searchctrl/:id': searchModifyRow(),
  'POST /api/searchctrl/import': { who: 'any', raw: importBody },
  'GET /api/searchhistory': { who: 'any' },
  'GET /api/stats/ping': { who: 'any' },
  'GET /api/stats/sysDesc': { who: 'any' },
  'GET /api/notifications': { who: 'any' },
  'POST /api/notifications/broadcast': { who: 'admin', body: () => ({ Msg: 'matrix' }) },
  'POST /api/notifications/targeted/self': { who: 'any', body: () => ({ Msg: 'matrix' }) },
  // to the fixture group: its members and admins (a stranger may not write into the group's lists)
  'POST /api/notifications/targeted': { who: 'member', body: (f) => ({ Msg: 'matrix', GID: f.gid }) },
  'PUT /api/notifications/:id': notificationRow(() => ({ Msg: 'changed' })),
  'DELETE /api/notifications/:id': notificationRow(),
  'GET /api/dashboards': { who: 'any' },
  'GET /api/dashboards/all': { who: 'any' },
  'POST /api/dashboards': { who: 'any', body: () => ({ Name: 'new', Description: '', GIDs: [], Global: false, Data: { tiles: [] } }) },
  'GET /api/dashboards/:id': dashboardReadRow,
  'PUT /api/dashboards/:id': dashboardWriteRow(() => ({ Name: 'renamed', Data: { version: 2 } })),
  'DELETE /api/dashboards/:id': dashboardWriteRow(),
  'GET /api/users/:id/dashboards': { who: 'self' },
  'GET /api/groups/:gid/dashboards': { who: 'member' },
  'GET /api/library': { who: 'any' },
  'POST /api/library': { who: 'any', body: () => ({ Name: 'new', Query: 'tag=x', Metadata: { a: 1 } }) },
  'GET /api/library/:id': entryReadRow,
  'PUT /api/library/:id': entryWriteRow(() => ({ Name: 'renamed', Query: 'tag=y' })),
  'DELETE /api/library/:id': entryWriteRow(),
  'GET /api/autoextractors': { who: 'any' },
  'GET /api/autoextractors/engines': { who: 'any' },
  'POST /api/autoextractors': { who: 'any', body: () => ({ Name: 'new', Tag: 'web', Module: 'regex', Params: '(?P<x>.)' }) },
  // the body names the definition made for this call: read when the request is sent, after the path made it
  'PUT /api/autoextractors': extractorWriteRow(false, () => ({ get UUID() { return lastExtractor }, Name: 'renamed' })),
  'POST /api/autoextractors/test': { who: 'any', body: () => ({ Tag: 'web', Module: 'regex', Params: '(?P<x>.)' }) },
  'POST /api/explore/generate': { who: 'any', body: () => ({ Tag: 'web', Entries: [{ Data: 'eyJ4IjogMX0=' }] }) },
  'GET /api/autoextractors/download': { who: 'any' },
  'POST /api/autoextractors/upload': { who: 'any', raw: extractorFile },
  'GET /api/autoextractors/:id': extractorReadRow,
  'DELETE /api/autoextractors/:id': extractorWriteRow(),
}

/**
 * WebSocket routes (method WS, reached by the GET of an upgrade) are not rows of the matrix: app.handle cannot
 * upgrade, so what a permitted caller gets there is not what a client gets. Their permission is checked here, their
 * refusals below (the same guard runs before the upgrade), and permitted callers over real sockets (by JWT as
 * subprotocol and as header, by API token with and without the permission) in plugins/ws/ws.test.ts.
 */
const WEBSOCKET_ROUTES: Record<string, string> = {
  'WS /api/ws/search': 'Search',
  'WS /api/ws/stats': 'Stats',
  // the search socket for other replicas: the cluster secret first (plugins/cluster/cluster.test.ts), then as above
  'WS /api/internal/ws/search': 'Search',
}

type Role = 'stranger' | 'member' | 'owner' | 'admin'
/** Admin last: its call may delete the fixtures the others need. */
const ROLES: Role[] = ['stranger', 'member', 'owner', 'admin']

function allowed(who: Who, role: Role): boolean {
  switch (who) {
    case 'any':
      return true
    case 'admin':
      return role === 'admin'
    case 'self':
      return role === 'owner' || role === 'admin'
    case 'member':
      return role !== 'stranger'
  }
}

interface Fixture {
  server: TestServer
  /** JWT per role. */
  jwt: Record<Role, string>
  ownerUid: number
  ownerName: string
  ownerPass: string
  ownerJwt: string
  gid: number
  /** Creates a token through the API for the holder of `jwt`; answers its id (and keeps its secret). */
  makeToken(jwt: string, capabilities: string[], expiresAt?: string): Promise<string>
  secrets: Map<string, string>
}

/** owner and member share group gid; stranger is in no group; admin is UID 1. */
async function fixture(): Promise<Fixture> {
  const server = await createTestServer()
  const owner = await server.createUser()
  const member = await server.createUser()
  const stranger = await server.createUser()
  const gid = await server.createGroup('shared', [owner.uid, member.uid])
  const secrets = new Map<string, string>()
  return {
    server,
    jwt: { stranger: stranger.jwt, member: member.jwt, owner: owner.jwt, admin: server.adminJwt },
    ownerUid: owner.uid,
    ownerName: owner.User,
    ownerPass: owner.Pass,
    ownerJwt: owner.jwt,
    gid,
    secrets,
    async makeToken(jwt, capabilities, expiresAt) {
      const res = await server.call('POST', '/api/tokens', { jwt, json: { name: 'matrix', capabilities, expiresAt } })
      if (res.status !== 200) throw new Error(`token creation failed: ${res.status} ${res.text}`)
      secrets.set(res.body.id, res.body.token)
      return res.body.id as string
    },
  }
}

/** A permission no matrix route declares, for tokens that must lack the route's. */
const UNRELATED = 'KitBuild'

const probe = await createTestServer()
const routes = apiRoutes(probe.app)
probe.close()

/**
 * The shippers' protocol routes (Elasticsearch bulk, Splunk HEC) answer in their protocol's shape, not {"Error"}, and
 * Splunk's statuses differ (an invalid token is 403): the same callers as the matrix's are run against each of them in
 * test/ingest-elastic.test.ts and test/ingest-splunk.test.ts ("every caller"), which find the routes the same way.
 */
const isProtocolRoute = (key: string) => / \/api\/ingest\/(elastic|splunk)(\/|$)/.test(key)

describe('every route is accounted for', () => {
  test('each route is public or declares a permission, never both', () => {
    for (const r of routes) {
      const isPublic = PUBLIC_ROUTES.has(r.key)
      expect({ route: r.key, declared: isPublic !== (r.permission !== undefined) }).toEqual({ route: r.key, declared: true })
    }
  })

  test('each protected route has a row in the matrix, and each row names a route', () => {
    const protectedKeys = routes.filter((r) => !PUBLIC_ROUTES.has(r.key) && r.method !== 'WS' && !isProtocolRoute(r.key)).map((r) => r.key).sort()
    expect(protectedKeys).toEqual(Object.keys(MATRIX).sort())
  })

  test('the WebSocket routes are exactly WEBSOCKET_ROUTES, each with its permission', () => {
    const ws = Object.fromEntries(routes.filter((r) => r.method === 'WS').map((r) => [r.key, r.permission]))
    expect(ws).toEqual(WEBSOCKET_ROUTES)
  })

  test('the routes taking the JWT from a cookie are the download routes and the search import', () => {
    expect(routes.filter((r) => r.cookie).map((r) => r.key).sort()).toEqual([
      'GET /api/files/:id',
      'GET /api/resources/:guid/raw',
      'GET /api/searchctrl/:id/download/:format',
      'POST /api/searchctrl/import',
    ])
  })

  test("routes open to every token ('self') are exactly SELF_ROUTES; none of them changes anything", () => {
    const open = routes.filter((r) => r.permission === 'self').map((r) => r.key).sort()
    expect(open).toEqual([...SELF_ROUTES].sort())
    for (const key of open) expect(key.startsWith('GET ')).toBe(true)
  })

  test('rows that say admin match routes declaring the admin permission', () => {
    for (const r of routes.filter((r) => !PUBLIC_ROUTES.has(r.key) && r.method !== 'WS' && !isProtocolRoute(r.key)))
      expect({ route: r.key, admin: r.permission === 'admin' }).toEqual({ route: r.key, admin: MATRIX[r.key]!.who === 'admin' })
  })
})

describe('public routes answer anonymous callers', () => {
  for (const key of PUBLIC_ROUTES) {
    test(key, async () => {
      const server = await createTestServer()
      const [method, path] = key.split(' ') as [string, string]
      const res = await server.call(method, path, method === 'POST' ? { json: { User: 'admin', Pass: 'wrong' } } : {})
      expect(res.status).not.toBe(401)
      expect(res.status).not.toBe(403)
      server.close()
    })
  }
})

describe('route × caller matrix', () => {
  for (const [key, row] of Object.entries(MATRIX)) {
    const route = routes.find((r) => r.key === key)!
    const permission = route.permission as string
    test(key, async () => {
      const f = await fixture()
      const [method, pattern] = key.split(' ') as [string, string]
      const pathFor = () => (row.path ? row.path(f) : Promise.resolve(pattern.replace(':id', String(f.ownerUid)).replace(':gid', String(f.gid))))
      const json = row.body?.(f)
      const deny = row.deny ?? 403
      const outcome: Record<string, number> = {}
      const expected: Record<string, number> = {}
      const record = async (name: string, want: number, opts: CallOptions, path?: string) => {
        const raw = row.raw?.()
        const res = await f.server.call(method, path ?? (await pathFor()), { json, ...raw, ...opts, headers: { ...raw?.headers, ...opts.headers } })
        outcome[name] = res.status
        expected[name] = want
        if (res.status >= 400) expect(typeof res.body?.Error).toBe('string')
        return res
      }
      const withToken = (id: string) => ({ headers: { 'Service-Token': f.secrets.get(id)! } })

      await record('anonymous', 401, {})
      await record('garbageJwt', 401, { jwt: 'not.a.jwt' })
      await record('garbageToken', 401, { headers: { 'Service-Token': 'not-a-token' } })

      // Tokens of the owner. A token is refused where only a session or an admin may go; elsewhere it passes
      // exactly when it lists the route's permission ('self' routes need none), and then acts as its owner.
      const tokenRefused = permission === 'admin' || permission === 'session'
      const ok = row.ok ?? 200
      const asOwner = allowed(row.who, 'owner') ? ok : deny
      const granted = permission === 'self' || tokenRefused ? [UNRELATED] : [permission, ...(row.tokenAlso ?? [])]
      const withIt = await f.makeToken(f.ownerJwt, granted)
      await record('tokenWithPermission', tokenRefused ? 403 : asOwner, withToken(withIt))
      if (!tokenRefused && permission !== 'self') {
        const without = await f.makeToken(f.ownerJwt, [UNRELATED])
        const res = await record('tokenWithoutPermission', 403, withToken(without))
        expect(res.body.Cap).toBe(permission)
      }
      const expiring = await f.makeToken(f.ownerJwt, granted, new Date(f.server.clock.now() + 1000).toISOString())
      f.server.clock.advance(1000)
      await record('expiredToken', 401, withToken(expiring))
      const lockedOwners = await f.makeToken(f.ownerJwt, granted)
      const path = await pathFor()
      await f.server.store.users.update(f.ownerUid, { locked: true })
      await record('tokenOfLockedOwner', 401, withToken(lockedOwners), path)
      await f.server.store.users.update(f.ownerUid, { locked: false })
      f.ownerJwt = f.jwt.owner = await f.server.login(f.ownerName, f.ownerPass)
      if (permission === 'admin') {
        const adminToken = await f.makeToken(f.server.adminJwt, CAPABILITY_NAMES)
        await record('adminsToken', 403, withToken(adminToken))
      }

      // The owner's JWT as cookie `token`, where the route takes one: from this server's page it acts as the owner; a
      // request that changes something, sent from another site or without saying where from, is refused with 403.
      if (route.cookie) {
        const owner = allowed(row.who, 'owner') ? ok : deny
        const unsafe = method !== 'GET' && method !== 'HEAD'
        await record('cookieFromOtherSite', unsafe ? 403 : owner, { headers: { cookie: `token=${f.ownerJwt}`, origin: 'https://evil.example' } })
        await record('cookieFromNowhere', unsafe ? 403 : owner, { headers: { cookie: `token=${f.ownerJwt}` } })
        await record('cookieFromOwnPage', owner, { headers: { cookie: `token=${encodeURIComponent(f.ownerJwt)}`, origin: 'http://localhost' } })
        await record('cookieMalformed', 401, { headers: { cookie: 'token=%E0%A4%A', origin: 'http://localhost' } })
      }

      // Logins: admin last, as its call may delete what the others need.
      for (const role of ROLES) await record(role, allowed(row.who, role) ? ok : deny, { jwt: f.jwt[role] })
      expect(outcome).toEqual(expected)
      f.server.close()
    })
  }
})

describe('WebSocket upgrades refuse callers before upgrading', () => {
  const upgrade = { upgrade: 'websocket', connection: 'Upgrade', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' }
  // The internal socket refuses every caller without the cluster secret before this guard (plugins/cluster tests).
  for (const [key, permission] of Object.entries(WEBSOCKET_ROUTES).filter(([k]) => !k.includes('/api/internal/'))) {
    test(key, async () => {
      const f = await fixture()
      const path = key.split(' ')[1]!
      const outcome: Record<string, number> = {}
      const record = async (name: string, headers: Record<string, string>) => {
        const res = await f.server.call('GET', path, { headers: { ...upgrade, ...headers } })
        outcome[name] = res.status
        if (res.status > 400) expect(typeof res.body?.Error).toBe('string')
        return res
      }
      const token = (id: string) => ({ 'Service-Token': f.secrets.get(id)! })
      await record('anonymous', {})
      await record('garbageJwt', { authorization: 'Bearer not.a.jwt' })
      await record('garbageSubprotocol', { 'sec-websocket-protocol': 'not.a.jwt' })
      await record('garbageToken', { 'Service-Token': 'not-a-token' })
      const without = await record('tokenWithoutPermission', token(await f.makeToken(f.ownerJwt, [UNRELATED])))
      expect(without.body.Cap).toBe(permission)
      const expiring = await f.makeToken(f.ownerJwt, [permission], new Date(f.server.clock.now() + 1000).toISOString())
      f.server.clock.advance(1000)
      await record('expiredToken', token(expiring))
      const locked = await f.makeToken(f.ownerJwt, [permission])
      await f.server.store.users.update(f.ownerUid, { locked: true })
      await record('tokenOfLockedOwner', token(locked))
      await f.server.store.users.update(f.ownerUid, { locked: false })
      // Admitted callers reach the upgrade itself, which app.handle (no listening server) cannot do: 400.
      const owner = await f.server.login(f.ownerName, f.ownerPass)
      await record('ownerBySubprotocol', { 'sec-websocket-protocol': owner })
      await record('tokenWithPermission', token(await f.makeToken(owner, [permission])))
      expect(outcome).toEqual({
        anonymous: 401,
        garbageJwt: 401,
        garbageSubprotocol: 401,
        garbageToken: 401,
        tokenWithoutPermission: 403,
        expiredToken: 401,
        tokenOfLockedOwner: 401,
        ownerBySubprotocol: 400,
        tokenWithPermission: 400,
      })
      f.server.close()
    })
  }
})
