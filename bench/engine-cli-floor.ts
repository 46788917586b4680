// The floor of `quarry search run QUERY --json` for bench/engine-cli.ts: a Bun process that imports nothing and makes
// the CLI's requests with a token (QUARRY_URL, QUARRY_TOKEN), in the CLI's order: the two permission probes at once,
// the launch, the details long-poll until the search ends, the JSON download to standard output, the deletion. What
// a CLI in Bun cannot go below on this machine: Bun's start and these round trips.
//
//   bun bench/engine-cli-floor.ts QUERY
export {}
const base = process.env.QUARRY_URL
const token = process.env.QUARRY_TOKEN
const query = process.argv[2]
if (!base || !token || !query) throw new Error('usage: QUARRY_URL=... QUARRY_TOKEN=... bun bench/engine-cli-floor.ts QUERY')
const headers = { 'service-token': token, 'content-type': 'application/json' }
const get = (path: string) => fetch(`${base}${path}`, { headers })
await Promise.all([get('/api/searchctrl/0/details').then((r) => r.text()), get('/api/searchctrl/0/download/json').then((r) => r.text())])
const launched = await fetch(`${base}/api/searchctrl/launch`, { method: 'POST', headers, body: JSON.stringify({ SearchString: query, NoHistory: true }) })
if (!launched.ok) throw new Error(`launch: HTTP ${launched.status}`)
const { SearchID: id } = (await launched.json()) as { SearchID: string }
for (;;) {
  const d = (await (await get(`/api/searchctrl/${id}/details?wait=5`)).json()) as { Finished: string; Error?: string }
  if (d.Error) throw new Error(d.Error)
  if (d.Finished !== '0001-01-01T00:00:00Z') break
}
await Bun.write(Bun.stdout, await get(`/api/searchctrl/${id}/download/json`))
await (await fetch(`${base}/api/searchctrl/${id}`, { method: 'DELETE', headers })).text()
