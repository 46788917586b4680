// The per-request work Quarry does for the three compared paths, written once for both baselines (raw Bun.serve +
// bun:sqlite in raw-bun.ts, Fastify + better-sqlite3 on Node in fastify.mjs), so that they differ from Quarry only in
// the server around it. Plain JavaScript so that Node 20 runs it without a build step.
//
// Per request, as Quarry (plugins/auth/service.ts, plugins/users, plugins/groups, plugins/dashboards):
//   - the credential: `Authorization: Bearer <JWT>`; its HS256 signature verified once and then remembered for the
//     token's life (Quarry's `verified` map), the expiry checked on every request;
//   - the session row joined with the user row (`= +?`), the session's lifetime and idle timeout, the user's lock;
//   - the session and user touched at most once a second (two UPDATEs);
//   - whoami: the groups of the user; the UserDetails JSON in Quarry's member order;
//   - GET /api/dashboards/{id}: the dashboard with its sharing list and whether the caller shares it, reach checked
//     (owner, group, global, admin), 404 otherwise; the dashboard JSON with Data spliced in as stored;
//   - GET /api/dashboards: the visible ones (Quarry's VISIBLE_DASHBOARDS_SQL), the same JSON per row.
// Every SQL text is Quarry's word for word (plugins/*/repo.ts): keep them in step, or the ratios stop meaning
// "Quarry's framework and code around the same queries". bench/compare/run.sh checks that the answers are equal.
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto'

const USER_COLS = ['uid', 'username', 'name', 'email', 'password_hash', 'admin', 'locked', 'search_gid', 'last_active']
const userColumns = (a) => USER_COLS.map((c) => `${a}.${c} AS ${c}`).join(', ')

export const SQL = {
  sessionWithUser: `SELECT s.id AS id, s.created AS created, s.last_hit AS last_hit, s.expires AS expires, s.origin AS origin, s.temp AS temp, ${userColumns('u')}
         FROM sessions s JOIN users u ON u.uid = s.uid WHERE s.id = +?`,
  touchSession: 'UPDATE sessions SET last_hit = ? WHERE id = ?',
  touchUser: 'UPDATE users SET last_active = ? WHERE uid = ?',
  groupsOf: 'SELECT g.gid AS gid, g.name AS name, g.description AS description FROM user_groups m JOIN groups g ON g.gid = m.gid WHERE m.uid = +? ORDER BY m.gid',
}
const DCOLS = `d.id AS id, d.guid AS guid, d.uid AS uid, d.name AS name, d.description AS description,
  d.global AS global, d.labels AS labels, d.data AS data, d.created AS created, d.updated AS updated,
  (SELECT coalesce(json_group_array(gid), '[]') FROM (SELECT g.gid AS gid FROM dashboard_gids g WHERE g.id = d.id ORDER BY g.gid)) AS gids`
const SHARED = `EXISTS (SELECT 1 FROM dashboard_gids g JOIN user_groups m ON m.gid = g.gid WHERE g.id = d.id AND m.uid = +?1) AS shared`
SQL.dashboardById = `SELECT ${DCOLS}, ${SHARED} FROM dashboards d WHERE d.id = ?2`
SQL.visibleDashboards = `SELECT ${DCOLS} FROM dashboards d WHERE d.id IN (
    SELECT id FROM dashboards WHERE uid = ?1
    UNION SELECT id FROM dashboards WHERE global = 1
    UNION SELECT g.id FROM user_groups m JOIN dashboard_gids g ON g.gid = m.gid WHERE m.uid = +?1)
  ORDER BY d.created, d.id`

const TOUCH_INTERVAL_MS = 1000
const SESSION_IDLE_MS = 60 * 60 * 1000 // QUARRY_SESSION_IDLE_TIMEOUT's default
const ZERO_TIME = '0001-01-01T00:00:00Z'
const formatTime = (ms) => (ms ? new Date(ms).toISOString() : ZERO_TIME)

/** A refusal as Quarry answers it. */
class Refusal {
  constructor(status, message) {
    this.status = status
    this.body = JSON.stringify({ Error: message })
  }
}

/**
 * The three handlers over one connection. `prepare(sql)` answers a statement with get(...params), all(...params)
 * and run(...params) (bun:sqlite's query and better-sqlite3's prepare both do). Each handler answers
 * { status, body } with a JSON text body.
 */
