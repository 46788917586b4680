// What the engine benchmarks (bench/engine.ts, bench/engine-cli.ts) do first against a running Quarry: sign in as the
// admin and make an API token for the searches, as a user of the CLI would hold one.

/** The body of an answer as JSON (undefined when empty); throws with `what` and the status unless it is a 2xx. */
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
