// The driver of bench/load.sh (see bench/README.md, "bench/load.sh"): against a running Quarry,
//   1. seeds groups, users (each in two groups), per user resources with contents, a user file, an API token,
//      dashboards and library entries (when those routes exist), and ingested entries for the searches;
//   2. logs every virtual client in (one session each; clients are spread over the users) and then runs CLIENTS
//      of them concurrently for DURATION_S seconds, each looping over a weighted mix of the API without think
//      time (a closed loop: a client sends its next request when the last one has answered), while a searcher
//      launches a search every SEARCH_EVERY_S seconds, polls its details until it has finished, downloads its
//      results and deletes it;
//   3. samples the server's RSS and CPU (from /proc/<pid>) and its own CPU every second;
//   4. prints a Markdown report on stdout: per endpoint (method + route template) count, requests/s, p50/p99/max
//      latency and unexpected answers; the searches; RSS over time with its slope; the load generator's CPU.
// Exit status 1 with --strict when there was any error or the RSS was not flat (see FLAT_PCT).
//
//   bun run bench/load.ts <base-url> <admin-password> <server-pid> [--strict]
// Tunables (environment): BENCH_CLIENTS (200), BENCH_DURATION (60, seconds), BENCH_USERS (50), BENCH_ENTRIES
// (100000), BENCH_SEARCH_EVERY (3, seconds), BENCH_WARMUP_S (10, seconds excluded from the RSS verdict),
// BENCH_FLAT_PCT (10), BENCH_THINK_MS (0, a pause after each request of a client).

export {}

const [base, password, pidArg, ...flags] = process.argv.slice(2)
if (!base || !password || !pidArg) {
  console.error('usage: bun run bench/load.ts <base-url> <admin-password> <server-pid> [--strict]')
  process.exit(2)
}
const serverPid = Number(pidArg)
const strict = flags.includes('--strict')
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 200)
const DURATION_S = Number(process.env.BENCH_DURATION ?? 60)
const USERS = Math.min(Number(process.env.BENCH_USERS ?? 50), CLIENTS)
const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 100_000)
const SEARCH_EVERY_S = Number(process.env.BENCH_SEARCH_EVERY ?? 3)
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 10)
const FLAT_PCT = Number(process.env.BENCH_FLAT_PCT ?? 10)
const THINK_MS = Number(process.env.BENCH_THINK_MS ?? 0)
/** Seconds the server is left idle after the run before its RSS is read once more. */
const IDLE_S = 10
/** A request that has not answered after this long counts as an error (and the client moves on). */
const REQUEST_TIMEOUT_MS = 30_000
const USER_PASSWORD = 'load-user-password-1'
const GROUPS = 8
const TAGS = ['web', 'db', 'auth']

const log = (line: string) => console.error(line)
function fail(msg: string): never {
  console.error(`bench/load.ts: ${msg}`)
  process.exit(1)
}

// --- HTTP, with every answer recorded per endpoint ----------------------------------------------------------

interface Stat {
  latencies: number[]
  /** Unexpected answers: "HTTP 500", "network: ...", by count. */
  errors: Map<string, number>
  firstErrors: string[]
}
const stats = new Map<string, Stat>()
/** Requests counted only while the clock runs (seeding is not measured). */
let measuring = false
let stopAt = Infinity
/** Completed requests per second of the run, for the RSS table. */
const perSecond: number[] = []
let runStartedAt = 0

function stat(endpoint: string): Stat {
  let s = stats.get(endpoint)
  if (!s) stats.set(endpoint, (s = { latencies: [], errors: new Map(), firstErrors: [] }))
  return s
}

interface Call {
  /** Method and route template, e.g. "GET /api/resources/:guid": the row of the report. */
  endpoint: string
  path: string
  jwt?: string
  token?: string
  json?: unknown
  body?: string | FormData
  /** Statuses other than 2xx that this call expects (none in this mix). */
  expect?: number[]
}

class CallFailed extends Error {}