export function makeWork(prepare, signingKey) {
  const q = Object.fromEntries(Object.entries(SQL).map(([k, sql]) => [k, prepare(sql)]))
  const secret = Buffer.from(signingKey)
  const verified = new Map()

  function claimsOf(token) {
    const now = Date.now() / 1000
    const known = verified.get(token)
    if (known) {
      if (known.exp > now) return known
      verified.delete(token)
      return undefined
    }
    const parts = token.split('.')
    if (parts.length !== 3) return undefined
    const mac = createHmac('sha256', secret).update(`${parts[0]}.${parts[1]}`).digest()
    const sig = Buffer.from(parts[2], 'base64url')
    if (sig.length !== mac.length || !timingSafeEqual(sig, mac)) return undefined
    if (JSON.parse(Buffer.from(parts[0], 'base64url').toString()).alg !== 'HS256') return undefined
    const p = JSON.parse(Buffer.from(parts[1], 'base64url').toString())
    if (typeof p.jti !== 'string' || typeof p.sub !== 'string' || typeof p.exp !== 'number' || p.exp <= now) return undefined
    const claims = { sub: p.sub, jti: p.jti, exp: p.exp }
    if (verified.size >= 10000) verified.delete(verified.keys().next().value)
    verified.set(token, claims)
    return claims
  }

  /** The caller's user row, or a 401 Refusal. */
  function caller(authorization) {
    const m = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null
    if (!m) throw new Refusal(401, 'authentication required')
    const claims = claimsOf(m[1])
    if (!claims) throw new Refusal(401, 'invalid or expired token')
    const now = Date.now()
    const r = q.sessionWithUser.get(claims.jti)
    if (!r || String(r.uid) !== claims.sub) throw new Refusal(401, 'session has ended')
    if (!(r.expires > now && (r.temp === 1 || now - r.last_hit < SESSION_IDLE_MS))) throw new Refusal(401, 'session has expired')
    if (r.locked === 1) throw new Refusal(401, 'session has ended')
    if (now - r.last_hit >= TOUCH_INTERVAL_MS) {
      q.touchSession.run(now, r.id)
      q.touchUser.run(now, r.uid)
      r.last_active = now
    }
    return r
  }

  function dashboardJson(d) {
    const head = JSON.stringify({
      ID: d.id,
      GUID: d.guid,
      Name: d.name,
      Description: d.description,
      UID: d.uid,
      GIDs: JSON.parse(d.gids),
      Global: d.global === 1,
      Created: formatTime(d.created),
      Updated: formatTime(d.updated),
      Labels: JSON.parse(d.labels),
    })
    return `${head.slice(0, -1)},"Data":${d.data},"Synced":false}`
  }

  const answer = (fn) => (...args) => {
    try {
      return { status: 200, body: fn(...args) }
    } catch (e) {
      if (e instanceof Refusal) return e
      throw e
    }
  }

  return {
    whoami: answer((authorization) => {
      const u = caller(authorization)
      return JSON.stringify({
        UID: u.uid,
        User: u.username,
        Name: u.name,
        Email: u.email,
        Admin: u.admin === 1,
        Locked: u.locked === 1,
        ...(u.search_gid ? { DefaultGID: u.search_gid } : {}),
        TS: formatTime(u.last_active),
        Synced: false,
        Groups: q.groupsOf.all(u.uid).map((g) => ({ GID: g.gid, Name: g.name, Desc: g.description, Synced: false })),
      })
    }),
    dashboard: answer((authorization, rawId) => {
      const u = caller(authorization)
      // The compared path uses the numeric ID; a GUID would take Quarry's byGuid query, not compared here.
      if (!/^\d+$/.test(rawId)) throw new Refusal(400, 'invalid dashboard id: expected the numeric ID')
      const id = Number(rawId)
      const d = Number.isSafeInteger(id) ? q.dashboardById.get(u.uid, id) : undefined
      if (!d || !(d.uid === u.uid || d.shared === 1 || d.global === 1 || u.admin === 1)) throw new Refusal(404, 'dashboard not found')
      return dashboardJson(d)
    }),
    dashboards: answer((authorization) => {
      const u = caller(authorization)
      return `[${q.visibleDashboards.all(u.uid).map(dashboardJson).join(',')}]`
    }),
  }
}

export const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * The headers of each of Quarry's answers (server/http/headers.ts API_HEADERS and server/http/request-log.ts), which a baseline
 * must send too to do Quarry's work: copied here for Node, and checked equal to Quarry's by bench/compare/run.sh
 * before loading (bench/lib.ts body prints them).
 */
const API_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'; sandbox",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
}
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/

/** An answer's headers: the security headers, the JSON type and the request id (the client's when safe, else a new UUID). */
export function answerHeaders(sentRequestId) {
  return { ...API_HEADERS, 'content-type': JSON_TYPE, 'x-request-id': typeof sentRequestId === 'string' && REQUEST_ID.test(sentRequestId) ? sentRequestId : randomUUID() }
}
