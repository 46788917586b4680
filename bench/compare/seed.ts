// Seeds a running Quarry for bench/compare through its API and prints shell assignments (JWT, DASHBOARD_ID):
// admin (UID 1) in two groups; a second user; 100 dashboards the admin sees (40 own, 30 of the other user shared
// with one of the admin's groups, 30 global of the other user) and 100 it does not (the other user's, unshared).
// Every dashboard has a Data of about 600 bytes. DASHBOARD_ID is one the admin reaches through a group.
//
//   bun run bench/compare/seed.ts <base> <admin password>
export {}
const [base, password] = process.argv.slice(2)
if (!base || !password) throw new Error('seed.ts <base> <admin password>')

async function call(method: string, path: string, body: unknown, jwt?: string): Promise<any> {
  const res = await fetch(base + path, {
    method,
    headers: { 'content-type': 'application/json', ...(jwt ? { authorization: `Bearer ${jwt}` } : {}) },
    body: JSON.stringify(body),
  })
  const text = await res.text()
  if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status}: ${text}`)
  return JSON.parse(text)
}

const { JWT } = await call('POST', '/api/login', { User: 'admin', Pass: password })
const gids: number[] = []
for (const name of ['bench-readers', 'bench-writers']) gids.push(await call('POST', '/api/groups', { Name: name, Desc: `benchmark group ${name}` }, JWT))
await call('POST', '/api/users/1/group', { GIDs: gids }, JWT)
const other = await call('POST', '/api/users', { User: 'other', Pass: `${password}-other`, Name: 'Other User', Email: 'other@example.com', Admin: false }, JWT)
const otherUid: number = typeof other === 'number' ? other : other.UID

const data = (i: number) => ({
  panels: Array.from({ length: 6 }, (_, p) => ({ id: p, title: `panel ${p} of ${i}`, query: `tag=bench${i} json x y | chart x by y`, w: 6, h: 4 })),
  refresh: 30,
  big: 12345678901234567890123,
})
async function dashboard(n: number, fields: Record<string, unknown>): Promise<number> {
  return call('POST', '/api/dashboards', { Name: `dash ${n}`, Description: `benchmark dashboard ${n}`, Labels: ['bench', `n${n % 7}`], Data: data(n), ...fields }, JWT)
}
let n = 0
let sharedId = 0
for (let i = 0; i < 40; i++) await dashboard(n++, {})
for (let i = 0; i < 30; i++) sharedId = await dashboard(n++, { UID: otherUid, GIDs: [gids[0]] })
for (let i = 0; i < 30; i++) await dashboard(n++, { UID: otherUid, Global: true })
for (let i = 0; i < 100; i++) await dashboard(n++, { UID: otherUid })
const visible: unknown = await (await fetch(`${base}/api/dashboards`, { headers: { authorization: `Bearer ${JWT}` } })).json()
if (!Array.isArray(visible) || visible.length !== 100) throw new Error(`expected 100 visible dashboards, got ${Array.isArray(visible) ? visible.length : typeof visible}`)
console.log(`JWT=${JWT}`)
console.log(`DASHBOARD_ID=${sharedId}`)
