// What the benchmarks do against a Quarry they started: wait until it answers, sign in as the admin and make the API
// token a user holds (one that runs searches for the engine benches, one that ingests for the ingest benches), and
// time a search as a client waits for it.

/** The body of an answer as JSON (undefined when empty); throws with `what` and the status unless it is a 2xx. */
import { allocatorEnv } from '../server/runtime/allocator'

export async function json(res: Response, what: string): Promise<any> {
  const text = await res.text()
  if (!res.ok) throw new Error(`${what}: HTTP ${res.status}: ${text.slice(0, 300)}`)
  return text === '' ? undefined : JSON.parse(text)
}

/** The admin's headers (JWT, JSON body) and a new API token named `tokenName` that may run and keep searches. */
export async function benchSession(base: string, password: string, tokenName: string): Promise<{ auth: Record<string, string>; token: string }> {
  const login = await json(
    await fetch(`${base}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ User: 'admin', Pass: password }) }),
    'login',
  )
  const auth = { authorization: `Bearer ${login.JWT}`, 'content-type': 'application/json' }
  const made = await json(
    await fetch(`${base}/api/tokens`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ name: tokenName, capabilities: ['Search', 'Download', 'AttachSearch', 'BackgroundSearch', 'SaveSearch'] }),
    }),
    'create token',
  )
  return { auth, token: made.token as string }
}

/** The longest hold of GET .../details?wait= (the server's DETAILS_MAX_WAIT_S): a longer search is asked again. */
const WAIT_S = 5

/**
 * One search as a client waits for it, timed from the launch to the last result downloaded: REST launch, details
 * long-polled until the search ends (`?wait=`, as `quarry search run` waits: no request competes with the walk, and
 * none lands a poll interval after the end), the JSON download. The search is deleted after the clock stopped.
 * `found`: the count of a `| count` query, else the number of results.
 */
export async function timeSearch(base: string, auth: Record<string, string>, query: string): Promise<{ ms: number; found: number }> {
  const t = performance.now()
  const { SearchID: id } = await json(
    await fetch(`${base}/api/searchctrl/launch`, { method: 'POST', headers: auth, body: JSON.stringify({ SearchString: query, NoHistory: true }) }),
    `launch ${query}`,
  )
  for (;;) {
    const d = await json(await fetch(`${base}/api/searchctrl/${id}/details?wait=${WAIT_S}`, { headers: auth }), 'details')
    if (d.Error) throw new Error(`${query}: ${d.Error}`)
    if (d.Finished !== '0001-01-01T00:00:00Z') break
  }
  const results = await json(await fetch(`${base}/api/searchctrl/${id}/download/json`, { headers: auth }), 'download')
  if (!Array.isArray(results)) throw new Error('the download is not an array')
  const ms = performance.now() - t
  await fetch(`${base}/api/searchctrl/${id}`, { method: 'DELETE', headers: auth })
  return { ms, found: found(results) }
}

/** What a search answered: the count of a `| count` query, else its number of results. */
export const found = (results: unknown[]) =>
  results.length === 1 && typeof (results[0] as { Count?: unknown })?.Count === 'number' ? (results[0] as { Count: number }).Count : results.length

/** Waits until a server just started answers at `base` (any status); throws after `ms`. */
export async function waitForServer(base: string, ms: number, name: string): Promise<void> {
  const deadline = Date.now() + ms
  for (;;) {
    try {
      if ((await fetch(`${base}/api/test`)).status > 0) return
    } catch {}
    if (Date.now() > deadline) throw new Error(`${name}: the server did not start`)
    await Bun.sleep(100)
  }
}

/** Signs in as the admin and makes an API token that may ingest (what the shippers of the ingest benches hold). */
export async function ingestToken(base: string, password: string): Promise<string> {
  const login = await json(
    await fetch(`${base}/api/login`, { method: 'POST', body: JSON.stringify({ User: 'admin', Pass: password }), headers: { 'content-type': 'application/json' } }),
    'login',
  )
  const made = await json(
    await fetch(`${base}/api/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${login.JWT}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench-ingest', capabilities: ['Ingest'] }),
    }),
    'token',
  )
  return made.token as string
}

/**
 * The environment of a process a bench starts (Quarry, a floor, a baseline, a client): `base` with the allocator
 * setting the bench itself runs with (server/runtime/allocator.ts; `MIMALLOC_PURGE_DELAY=-1 bash bench/syslog.sh`
 * measures everything with it), so that Quarry and what it is measured against always run alike.
 */
export function benchEnv(base: Record<string, string | undefined> = process.env): Record<string, string | undefined> {
  return { ...allocatorEnv(), ...base }
}