/** Sends one request, reads the whole answer, records it; answers the parsed JSON (or the bytes' length). */
async function call(c: Call): Promise<any> {
  const method = c.endpoint.slice(0, c.endpoint.indexOf(' '))
  const headers: Record<string, string> = {}
  if (c.jwt) headers.authorization = `Bearer ${c.jwt}`
  if (c.token) headers['service-token'] = c.token
  let body = c.body
  if (c.json !== undefined) {
    body = JSON.stringify(c.json)
    headers['content-type'] = 'application/json'
  }
  const counted = measuring
  const t0 = performance.now()
  let status = 0
  let text = ''
  let failure: string | undefined
  try {
    const res = await fetch(base + c.path, { method, headers, body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
    status = res.status
    text = await res.text()
    if (!(res.ok || c.expect?.includes(status))) failure = `HTTP ${status}`
  } catch (e) {
    failure = `network: ${(e as Error).name}: ${(e as Error).message}`.slice(0, 200)
  }
  const t1 = performance.now()
  if (counted) {
    const s = stat(c.endpoint)
    // Latency and throughput count requests sent before the stop; errors count whenever they happen.
    if (t0 < stopAt) {
      s.latencies.push(t1 - t0)
      const second = Math.floor((t1 - runStartedAt) / 1000)
      perSecond[second] = (perSecond[second] ?? 0) + 1
    }
    if (failure) {
      s.errors.set(failure, (s.errors.get(failure) ?? 0) + 1)
      if (s.firstErrors.length < 3) s.firstErrors.push(`${failure} ${c.path}: ${text.slice(0, 200)}`)
    }
  }
  if (failure) {
    if (!counted) fail(`seeding: ${c.endpoint} ${c.path}: ${failure}: ${text.slice(0, 500)}`)
    throw new CallFailed(failure)
  }
  if (text === '') return undefined
  try {
    return JSON.parse(text)
  } catch {
    return text.length
  }
}

// --- test data ---------------------------------------------------------------------------------------------

/** Deterministic pseudo-random numbers, so two runs send the same mix. */
let seed = 0x2545f491
function random(): number {
  seed ^= seed << 13
  seed ^= seed >>> 17
  seed ^= seed << 5
  return (seed >>> 0) / 4294967296
}
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!
const between = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1))

/** 64 KiB of random bytes; uploads are slices of it (4–64 KiB). */
const noise = crypto.getRandomValues(new Uint8Array(64 * 1024))
function upload(bytes: number, name: string): FormData {
  const form = new FormData()
  form.append('file', new Blob([noise.subarray(0, bytes)], { type: 'application/octet-stream' }), name)
  return form
}

/** A dashboard definition in the GUI's shape (docs/api.md), a few tiles. */
function dashboardData(n: number) {
  return {
    version: 2,
    liveUpdateInterval: 0,
    linkZooming: true,
    grid: { gutter: '8', margin: 4 },
    timeframe: { durationString: 'PT1H', timeframe: 'PT1H', start: null, end: null },
    searches: TAGS.map((tag, i) => ({ alias: `s${i}`, query: `tag=${tag} grep GET`, timeframe: {} })),
    tiles: Array.from({ length: 4 + (n % 4) }, (_, i) => ({
      id: i + 1,
      title: `tile ${i + 1}`,
      renderer: i % 2 ? 'chart' : 'table',
      span: { col: 4, row: 4, x: (i % 3) * 4, y: Math.floor(i / 3) * 4 },
      searchesIndex: i % TAGS.length,
      rendererOptions: { Stack: 'stacked', Smoothing: 'smooth' },
    })),
    lastDataUpdate: new Date().toISOString(),
  }
}

const WORDS = ['GET', 'POST', 'login', 'timeout', 'select', 'insert', 'denied', 'accepted', 'error', 'ok']

// --- 1. seeding --------------------------------------------------------------------------------------------

async function login(user: string, pass: string): Promise<string> {
  const r = await call({ endpoint: 'POST /api/login', path: '/api/login', json: { User: user, Pass: pass } })
  if (typeof r?.JWT !== 'string') fail(`login of ${user} answered no JWT`)
  return r.JWT
}

/** Runs f over items, at most `width` at a time. */
async function pool<T>(items: readonly T[], width: number, f: (x: T, i: number) => Promise<void>) {
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const i = next++
        await f(items[i]!, i)
      }
    }),
  )
}

interface User {
  uid: number
  name: string
  gids: number[]
  /** Resources this user owns (writable), all with contents. */
  resources: string[]
  files: string[]
  dashboards: number[]
  token: string
}

const seedStart = performance.now()
const admin = await login('admin', password)

