// Seeds a Quarry store for bench/listing.sh.
//
//   bun run bench/listing-seed.ts user <base-url> <admin-password>   through the running server's API: creates
//       the measured user `bench` and its group `bench-team`; prints "<uid> <gid>"
//   bun run bench/listing-seed.ts rows <db-path> <others> <uid> <gid>   straight into the SQLite file, with no
//       server running: 1,000 other users in 1,000 other groups; <others> dashboards and <others> library
//       entries of those users (half shared with one of the other groups, 1 % of the entries global); and what
//       the measured user sees: 100 dashboards (40 own, 30 of others shared with its group, 30 global of others)
//       and 100 library entries of its own (the library listing is own entries only). Then checks the
//       query plans of both listings: no store-sized table may be scanned.
//   bun run bench/listing-seed.ts login <base-url>   prints a JWT of the measured user
import { openDatabase } from '../server/store/db'
import { VISIBLE_DASHBOARDS_SQL, randomDashboardId } from '../plugins/dashboards/repo'
import { OWNED_ENTRIES_SQL } from '../plugins/library/repo'

const OTHER_USERS = 1000
const BENCH_PASSWORD = 'bench-listing-password'
const [cmd, ...args] = process.argv.slice(2)

function usage(): never {
  console.error('usage: bench/listing-seed.ts user <base> <admin-password> | rows <db> <others> <uid> <gid> | login <base>')
  process.exit(2)
}

async function api(base: string, method: string, path: string, jwt: string | undefined, body?: unknown): Promise<any> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(jwt ? { authorization: `Bearer ${jwt}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status}: ${text}`)
  return JSON.parse(text)
}

/** `n` distinct values from `make`, ascending, so that inserts append to the primary key's b-tree. */
function sortedDistinct<T extends number | string>(n: number, make: () => T): T[] {
  const set = new Set<T>()
  while (set.size < n) set.add(make())
  return [...set].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
}

const DATA = (i: number) =>
  `{"version":2,"timeframe":{"durationString":"PT1H","timeframe":"PT1H","start":null,"end":null},"searches":[{"alias":"s${i}","query":"tag=syslog count"}],"tiles":[{"id":${i},"title":"t","renderer":"chart","span":{"col":4,"row":4,"x":0,"y":0},"searchesIndex":0,"rendererOptions":{}}]}`

