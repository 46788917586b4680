// Baseline for bench/whoami.sh: a bare Bun.serve answering GET /api/info/whoami with the same JSON as Quarry
// (user row + groups, shape of plugins/users/schema.ts UserDetails) from the same SQLite file, with prepared
// statements and no framework. It is a ceiling, not a server: nothing here is meant to be reused.
//
//   BARE_DB=<path to quarry.db> BARE_PORT=<port> bun run bench/bare-whoami.ts
//
// BARE_AUTH picks how much of Quarry's per-request authentication it also does (for profiling):
//   none      no auth at all; always answers UID 1 (default, the baseline of the benchmark)
//   jose      + verify the Bearer JWT with jose.jwtVerify and a Uint8Array secret, as @elysiajs/jwt does
//   jose-key  + the same with a CryptoKey imported once at start
//   hmac      + verify HS256 synchronously with node:crypto createHmac (no WebCrypto, no jose)
//   full      jose as above + session row lookup + user row lookup: Quarry's authenticate() without Elysia
//   full-hmac hmac + session row lookup + user row lookup
// The groups query is the one of plugins/groups/repo.ts groupsOf, word for word: keep the two in step,
// or the ratio stops meaning "framework + auth overhead".
import { Database } from 'bun:sqlite'
import { createHmac, timingSafeEqual } from 'node:crypto'
import { jwtVerify } from 'jose'

type Mode = 'none' | 'jose' | 'jose-key' | 'hmac' | 'full' | 'full-hmac'
const MODES: Mode[] = ['none', 'jose', 'jose-key', 'hmac', 'full', 'full-hmac']

const dbPath = process.env.BARE_DB
const port = Number(process.env.BARE_PORT ?? 0)
const mode = (process.env.BARE_AUTH ?? 'none') as Mode
if (!dbPath) throw new Error('BARE_DB is required')
if (!MODES.includes(mode)) throw new Error(`BARE_AUTH must be one of ${MODES.join(', ')}`)

const db = new Database(dbPath, { readonly: false, strict: true })
db.run('PRAGMA journal_mode = WAL')
db.run('PRAGMA busy_timeout = 5000')

interface UserDbRow {
  uid: number
  username: string
  name: string
  email: string
  admin: number
  locked: number
  search_gid: number | null
  last_active: number
}
interface GroupDbRow {
  gid: number
  name: string
  description: string
}

const userQ = db.query<UserDbRow, [number]>(
  'SELECT uid, username, name, email, admin, locked, search_gid, last_active FROM users WHERE uid = ?',
)
const groupsQ = db.query<GroupDbRow, [number]>(
  'SELECT g.gid AS gid, g.name AS name, g.description AS description FROM user_groups m JOIN groups g ON g.gid = m.gid WHERE m.uid = +? ORDER BY m.gid',
)
const sessionQ = db.query<{ uid: number; expires: number }, [string]>('SELECT uid, expires FROM sessions WHERE id = ?')

const secretText = db.query<{ value: string }, [string]>('SELECT value FROM server_settings WHERE key = ?').get('jwt_signing_key')?.value
if (mode !== 'none' && !secretText) throw new Error('no jwt_signing_key in the store')
const secretBytes = new TextEncoder().encode(secretText ?? '')
const cryptoKey =
  mode === 'jose-key'
    ? await crypto.subtle.importKey('raw', secretBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify'])
    : undefined

const ZERO_TIME = '0001-01-01T00:00:00Z'
const unauthorized = () =>
  new Response('{"Error":"authentication required"}', { status: 401, headers: { 'content-type': 'application/json' } })

function bearer(req: Request): string | undefined {
  const h = req.headers.get('authorization')
  return h?.startsWith('Bearer ') ? h.slice(7).trim() : undefined
}

/** HS256 verify without WebCrypto: answers the payload or undefined. */
function verifyHmac(token: string): Record<string, unknown> | undefined {
  const parts = token.split('.')
  if (parts.length !== 3) return undefined
  const mac = createHmac('sha256', secretBytes).update(`${parts[0]}.${parts[1]}`).digest()
  const sig = Buffer.from(parts[2]!, 'base64url')
  if (sig.length !== mac.length || !timingSafeEqual(sig, mac)) return undefined
  const header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString())
  if (header.alg !== 'HS256') return undefined
  const payload = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString())
  if (typeof payload.exp === 'number' && payload.exp * 1000 <= Date.now()) return undefined
  return payload
}

/** The UID the request is answered for, or undefined for 401. */
async function callerUid(req: Request): Promise<number | undefined> {
  if (mode === 'none') return 1
  const token = bearer(req)
  if (!token) return undefined
  let claims: Record<string, unknown> | undefined
  if (mode === 'hmac' || mode === 'full-hmac') claims = verifyHmac(token)
  else {
    try {
      claims = (await jwtVerify(token, cryptoKey ?? secretBytes, { algorithms: ['HS256'] })).payload
    } catch {
      return undefined
    }
  }
  if (!claims || typeof claims.sub !== 'string' || typeof claims.jti !== 'string') return undefined
  if (mode === 'full' || mode === 'full-hmac') {
    const s = sessionQ.get(claims.jti)
    if (!s || String(s.uid) !== claims.sub || s.expires <= Date.now()) return undefined
  }
  return Number(claims.sub)
}

async function whoami(req: Request): Promise<Response> {
  const uid = await callerUid(req)
  if (uid === undefined) return unauthorized()
  const u = userQ.get(uid)
  if (!u || u.locked) return unauthorized()
  const body = {
    UID: u.uid,
    User: u.username,
    Name: u.name,
    Email: u.email,
    Admin: u.admin === 1,
    Locked: u.locked === 1,
    ...(u.search_gid ? { DefaultGID: u.search_gid } : {}),
    TS: u.last_active ? new Date(u.last_active).toISOString() : ZERO_TIME,
    Synced: false,
    Groups: groupsQ.all(u.uid).map((g) => ({ GID: g.gid, Name: g.name, Desc: g.description, Synced: false })),
  }
  return Response.json(body)
}

const server = Bun.serve({
  hostname: '127.0.0.1',
  port,
  routes: { '/api/info/whoami': { GET: whoami } },
  fetch: () => new Response('{"Error":"no such route"}', { status: 404, headers: { 'content-type': 'application/json' } }),
})
console.log(`bare-whoami listening on http://127.0.0.1:${server.port} (auth: ${mode}, groups query: ${process.env.BARE_GROUPS ?? 'join'})`)

const stop = () => {
  server.stop(true)
  db.close()
  process.exit(0)
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