// Optional areas: probed, and reported as skipped when the server does not have them (never silently).
async function routeExists(path: string): Promise<boolean> {
  const res = await fetch(base + path, { headers: { authorization: `Bearer ${admin}` } })
  await res.arrayBuffer()
  if (res.ok) return true
  if (res.status === 404) return false
  fail(`probe GET ${path}: HTTP ${res.status}`)
}
const hasDashboards = await routeExists('/api/dashboards')
const hasLibrary = await routeExists('/api/library')
const skipped: string[] = []
if (!hasDashboards) skipped.push('dashboards (list, get, update): skipped: route missing (GET /api/dashboards answered 404)')
if (!hasLibrary) skipped.push('library (list): skipped: route missing (GET /api/library answered 404)')
for (const s of skipped) log(`!! ${s}`)

log(`== seeding: ${GROUPS} groups, ${USERS} users, their items, ${ENTRIES} entries`)
const gids: number[] = []
for (let g = 0; g < GROUPS; g++)
  gids.push(await call({ endpoint: 'POST /api/groups', path: '/api/groups', jwt: admin, json: { Name: `load-g${g}`, Desc: `load group ${g}` } }))

const users: User[] = []
await pool(
  Array.from({ length: USERS }, (_, i) => i),
  4,
  async (i) => {
    const name = `load-u${i}`
    const uid: number = await call({
      endpoint: 'POST /api/users',
      path: '/api/users',
      jwt: admin,
      json: { User: name, Pass: USER_PASSWORD, Name: `Load User ${i}`, Email: `${name}@example.com`, Admin: false },
    })
    const mine = [gids[i % GROUPS]!, gids[(i + 3) % GROUPS]!]
    await call({ endpoint: 'POST /api/users/:id/group', path: `/api/users/${uid}/group`, jwt: admin, json: { GIDs: mine } })
    users[i] = { uid, name, gids: mine, resources: [], files: [], dashboards: [], token: '' }
  },
)

await pool(users, 4, async (u) => {
  const jwt = await login(u.name, USER_PASSWORD)
  for (let r = 0; r < 2; r++) {
    const { GUID } = await call({
      endpoint: 'POST /api/resources',
      path: '/api/resources',
      jwt,
      json: { ResourceName: `${u.name}-r${r}`, Description: 'load test resource', GroupACL: [u.gids[0]], Global: false },
    })
    await call({ endpoint: 'PUT /api/resources/:guid/raw', path: `/api/resources/${GUID}/raw`, jwt, body: upload(between(4, 64) * 1024, 'r.bin') })
    u.resources.push(GUID)
  }
  const form = upload(between(1, 16) * 1024, 'icon.png')
  form.append('name', `${u.name}-icon`)
  form.append('desc', 'load test file')
  const file = await call({ endpoint: 'POST /api/files', path: '/api/files', jwt, body: form })
  if (typeof file?.GUID !== 'string') fail(`POST /api/files answered no GUID: ${JSON.stringify(file)}`)
  u.files.push(file.GUID)
  if (hasDashboards)
    for (let d = 0; d < 2; d++)
      u.dashboards.push(
        await call({
          endpoint: 'POST /api/dashboards',
          path: '/api/dashboards',
          jwt,
          json: { Name: `${u.name}-d${d}`, Description: 'load test dashboard', GIDs: [u.gids[1]], Global: false, Labels: ['load'], Data: dashboardData(d) },
        }),
      )
  if (hasLibrary)
    await call({
      endpoint: 'POST /api/library',
      path: '/api/library',
      jwt,
      json: { Name: `${u.name}-q`, Description: 'load test query', Query: 'tag=web grep GET', GIDs: [u.gids[0]], Labels: ['load'] },
    })
  const token = await call({ endpoint: 'POST /api/tokens', path: '/api/tokens', jwt, json: { name: `${u.name}-script`, categories: ['Search', 'Users and Groups'] } })
  u.token = token.token
  await call({ endpoint: 'PUT /api/logout', path: '/api/logout', jwt })
})
// Admin-owned global resource, readable by everyone.
const { GUID: globalResource } = await call({
  endpoint: 'POST /api/resources',
  path: '/api/resources',
  jwt: admin,
  json: { ResourceName: 'load-global', Description: 'global', GroupACL: [], Global: true },
})
await call({ endpoint: 'PUT /api/resources/:guid/raw', path: `/api/resources/${globalResource}/raw`, jwt: admin, body: upload(32 * 1024, 'g.bin') })

