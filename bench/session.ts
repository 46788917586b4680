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
