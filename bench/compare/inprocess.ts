// In-process CPU per request of one Quarry tree (bench/README.md): the app built as server/main.ts builds it (SQLite,
// log level warn) on a temporary store, admin in two groups with one dashboard shared with one of them, then
// `app.handle()` of one path with 32 requests in flight; 3 rounds of N requests, each printing the process CPU
// (user + system) and wall time per request. No HTTP: what is left is Quarry and Elysia, so it shows a change to
// the hot path with less noise than wrk. Run two trees in turn for an A/B (bench/README.md):
//
//   bun run bench/compare/inprocess.ts TREE [whoami|dashboard|dashboards] [N] [--floor]
//
// --floor: every round also runs the same requests through bench/compare/elysia-floor.ts's app (the raw work in a
// hookless Elysia app) and through the raw work alone answering a Response (no framework), on the same store, in
// turn, so that Quarry's own code per request is Quarry minus the floor, measured in one process.
export {}
const withFloor = process.argv.includes('--floor')
if (withFloor) process.argv.splice(process.argv.indexOf('--floor'), 1)
const tree = (await import('node:path')).resolve(process.argv[2] ?? ".")
const which = process.argv[3] ?? 'whoami'
const N = Number(process.argv[4] ?? 60000)
const { createApp } = await import(`${tree}/server/app.ts`)
const { createSqliteStore } = await import(`${tree}/server/repos.ts`)
const { createDiskBlobStore } = await import(`${tree}/server/blob/index.ts`)
const { loadConfig } = await import(`${tree}/server/runtime/config.ts`)
const { createLogger } = await import(`${tree}/server/runtime/log.ts`)
const { mkdtempSync, rmSync } = await import('node:fs')
const { tmpdir } = await import('node:os')
const { join } = await import('node:path')
const dir = mkdtempSync(join(tmpdir(), 'quarry-inprocess-'))
const store = createSqliteStore(`${dir}/quarry.db`)
const blobs = await createDiskBlobStore({ dataDir: dir })
const config = { ...loadConfig({}).config, dataDir: dir, adminPassword: 'admin-password-1', passwordHash: { memoryCost: 256, timeCost: 1 } }
const { app } = await createApp({ config, store, blobs, log: createLogger('warn', () => {}) })
const call = async (method: string, path: string, jwt?: string, body?: unknown) => {
  const r = await app.handle(new Request(`http://localhost${path}`, { method, headers: { ...(jwt ? { authorization: `Bearer ${jwt}` } : {}), 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }))
  const t = await r.text()
  if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${t}`)
  return JSON.parse(t)
}
const { JWT } = await call('POST', '/api/login', undefined, { User: 'admin', Pass: 'admin-password-1' })
const g1 = await call('POST', '/api/groups', JWT, { Name: 'g1', Desc: 'x' })
const g2 = await call('POST', '/api/groups', JWT, { Name: 'g2', Desc: 'y' })
await call('POST', '/api/users/1/group', JWT, { GIDs: [g1, g2] })
const did = await call('POST', '/api/dashboards', JWT, { Name: 'd', Description: 'dd', Labels: ['a'], Data: { panels: [1, 2, 3] }, GIDs: [g1] })
const path = which === 'whoami' ? '/api/info/whoami' : which === 'dashboard' ? `/api/dashboards/${did}` : '/api/dashboards'
const headers = { authorization: `Bearer ${JWT}` }
type Handle = (request: Request) => Response | Promise<Response>
const handlers: [string, Handle][] = [['quarry', (r) => app.handle(r)]]
if (withFloor) {
  process.env.COMPARE_DB = `${dir}/quarry.db`
  const { floorApp, work } = await import('./elysia-floor.ts')
  // @ts-expect-error plain JavaScript shared with the Node baseline
  const { JSON_TYPE } = await import('./work.mjs')
  const { API_HEADERS } = await import(`${tree}/server/http/headers.ts`)
  const fn = which === 'whoami' ? (r: Request) => work.whoami(r.headers.get('authorization')) : which === 'dashboard' ? (r: Request) => work.dashboard(r.headers.get('authorization'), String(did)) : (r: Request) => work.dashboards(r.headers.get('authorization'))
  handlers.push(['elysia-floor', (r) => floorApp.handle(r)], ['raw', (r) => {
    const a = fn(r)
    return new Response(a.body, { status: a.status, headers: { ...API_HEADERS, 'content-type': JSON_TYPE } })
  }])
}
async function worker(handle: Handle, n: number) {
  for (let i = 0; i < n; i++) {
    const r = await handle(new Request(`http://localhost${path}`, { headers }))
    await r.text()
  }
}
const run = async (handle: Handle, n: number) => { const ps = []; for (let i = 0; i < 32; i++) ps.push(worker(handle, n / 32)); await Promise.all(ps) }
for (const [, handle] of handlers) await run(handle, 20000)
for (let round = 0; round < 3; round++) {
  for (const [name, handle] of handlers) {
    const c0 = process.cpuUsage(); const t0 = performance.now()
    await run(handle, N)
    const c = process.cpuUsage(c0); const t = performance.now() - t0
    console.log(`${which} ${name.padEnd(12)} cpu ${((c.user + c.system) / N).toFixed(2)} µs/req wall ${(t * 1000 / N).toFixed(2)} µs/req`)
  }
}
rmSync(dir, { recursive: true, force: true })
process.exit(0)