// Entries for the searches: the last two hours, three tags, short log lines.
const BATCH = 2000
const now = Date.now()
for (let b = 0; b * BATCH < ENTRIES; b++) {
  const n = Math.min(BATCH, ENTRIES - b * BATCH)
  const entries = Array.from({ length: n }, (_, j) => {
    const i = b * BATCH + j
    const line = `${pick(WORDS)} /app/${i % 977} user=${i % 50} ${pick(WORDS)} took=${i % 1000}ms ${pick(WORDS)}`
    return { TS: new Date(now - 7_200_000 + Math.floor((i * 7_200_000) / ENTRIES)).toISOString(), Tag: TAGS[i % TAGS.length], SRC: `192.0.2.${i % 250}`, Data: Buffer.from(line).toString('base64') }
  })
  await call({ endpoint: 'POST /api/ingest/json', path: '/api/ingest/json', jwt: admin, json: entries })
}
await call({ endpoint: 'PUT /api/logout', path: '/api/logout', jwt: admin })

// One session per virtual client (clients are spread over the users, as several browser tabs would be).
interface Client {
  user: User
  jwt: string
}
const clients: Client[] = []
log(`== logging in ${CLIENTS} clients`)
await pool(
  Array.from({ length: CLIENTS }, (_, i) => i),
  4,
  async (i) => {
    const user = users[i % USERS]!
    clients[i] = { user, jwt: await login(user.name, USER_PASSWORD) }
  },
)
const seedSeconds = (performance.now() - seedStart) / 1000
log(`== seeded in ${seedSeconds.toFixed(1)} s`)

// --- 2. the mix --------------------------------------------------------------------------------------------

/** Resources any client may read: every user's (shared with a group of theirs) and the global one. */
const readableResources = (u: User) => [...u.resources, globalResource]

