// The API half of test/compose.sh, run in a container on the compose file's network (`podman run -i ... bun run -
// < this file`) against its load balancer (COMPOSE_URL): what a user of the compose cluster relies on. Every check
// prints `PASS: what` or `FAIL: what (why)`; the shell script counts them.
//   COMPOSE_URL       the load balancer (http://lb:8080)
//   COMPOSE_PASSWORD  the admin's password (QUARRY_ADMIN_PASSWORD of the compose file)
//   COMPOSE_SECRET    QUARRY_CLUSTER_SECRET of the compose file
//   COMPOSE_REPLICAS  how many replicas the compose file runs (3)
export {}

const env = process.env
const base = env.COMPOSE_URL ?? ''
const replicas = Number(env.COMPOSE_REPLICAS ?? 3)
let failures = 0

function check(what: string, ok: boolean, why = ''): boolean {
  if (!ok) failures++
  console.log(ok ? `PASS: ${what}` : `FAIL: ${what}${why ? ` (${why})` : ''}`)
  return ok
}

async function call(method: string, path: string, jwt: string, body?: string | FormData, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, { method, body, headers: { ...headers, ...(jwt ? { authorization: `Bearer ${jwt}` } : {}) } })
  const text = await res.text()
  let json: any
  try {
    json = JSON.parse(text)
  } catch {}
  return { status: res.status, text, json }
}
const jsonBody = { 'content-type': 'application/json' }

const login = await call('POST', '/api/login', '', JSON.stringify({ User: 'admin', Pass: env.COMPOSE_PASSWORD ?? '' }), jsonBody)
check('the admin logs in through the load balancer', login.status === 200 && typeof login.json?.JWT === 'string', `${login.status} ${login.text.slice(0, 200)}`)
const jwt: string = login.json?.JWT ?? ''

// Every replica lives (its heartbeat in PostgreSQL): the ping lists the web server and one key per replica.
let ping = await call('GET', '/api/stats/ping', jwt)
for (let i = 0; i < 50 && Object.keys(ping.json ?? {}).length < replicas + 1; i++) {
  await Bun.sleep(200)
  ping = await call('GET', '/api/stats/ping', jwt)
}
check(`the ${replicas} replicas know each other (/api/stats/ping)`, ping.status === 200 && Object.keys(ping.json ?? {}).length === replicas + 1, `${ping.status} ${ping.text.slice(0, 300)}`)

// A file's contents go to the S3 bucket: uploaded through one replica, read back through each in turn.
const text = `compose check ${crypto.randomUUID()}\n`
const form = new FormData()
form.set('file', new File([text], 'compose.txt', { type: 'text/plain' }))
form.set('name', 'compose-check')
const file = await call('POST', '/api/files', jwt, form)
check('a file is uploaded through the load balancer (its contents in S3)', file.status === 200 && typeof file.json?.GUID === 'string', `${file.status} ${file.text.slice(0, 200)}`)
const reads = await Promise.all(Array.from({ length: replicas }, () => call('GET', `/api/files/${file.json?.GUID}`, jwt)))
check(`the file is read back ${replicas} times, round robin over the replicas`, reads.every((r) => r.status === 200 && r.text === text), reads.map((r) => r.status).join(' '))

// A search runs on the replica that launched it; the others answer for it (forwarded between the replicas).
const T0 = Date.parse('2026-01-01T00:00:00Z')
const entries = Array.from({ length: 200 }, (_, i) => ({ TS: new Date(T0 + i * 1000).toISOString(), Tag: 'composeweb', Data: Buffer.from(`compose line ${i}`).toString('base64') }))
const ingested = await call('POST', '/api/ingest/json', jwt, JSON.stringify(entries), jsonBody)
check('entries are ingested through the load balancer', ingested.status === 200, `${ingested.status} ${ingested.text.slice(0, 200)}`)
const launched = await call(
  'POST',
  '/api/searchctrl/launch',
  jwt,
  JSON.stringify({ SearchString: 'tag=composeweb grep line', SearchStart: new Date(T0 - 1000).toISOString(), SearchEnd: new Date(T0 + 86_400_000).toISOString() }),
  jsonBody,
)
const id: string = launched.json?.SearchID ?? ''
check('a search is launched through the load balancer', launched.status === 200 && id !== '', `${launched.status} ${launched.text.slice(0, 200)}`)
let details = await call('GET', `/api/searchctrl/${id}/details`, jwt)
for (let i = 0; i < 100 && details.json?.Finished === '0001-01-01T00:00:00Z'; i++) {
  await Bun.sleep(100)
  details = await call('GET', `/api/searchctrl/${id}/details`, jwt)
}
// Asked again for up to 150 s while a replica cannot reach the owner: Podman's container DNS has been seen to lose
// every name for about 40 s (HAProxy logged the replicas resolving again; a replica's forward met EAI_AGAIN), during
// which a replica answers for a search it cannot reach as for one gone (404, as designed).
let answers: Awaited<ReturnType<typeof call>>[] = []
for (const until = Date.now() + 150_000; ; ) {
  answers = []
  for (let i = 0; i < replicas; i++) answers.push(await call('GET', `/api/searchctrl/${id}/details`, jwt))
  if (answers.every((r) => r.status === 200) || Date.now() > until) break
  await Bun.sleep(1000)
}
check(
  `its details are answered ${replicas} times in a row, whichever replica is asked`,
  answers.every((r) => r.status === 200 && r.json?.ID === id && r.json?.ItemCount === 200),
  answers.map((r) => `${r.status} ${r.json?.ItemCount}`).join(', '),
)

// The internal routes have no route through the load balancer: HAProxy's own 404, even with the secret.
const internal = await call('GET', '/api/internal/forward/api/info/whoami', jwt, undefined, { 'x-quarry-cluster-secret': env.COMPOSE_SECRET ?? '' })
check('/api/internal/* is refused by HAProxy itself (404, no replica reached)', internal.status === 404 && internal.text.includes('<html>') && internal.json === undefined, `${internal.status} ${internal.text.slice(0, 200)}`)

process.exit(failures === 0 ? 0 : 1)