function seedRows(dbPath: string, others: number, benchUid: number, benchGid: number) {
  const db = openDatabase(dbPath)
  // Nothing else has the file open: no journal while seeding (a crash here only loses the benchmark's store),
  // and a large page cache for the secondary indexes, whose keys land all over their b-trees.
  db.run('PRAGMA journal_mode = OFF')
  db.run('PRAGMA synchronous = OFF')
  db.run('PRAGMA cache_size = -400000')
  const now = Date.now()
  const t0 = performance.now()

  const otherUids: number[] = []
  const otherGids: number[] = []
  db.transaction(() => {
    const user = db.query<{ uid: number }, [string, number]>(
      "INSERT INTO users (username, name, email, password_hash, created) VALUES (?, 'Other', 'other@localhost', '!', ?) RETURNING uid",
    )
    const group = db.query<{ gid: number }, [string]>("INSERT INTO groups (name, description) VALUES (?, '') RETURNING gid")
    const member = db.query('INSERT INTO user_groups (uid, gid) VALUES (?, ?)')
    for (let i = 0; i < OTHER_USERS; i++) {
      const uid = user.get(`other-${i}`, now)!.uid
      const gid = group.get(`other-group-${i}`)!.gid
      member.run(uid, gid)
      otherUids.push(uid)
      otherGids.push(gid)
    }
  })()

  // Each row: owner, name, and optionally global or one group it is shared with.
  type Spec = { uid: number; name: string; i: number; global?: boolean; gid?: number }
  const otherSpec = (i: number, withGlobal: boolean): Spec => ({
    uid: otherUids[i % OTHER_USERS]!,
    name: `other ${i}`,
    i,
    ...(i % 2 ? { gid: otherGids[(i * 7) % OTHER_USERS] } : { global: withGlobal && i % 100 === 0 }),
  })

  const dashboards: Spec[] = []
  for (let i = 0; i < others; i++) dashboards.push(otherSpec(i, false))
  for (let i = 0; i < 40; i++) dashboards.push({ uid: benchUid, name: `own ${i}`, i })
  for (let i = 0; i < 30; i++) dashboards.push({ uid: otherUids[i]!, name: `shared ${i}`, i, gid: benchGid })
  for (let i = 0; i < 30; i++) dashboards.push({ uid: otherUids[i]!, name: `global ${i}`, i, global: true })
  const ids = sortedDistinct(dashboards.length, randomDashboardId)
  db.transaction(() => {
    const insert = db.query(
      `INSERT INTO dashboards (id, guid, uid, name, description, global, labels, data, created, updated) VALUES (?, ?, ?, ?, '', ?, '[]', ?, ?, ?)`,
    )
    const share = db.query('INSERT INTO dashboard_gids (id, gid) VALUES (?, ?)')
    dashboards.forEach((d, k) => {
      insert.run(ids[k]!, crypto.randomUUID(), d.uid, d.name, d.global ? 1 : 0, DATA(d.i), now + d.i, now + d.i)
      if (d.gid !== undefined) share.run(ids[k]!, d.gid)
    })
  })()
  const t1 = performance.now()

  const entries: Spec[] = []
  for (let i = 0; i < others; i++) entries.push(otherSpec(i, true))
  for (let i = 0; i < 100; i++) entries.push({ uid: benchUid, name: `own ${i}`, i, ...(i % 3 ? {} : { gid: benchGid }) })
  const things = sortedDistinct(entries.length, () => crypto.randomUUID())
  db.transaction(() => {
    const insert = db.query(
      `INSERT INTO library (thing_uuid, guid, uid, name, description, query, global, labels, metadata, updated) VALUES (?, ?, ?, ?, '', ?, ?, '["bench"]', ?, ?)`,
    )
    const share = db.query('INSERT INTO library_gids (thing_uuid, gid) VALUES (?, ?)')
    entries.forEach((e, k) => {
      insert.run(things[k]!, crypto.randomUUID(), e.uid, e.name, `tag=syslog grep -e error${e.i} | count`, e.global ? 1 : 0, `{"n":${e.i},"big":12345678901234567890}`, now + e.i)
      if (e.gid !== undefined) share.run(things[k]!, e.gid)
    })
  })()
  const t2 = performance.now()
  db.run('PRAGMA journal_mode = WAL')

  // Query plans: a SCAN of a store-sized table means the cost grows with the table, not with what the user sees.
  const BIG = /^SCAN (d|l|g|dashboards|library|dashboard_gids|library_gids)\b/
  for (const [name, sql] of [
    ['GET /api/dashboards', VISIBLE_DASHBOARDS_SQL],
    ['GET /api/library', OWNED_ENTRIES_SQL],
  ] as const) {
    const plan = db.query<{ detail: string }, [number]>(`EXPLAIN QUERY PLAN ${sql}`).all(benchUid).map((r) => r.detail)
    console.error(`   query plan of ${name}:\n${plan.map((l) => `     ${l}`).join('\n')}`)
    const scans = plan.filter((l) => BIG.test(l.trim()))
    if (scans.length > 0) {
      console.error(`bench/listing-seed.ts: ${name} scans a whole table: ${scans.join('; ')}`)
      process.exit(1)
    }
  }
  const count = (table: string) => db.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${table}`).get()!.n
  console.error(
    `   seeded ${count('dashboards')} dashboards (${count('dashboard_gids')} shares) in ${((t1 - t0) / 1000).toFixed(1)} s, ` +
      `${count('library')} library entries (${count('library_gids')} shares) in ${((t2 - t1) / 1000).toFixed(1)} s`,
  )
  db.close()
}

switch (cmd) {
  case 'user': {
    const [base, adminPassword] = args
    if (!base || !adminPassword) usage()
    const admin = (await api(base, 'POST', '/api/login', undefined, { User: 'admin', Pass: adminPassword })).JWT as string
    const uid = (await api(base, 'POST', '/api/users', admin, { User: 'bench', Pass: BENCH_PASSWORD, Name: 'Bench', Email: 'bench@localhost', Admin: false })) as number
    const gid = (await api(base, 'POST', '/api/groups', admin, { Name: 'bench-team', Desc: 'the measured user' })) as number
    await api(base, 'POST', `/api/users/${uid}/group`, admin, { GIDs: [gid] })
    console.log(`${uid} ${gid}`)
    break
  }
  case 'rows': {
    const [dbPath, others, uid, gid] = args
    if (!dbPath || others === undefined || !uid || !gid) usage()
    seedRows(dbPath, Number(others), Number(uid), Number(gid))
    break
  }
  case 'login': {
    const [base] = args
    if (!base) usage()
    console.log((await api(base, 'POST', '/api/login', undefined, { User: 'bench', Pass: BENCH_PASSWORD })).JWT)
    break
  }
  default:
    usage()
}