type Step = (c: Client) => Promise<void>
const mix: [number, Step][] = [
  [10, async (c) => void (await call({ endpoint: 'GET /api/info/whoami', path: '/api/info/whoami', jwt: c.jwt }))],
  [3, async (c) => void (await call({ endpoint: 'GET /api/users', path: '/api/users', jwt: c.jwt }))],
  [3, async (c) => void (await call({ endpoint: 'GET /api/groups', path: '/api/groups', jwt: c.jwt }))],
  [2, async (c) => void (await call({ endpoint: 'GET /api/users/:id/group', path: `/api/users/${c.user.uid}/group`, jwt: c.jwt }))],
  [8, async (c) => void (await call({ endpoint: 'GET /api/resources', path: '/api/resources', jwt: c.jwt }))],
  [6, async (c) => void (await call({ endpoint: 'GET /api/resources/:guid', path: `/api/resources/${pick(readableResources(c.user))}`, jwt: c.jwt }))],
  [6, async (c) => void (await call({ endpoint: 'GET /api/resources/:guid/raw', path: `/api/resources/${pick(readableResources(c.user))}/raw`, jwt: c.jwt }))],
  [
    3,
    async (c) =>
      void (await call({
        endpoint: 'PUT /api/resources/:guid/raw',
        path: `/api/resources/${pick(c.user.resources)}/raw`,
        jwt: c.jwt,
        body: upload(between(4, 64) * 1024, 'r.bin'),
      })),
  ],
  [
    1,
    async (c) => {
      // A resource's whole life: created, filled, read back, deleted (its blob goes with it).
      const { GUID } = await call({
        endpoint: 'POST /api/resources',
        path: '/api/resources',
        jwt: c.jwt,
        json: { ResourceName: 'scratch', Description: 'short-lived', GroupACL: [], Global: false },
      })
      await call({ endpoint: 'PUT /api/resources/:guid/raw', path: `/api/resources/${GUID}/raw`, jwt: c.jwt, body: upload(between(4, 16) * 1024, 's.bin') })
      await call({ endpoint: 'GET /api/resources/:guid/raw', path: `/api/resources/${GUID}/raw`, jwt: c.jwt })
      await call({ endpoint: 'DELETE /api/resources/:guid', path: `/api/resources/${GUID}`, jwt: c.jwt })
    },
  ],
  [4, async (c) => void (await call({ endpoint: 'GET /api/files', path: '/api/files', jwt: c.jwt }))],
  [
    1,
    async (c) =>
      void (await call({ endpoint: 'POST /api/files/:id', path: `/api/files/${pick(c.user.files)}`, jwt: c.jwt, body: upload(between(1, 16) * 1024, 'icon.png') })),
  ],
  [
    1,
    async (c) => {
      // The GUI saving its preferences and reading them back.
      await call({ endpoint: 'PUT /api/users/:id/preferences', path: `/api/users/${c.user.uid}/preferences`, jwt: c.jwt, json: { theme: pick(['dark', 'light']), recent: WORDS.slice(0, between(1, 10)) } })
      await call({ endpoint: 'GET /api/users/:id/preferences', path: `/api/users/${c.user.uid}/preferences`, jwt: c.jwt })
    },
  ],
  [4, async (c) => void (await call({ endpoint: 'GET /api/files/:id', path: `/api/files/${pick(c.user.files)}`, jwt: c.jwt }))],
  [3, async (c) => void (await call({ endpoint: 'GET /api/tokens', path: '/api/tokens', jwt: c.jwt }))],
  [
    1,
    async (c) => {
      const t = await call({ endpoint: 'POST /api/tokens', path: '/api/tokens', jwt: c.jwt, json: { name: 'short-lived', capabilities: ['ListUsers'] } })
      await call({ endpoint: 'GET /api/info/whoami (API token)', path: '/api/info/whoami', token: t.token })
      await call({ endpoint: 'DELETE /api/tokens/:id', path: `/api/tokens/${t.id}`, jwt: c.jwt })
    },
  ],
  [3, async (c) => void (await call({ endpoint: 'GET /api/searchctrl (API token)', path: '/api/searchctrl', token: c.user.token }))],
  [4, async (c) => void (await call({ endpoint: 'GET /api/searchctrl', path: '/api/searchctrl', jwt: c.jwt }))],
  [2, async (c) => void (await call({ endpoint: 'GET /api/searchhistory', path: '/api/searchhistory', jwt: c.jwt }))],
  [
    0.3,
    async (c) => {
      // A fresh login, then the old session is logged out (a browser that signs in again).
      const old = c.jwt
      c.jwt = await login(c.user.name, USER_PASSWORD)
      await call({ endpoint: 'PUT /api/logout', path: '/api/logout', jwt: old })
    },
  ],
]
if (hasDashboards)
  mix.push(
    [5, async (c) => void (await call({ endpoint: 'GET /api/dashboards', path: '/api/dashboards', jwt: c.jwt }))],
    [5, async (c) => void (await call({ endpoint: 'GET /api/dashboards/:id', path: `/api/dashboards/${pick(c.user.dashboards)}`, jwt: c.jwt }))],
    [
      2,
      async (c) => {
        // The GUI's update: fetch, change, send every field back (docs/api.md "Dashboards and the search library").
        const id = pick(c.user.dashboards)
        const d = await call({ endpoint: 'GET /api/dashboards/:id', path: `/api/dashboards/${id}`, jwt: c.jwt })
        d.Data.lastDataUpdate = new Date().toISOString()
        d.Data.liveUpdateInterval = between(0, 60)
        await call({ endpoint: 'PUT /api/dashboards/:id', path: `/api/dashboards/${id}`, jwt: c.jwt, json: d })
      },
    ],
  )
if (hasLibrary) mix.push([3, async (c) => void (await call({ endpoint: 'GET /api/library', path: '/api/library', jwt: c.jwt }))])

const totalWeight = mix.reduce((a, [w]) => a + w, 0)
function nextStep(): Step {
  let x = random() * totalWeight
  for (const [w, step] of mix) if ((x -= w) < 0) return step
  return mix.at(-1)![1]
}

async function runClient(c: Client) {
  while (performance.now() < stopAt) {
    try {
      await nextStep()(c)
    } catch (e) {
      if (!(e instanceof CallFailed)) throw e
      await Bun.sleep(100) // recorded; do not spin on a failing server
    }
    if (THINK_MS > 0) await Bun.sleep(THINK_MS)
  }
}

// The running searches: launched every SEARCH_EVERY_S seconds by one of a few users (sessions of their own),
// details polled every 250 ms until Finished, then results downloaded and the search deleted (as the GUI does
// when its tab is closed).
interface SearchOutcome {
  query: string
  finishMs?: number
  items?: number
}
const searches: SearchOutcome[] = []
const ZERO_TIME = '0001-01-01T00:00:00Z'
async function runSearch(jwt: string, query: string, outcomes = searches) {
  const outcome: SearchOutcome = { query }
  outcomes.push(outcome)
  const t0 = performance.now()
  try {
    const { SearchID: id } = await call({ endpoint: 'POST /api/searchctrl/launch', path: '/api/searchctrl/launch', jwt, json: { SearchString: query } })
    // Polled until it has finished or the run is over (then it is deleted unfinished, as a closed tab would).
    while (performance.now() < stopAt) {
      await Bun.sleep(250)
      const d = await call({ endpoint: 'GET /api/searchctrl/:id/details', path: `/api/searchctrl/${id}/details`, jwt })
      if (d.Finished !== ZERO_TIME) {
        outcome.finishMs = performance.now() - t0
        outcome.items = d.ItemCount
        break
      }
    }
    if (outcome.finishMs !== undefined)
      await call({ endpoint: 'GET /api/searchctrl/:id/download/:format', path: `/api/searchctrl/${id}/download/json`, jwt })
    await call({ endpoint: 'DELETE /api/searchctrl/:id', path: `/api/searchctrl/${id}`, jwt })
  } catch (e) {
    if (!(e instanceof CallFailed)) throw e
  }
}
const searcherJwts: string[] = []
for (const u of users.slice(0, 4)) searcherJwts.push(await login(u.name, USER_PASSWORD))
const QUERIES = [
  (w: string) => `tag=web grep ${w} | count`,
  (w: string) => `tag=db,auth grep ${w} | limit 500`,
  (w: string) => `tag=* regex "took=9[0-9]{2}ms" | grep ${w} | count`,
  (w: string) => `tag=web,db grep ${w}`,
]
// The same searches alone first, one after the other on the idle server: what the run's figures compare with.
const alone: SearchOutcome[] = []
for (const [i, q] of QUERIES.entries()) await runSearch(searcherJwts[i % searcherJwts.length]!, q('GET'), alone)
async function runSearcher() {
  const running: Promise<void>[] = []
  // Launch n is due at n * SEARCH_EVERY_S seconds; none is launched after the end.
  for (let n = 0; runStartedAt + n * SEARCH_EVERY_S * 1000 < stopAt; n++) {
    await Bun.sleep(Math.max(0, runStartedAt + n * SEARCH_EVERY_S * 1000 - performance.now()))
    running.push(runSearch(searcherJwts[n % searcherJwts.length]!, QUERIES[n % QUERIES.length]!(pick(WORDS))))
  }
  await Promise.all(running)
}

// --- 3. samples of the server (RSS, CPU) and of this process (CPU) -----------------------------------------

const TICK = 100 // clock ticks per second of /proc/<pid>/stat (USER_HZ; 100 on Linux x86-64)
/**
 * RSS and CPU time (all threads) of the server, and of its main thread (the one that runs JavaScript and SQLite)
 * the time it ran and the time it was runnable but waited for a CPU (/proc/<pid>/schedstat): on a shared machine
 * the wait tells how much of the latency is other work holding the cores.
 */
async function serverSample() {
  const status = await Bun.file(`/proc/${serverPid}/status`).text()
  const rssKiB = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1])
  const stat = await Bun.file(`/proc/${serverPid}/stat`).text()
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const cpuS = (Number(fields[11]) + Number(fields[12])) / TICK // utime, stime
  const [runNs, waitNs] = (await Bun.file(`/proc/${serverPid}/schedstat`).text()).split(' ').map(Number)
  return { rssKiB, cpuS, mainRunS: runNs! / 1e9, mainWaitS: waitNs! / 1e9 }
}
interface Sample {
  t: number
  rssMiB: number
  serverCpuS: number
  mainRunS: number
  mainWaitS: number
  selfCpuS: number
}
const samples: Sample[] = []
async function sample() {
  const s = await serverSample()
  const u = process.cpuUsage()
  samples.push({
    t: (performance.now() - runStartedAt) / 1000,
    rssMiB: s.rssKiB / 1024,
    serverCpuS: s.cpuS,
    mainRunS: s.mainRunS,
    mainWaitS: s.mainWaitS,
    selfCpuS: (u.user + u.system) / 1e6,
  })
}

// --- the run -----------------------------------------------------------------------------------------------

log(`== ${CLIENTS} clients for ${DURATION_S} s (think time ${THINK_MS} ms), a search every ${SEARCH_EVERY_S} s`)
const loadStart = (await Bun.file('/proc/loadavg').text()).split(' ').slice(0, 3).join(' ')
measuring = true
runStartedAt = performance.now()
stopAt = runStartedAt + DURATION_S * 1000
await sample()
const sampler = setInterval(() => void sample(), 1000)
await Promise.all([...clients.map(runClient), runSearcher()])
const elapsedS = (performance.now() - runStartedAt) / 1000
clearInterval(sampler)
await sample()
measuring = false
// RSS once the load is gone: memory the server keeps (retained) against memory that only follows the load.
await Bun.sleep(IDLE_S * 1000)
const idleRssMiB = (await serverSample()).rssKiB / 1024
const loadEnd = (await Bun.file('/proc/loadavg').text()).split(' ').slice(0, 3).join(' ')

// --- 4. the report -----------------------------------------------------------------------------------------

const ms = (x: number) => (x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : x.toFixed(0))
function percentile(sorted: number[], p: number) {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0
}
const rows = [...stats.entries()].sort(([a], [b]) => a.localeCompare(b))
let total = 0
let totalErrors = 0
const all: number[] = []
const lines: string[] = []
lines.push('| endpoint | requests | req/s | p50 ms | p99 ms | max ms | errors |', '| --- | ---: | ---: | ---: | ---: | ---: | ---: |')
for (const [endpoint, s] of rows) {
  const sorted = s.latencies.sort((a, b) => a - b)
  const errors = [...s.errors.values()].reduce((a, b) => a + b, 0)
  total += sorted.length
  totalErrors += errors
  for (const x of sorted) all.push(x)
  lines.push(
    `| \`${endpoint}\` | ${sorted.length} | ${(sorted.length / DURATION_S).toFixed(1)} | ${ms(percentile(sorted, 0.5))} | ${ms(percentile(sorted, 0.99))} | ${ms(sorted.at(-1) ?? 0)} | ${errors} |`,
  )
}
all.sort((a, b) => a - b)
lines.push(`| **all** | ${total} | ${(total / DURATION_S).toFixed(1)} | ${ms(percentile(all, 0.5))} | ${ms(percentile(all, 0.99))} | ${ms(all.at(-1) ?? 0)} | ${totalErrors} |`)

const out: string[] = []
out.push(
  `${CLIENTS} clients (closed loop, think time ${THINK_MS} ms) over ${USERS} users for ${DURATION_S} s (the last requests ended at ${elapsedS.toFixed(1)} s); ` +
    `seeded ${ENTRIES} entries, ${USERS * 2 + 1} resources, ${USERS} files, ${hasDashboards ? USERS * 2 : 0} dashboards, ${hasLibrary ? USERS : 0} library entries in ${seedSeconds.toFixed(0)} s; ` +
    `load average (1, 5, 15 min) ${loadStart} at the start, ${loadEnd} at the end.`,
  '',
)
for (const s of skipped) out.push(`**${s}**`, '')
out.push(`**${total} requests, ${(total / DURATION_S).toFixed(0)} requests/s, ${totalErrors} errors** (any answer other than 2xx, any network error or timeout after ${REQUEST_TIMEOUT_MS / 1000} s).`, '')
out.push(...lines, '')
const errorLines = rows.flatMap(([endpoint, s]) => s.firstErrors.map((e) => `- \`${endpoint}\`: ${e.replaceAll('\n', ' ')}`))
if (errorLines.length) out.push('First errors per endpoint:', '', ...errorLines, '')

const done = searches.filter((s) => s.finishMs !== undefined)
const finishes = done.map((s) => s.finishMs!).sort((a, b) => a - b)
out.push(
  `Searches: ${searches.length} launched (one every ${SEARCH_EVERY_S} s, over ${ENTRIES} entries), ${done.length} seen finished; ` +
    (finishes.length ? `launch to Finished (details polled every 250 ms): median ${ms(percentile(finishes, 0.5))} ms, max ${ms(finishes.at(-1)!)} ms` : 'none finished') +
    `; the same four queries alone on the idle server before the run: ${alone.map((s) => `${ms(s.finishMs ?? NaN)} ms`).join(', ')}.`,
  '',
)

// RSS: a row every 5 s, and the verdict over the samples of the run itself (up to DURATION_S; the few requests
// after it, to delete the searches still running, are left out) after the warm-up.
const inRun = samples.filter((s) => s.t <= DURATION_S + 0.5)
const first = inRun[0]!
const last = inRun.at(-1)!
const pct1 = (x: number) => `${x.toFixed(0)}`
out.push(
  '| t (s) | server RSS (MiB) | server CPU, all threads (%) | main thread ran (%) | main thread waited for a CPU (%) | load generator CPU (%) | requests/s |',
  '| ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
)
let prev = first
for (const s of inRun.slice(1)) {
  if ((Math.round(s.t) % 5 !== 0 && s !== last) || Math.round(s.t) === Math.round(prev.t)) continue
  const dt = s.t - prev.t
  const from = Math.floor(prev.t)
  const to = Math.floor(s.t)
  const reqs = perSecond.slice(from, to).reduce((a, b) => a + (b ?? 0), 0)
  out.push(
    `| ${s.t.toFixed(0)} | ${s.rssMiB.toFixed(1)} | ${pct1((100 * (s.serverCpuS - prev.serverCpuS)) / dt)} | ${pct1((100 * (s.mainRunS - prev.mainRunS)) / dt)} | ` +
      `${pct1((100 * (s.mainWaitS - prev.mainWaitS)) / dt)} | ${pct1((100 * (s.selfCpuS - prev.selfCpuS)) / dt)} | ${to > from ? (reqs / (to - from)).toFixed(0) : '-'} |`,
  )
  prev = s
}
out.push('', 'CPU percentages are of one core (the machine has 2).', '')
// Flat or not: RSS saw-tooths with the garbage collector (tens of MiB within seconds under this load), so single
// samples are compared with nothing; the median of the last WINDOW_S seconds of the run is compared with the median
// of the WINDOW_S seconds after the warm-up. The least-squares slope after the warm-up is reported next to it.
const WINDOW_S = 20
const median = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 0.5)
const after = inRun.filter((s) => s.t >= WARMUP_S)
const early = median(after.filter((s) => s.t < WARMUP_S + WINDOW_S).map((s) => s.rssMiB))
const late = median(inRun.filter((s) => s.t > last.t - WINDOW_S).map((s) => s.rssMiB))
const peak = inRun.reduce((a, s) => Math.max(a, s.rssMiB), 0)
const n = after.length
const mt = after.reduce((a, s) => a + s.t, 0) / n
const mr = after.reduce((a, s) => a + s.rssMiB, 0) / n
const slope = (60 * after.reduce((a, s) => a + (s.t - mt) * (s.rssMiB - mr), 0)) / after.reduce((a, s) => a + (s.t - mt) ** 2, 0)
const growthPct = (100 * (late - early)) / early
const flat = growthPct <= FLAT_PCT
const signed = (x: number, d = 1) => `${x >= 0 ? '+' : ''}${x.toFixed(d)}`
out.push(
  `Server RSS: ${first.rssMiB.toFixed(1)} MiB at the start, median ${early.toFixed(1)} MiB over ${WARMUP_S}–${WARMUP_S + WINDOW_S} s (after the ${WARMUP_S} s warm-up), ` +
    `median ${late.toFixed(1)} MiB over the last ${WINDOW_S} s (${signed(growthPct)} %), peak ${peak.toFixed(1)} MiB; slope after the warm-up ${signed(slope)} MiB/min; ` +
    `${idleRssMiB.toFixed(1)} MiB after ${IDLE_S} s idle once the run was over. ` +
    `**${flat ? 'Flat' : 'Not flat'}** (flat = the median of the last ${WINDOW_S} s at most ${FLAT_PCT} % above the median of the ${WINDOW_S} s after the warm-up).`,
  '',
)
const runS = last.t - first.t
const serverCpuS = last.serverCpuS - first.serverCpuS
out.push(
  `Over the run: server CPU ${pct1((100 * serverCpuS) / runS)} % (${((1000 * serverCpuS) / Math.max(1, total)).toFixed(2)} ms per request), ` +
    `its main thread ran ${pct1((100 * (last.mainRunS - first.mainRunS)) / runS)} % and waited for a CPU ${pct1((100 * (last.mainWaitS - first.mainWaitS)) / runS)} % of the time; ` +
    `load generator (one Bun process) CPU ${pct1((100 * (last.selfCpuS - first.selfCpuS)) / runS)} %.`,
)
console.log(out.join('\n'))
if (strict && (totalErrors > 0 || !flat)) process.exit(1)
