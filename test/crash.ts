// Crash safety (bench/README.md, "Robustness"): the real server process, 100 concurrent writers across areas, SIGKILL
// at a seeded random moment, then:
// - with the server down: PRAGMA integrity_check is ok, foreign keys hold, and no item points at a missing blob
//   (blobs a kill left unreferenced are allowed here: the upload writes its blob before its row);
// - restarted on the same data directory with a tiny sweep grace: the blob sweep removes exactly those orphans,
//   and every write that was answered 200 is there (an acknowledged delete is gone), checked through the API,
//   contents byte for byte;
// - stopped again: blob files and blob references match exactly.
// Used by test/crash.test.ts (a few seeds) and test/crash-long.sh (50 rounds).
import { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDiskBlobStore } from '../server/blob'
import { Segment } from '../server/search/segment'
import { blobReferences } from '../server/repos'
import { onPg } from './pg'
import { listening, openStoreAt, spawnServer } from './helpers'

const ADMIN_PASSWORD = 'crash-admin-password'
const WRITERS = 100
const USERS = 2
const BOUNDARY = 'crash-boundary'
/** Items the writers must have made before the kill's random delay starts. */
const MIN_TRACKED_BEFORE_KILL = 10

/** mulberry32: a small seeded PRNG, so a round is replayed by its seed (timing aside). */
function prng(seed: number) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return { next, int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)), pick: <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]! }
}
type Rng = ReturnType<typeof prng>

/** What an item must look like: `gone`, or these fields (contents as bytes). */
type State = 'gone' | { fields: Record<string, unknown>; contents?: Uint8Array }

/** One item a writer made: the state its last acknowledged write left, and the state of a write cut off by the kill. */
interface Tracked {
  area: 'resource' | 'file' | 'token' | 'user' | 'group' | 'dashboard' | 'library' | 'ingest' | 'search'
  id: string
  /** For files: the GUID to download by. */
  guid?: string
  /** Who may read it back (for tokens: the owner's JWT). */
  jwt: string
  acked: State
  inflight?: State
}

export interface CrashRoundResult {
  seed: number
  /** The kill's delay after the writers had made their first items. */
  killAfterMs: number
  /** Writer operations answered before the kill (any status). */
  answered: number
  cutOff: number
  tracked: number
  /** Items checked after the restart, by area (ingest: batches; search: searches saved before the kill). */
  trackedByArea: Record<string, number>
  orphansAfterKill: number
  sweptAtRestart: number
}

interface Server {
  proc: ReturnType<typeof spawnServer>
  url: string
  lines: string[]
}

async function startServer(dataDir: string, extra: Record<string, string> = {}): Promise<Server> {
  const proc = spawnServer({ QUARRY_DATA_DIR: dataDir, QUARRY_ADMIN_PASSWORD: ADMIN_PASSWORD, QUARRY_LOG_LEVEL: 'info', ...extra })
  const { url, lines } = await listening(proc)
  return { proc, url, lines }
}

class Client {
  constructor(readonly url: string) {}
  async call(method: string, path: string, jwt: string, opts: { json?: unknown; body?: Uint8Array | string; type?: string } = {}) {
    const headers: Record<string, string> = { authorization: `Bearer ${jwt}` }
    let body: Uint8Array | string | undefined = opts.body
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json)
      headers['content-type'] = 'application/json'
    }
    if (opts.type) headers['content-type'] = opts.type
    const res = await fetch(`${this.url}${path}`, { method, headers, body })
    const bytes = new Uint8Array(await res.arrayBuffer())
    let parsed: any
    try {
      parsed = JSON.parse(new TextDecoder().decode(bytes))
    } catch {}
    return { status: res.status, body: parsed, bytes }
  }
  async login(user: string, pass: string): Promise<string> {
    const res = await this.call('POST', '/api/login', '', { json: { User: user, Pass: pass } })
    if (res.status !== 200) throw new Error(`login of ${user} failed: ${res.status}`)
    return res.body.JWT
  }
}

const multipart = (contents: Uint8Array, meta?: unknown) => {
  const head = (meta === undefined ? '' : `--${BOUNDARY}\r\nContent-Disposition: form-data; name="meta"\r\n\r\n${JSON.stringify(meta)}\r\n`) +
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="c.bin"\r\n\r\n`
  return { body: Buffer.concat([Buffer.from(head), contents, Buffer.from(`\r\n--${BOUNDARY}--\r\n`)]), type: `multipart/form-data; boundary=${BOUNDARY}` }
}

function randomContents(rng: Rng): Uint8Array {
  const n = rng.pick([0, 1, 100, 5_000, 64_000, 300_000])
  const out = new Uint8Array(n)
  for (let i = 0; i < n; i += 4096) out[i] = rng.int(0, 255)
  out.fill(rng.int(0, 255), 0, Math.min(n, 10))
  return out
}

/**
 * A writer's operations, by area. Each takes the writer's context and answers nothing; it records every item it
 * made and every write answered 200 in `tracked`, and marks a write in flight until its answer arrives.
 * To cover a new area, add its operations here and its read-back to READ_BACK below.
 */
interface WriterCtx {
  rng: Rng
  client: Client
  jwt: string
  admin: boolean
  mine: Tracked[]
  all: Tracked[]
}

/** Runs one write: the new state is in flight until answered; answered 200 it becomes the acknowledged one. */
async function write(item: Tracked, next: State, send: () => Promise<{ status: number }>) {
  item.inflight = next
  const res = await send()
  if (res.status === 200) item.acked = next
  item.inflight = undefined
  return res
}

const fieldsOf = (s: State) => (s === 'gone' ? {} : s.fields)
const contentsOf = (s: State) => (s === 'gone' ? undefined : s.contents)
const live = (ctx: WriterCtx, area: Tracked['area']) => ctx.mine.filter((t) => t.area === area && t.acked !== 'gone' && !t.inflight)

const USER_OPS: Record<string, (ctx: WriterCtx) => Promise<unknown>> = {
  async createResource(ctx) {
    const name = `r-${ctx.rng.int(0, 1e9)}`
    const res = await ctx.client.call('POST', '/api/resources', ctx.jwt, { json: { ResourceName: name } })
    if (res.status !== 200) return
    const t: Tracked = { area: 'resource', id: res.body.GUID, jwt: ctx.jwt, acked: { fields: { ResourceName: name }, contents: new Uint8Array(0) } }
    ctx.mine.push(t)
    ctx.all.push(t)
  },
  async uploadResource(ctx) {
    const t = live(ctx, 'resource')[0]
    if (!t) return USER_OPS.createResource!(ctx)
    const contents = randomContents(ctx.rng)
    const { body, type } = multipart(contents)
    await write(t, { fields: fieldsOf(t.acked), contents }, () => ctx.client.call('PUT', `/api/resources/${t.id}/raw`, ctx.jwt, { body, type }))
  },
  async renameResource(ctx) {
    const t = ctx.rng.pick(live(ctx, 'resource').concat([undefined as never]))
    if (!t) return USER_OPS.createResource!(ctx)
    const name = `renamed-${ctx.rng.int(0, 1e9)}`
    await write(t, { fields: { ResourceName: name }, contents: contentsOf(t.acked) }, () =>
      ctx.client.call('PUT', `/api/resources/${t.id}`, ctx.jwt, { json: { ResourceName: name } }),
    )
  },
  async cloneResource(ctx) {
    const source = ctx.rng.pick(live(ctx, 'resource').concat([undefined as never]))
    if (!source || source.acked === 'gone') return USER_OPS.createResource!(ctx)
    const name = `clone-${ctx.rng.int(0, 1e9)}`
    const res = await ctx.client.call('POST', `/api/resources/${source.id}/clone`, ctx.jwt, { json: { Name: name } })
    if (res.status !== 200) return
    // the writer's own source has no write in flight, so the clone has its acknowledged contents
    const t: Tracked = { area: 'resource', id: res.body.GUID, jwt: ctx.jwt, acked: { fields: { ResourceName: name }, contents: source.acked.contents } }
    ctx.mine.push(t)
    ctx.all.push(t)
  },
  async deleteResource(ctx) {
    const t = live(ctx, 'resource')[0]
    if (t) await write(t, 'gone', () => ctx.client.call('DELETE', `/api/resources/${t.id}`, ctx.jwt))
  },
  async createFile(ctx) {
    const contents = randomContents(ctx.rng)
    const name = `f-${ctx.rng.int(0, 1e9)}`
    const { body, type } = multipart(contents, { Name: name })
    const res = await ctx.client.call('POST', '/api/files', ctx.jwt, { body, type })
    if (res.status !== 200) return
    const t: Tracked = { area: 'file', id: res.body.ThingUUID, guid: res.body.GUID, jwt: ctx.jwt, acked: { fields: { Name: name }, contents } }
    ctx.mine.push(t)
    ctx.all.push(t)
  },
  async replaceFile(ctx) {
    const t = live(ctx, 'file')[0]
    if (!t) return USER_OPS.createFile!(ctx)
    const contents = randomContents(ctx.rng)
    const { body, type } = multipart(contents)
    await write(t, { fields: fieldsOf(t.acked), contents }, () => ctx.client.call(ctx.rng.pick(['PUT', 'POST']), `/api/files/${t.guid}`, ctx.jwt, { body, type }))
  },
  async patchFile(ctx) {
    const t = ctx.rng.pick(live(ctx, 'file').concat([undefined as never]))
    if (!t) return USER_OPS.createFile!(ctx)
    const name = `patched-${ctx.rng.int(0, 1e9)}`
    await write(t, { fields: { Name: name }, contents: contentsOf(t.acked) }, () => ctx.client.call('PATCH', `/api/files/${t.guid}`, ctx.jwt, { json: { Name: name } }))
  },
  async deleteFile(ctx) {
    const t = live(ctx, 'file')[0]
    if (t) await write(t, 'gone', () => ctx.client.call('DELETE', `/api/files/${t.guid}`, ctx.jwt))
  },
  async createToken(ctx) {
    const res = await ctx.client.call('POST', '/api/tokens', ctx.jwt, { json: { name: 'crash', capabilities: ['ResourceRead'] } })
    if (res.status !== 200) return
    const t: Tracked = { area: 'token', id: res.body.id, jwt: ctx.jwt, acked: { fields: { description: '' } } }
    ctx.mine.push(t)
    ctx.all.push(t)
  },
  async updateToken(ctx) {
    const t = live(ctx, 'token')[0]
    if (!t) return USER_OPS.createToken!(ctx)
    const description = `d-${ctx.rng.int(0, 1e9)}`
    await write(t, { fields: { description } }, () => ctx.client.call('PUT', `/api/tokens/${t.id}`, ctx.jwt, { json: { description } }))
  },
  async deleteToken(ctx) {
    const t = live(ctx, 'token')[0]
    if (t) await write(t, 'gone', () => ctx.client.call('DELETE', `/api/tokens/${t.id}`, ctx.jwt))
  },
  async createDashboard(ctx) {
    const name = `d-${ctx.rng.int(0, 1e9)}`
    const data = { v: ctx.rng.int(0, 1e9) }
    const res = await ctx.client.call('POST', '/api/dashboards', ctx.jwt, { json: { Name: name, Data: data } })
    if (res.status !== 200) return
    track(ctx, { area: 'dashboard', id: String(res.body), jwt: ctx.jwt, acked: { fields: { Name: name, Data: JSON.stringify(data) } } })
  },
  async updateDashboard(ctx) {
    const t = ctx.rng.pick(live(ctx, 'dashboard').concat([undefined as never]))
    if (!t) return USER_OPS.createDashboard!(ctx)
    const data = { v: ctx.rng.int(0, 1e9), tiles: [ctx.rng.int(0, 9)] }
    await write(t, { fields: { ...fieldsOf(t.acked), Data: JSON.stringify(data) } }, () => ctx.client.call('PUT', `/api/dashboards/${t.id}`, ctx.jwt, { json: { Data: data } }))
  },
  async deleteDashboard(ctx) {
    const t = live(ctx, 'dashboard')[0]
    if (t) await write(t, 'gone', () => ctx.client.call('DELETE', `/api/dashboards/${t.id}`, ctx.jwt))
  },
  async createLibraryEntry(ctx) {
    const name = `l-${ctx.rng.int(0, 1e9)}`
    const query = `tag=q${ctx.rng.int(0, 1e9)}`
    const res = await ctx.client.call('POST', '/api/library', ctx.jwt, { json: { Name: name, Query: query } })
    if (res.status !== 200) return
    track(ctx, { area: 'library', id: res.body.ThingUUID, jwt: ctx.jwt, acked: { fields: { Name: name, Query: query } } })
  },
  async updateLibraryEntry(ctx) {
    const t = ctx.rng.pick(live(ctx, 'library').concat([undefined as never]))
    if (!t) return USER_OPS.createLibraryEntry!(ctx)
    const fields = { Name: `lu-${ctx.rng.int(0, 1e9)}`, Query: `tag=u${ctx.rng.int(0, 1e9)}` }
    await write(t, { fields }, () => ctx.client.call('PUT', `/api/library/${t.id}`, ctx.jwt, { json: fields }))
  },
  async deleteLibraryEntry(ctx) {
    const t = live(ctx, 'library')[0]
    if (t) await write(t, 'gone', () => ctx.client.call('DELETE', `/api/library/${t.id}`, ctx.jwt))
  },
  async ingest(ctx) {
    const { tag, batch } = ingestBatch(ctx)
    const res = await ctx.client.call('POST', '/api/ingest/json', ctx.jwt, { json: batch })
    // an answered batch is there whole after the kill; one cut off is there whole or not at all
    const t: Tracked = { area: 'ingest', id: tag, jwt: ctx.jwt, acked: res.status === 200 ? { fields: { Count: batch.length } } : 'gone' }
    track(ctx, t)
  },
  async savedSearch(ctx) {
    // entries of a tag of its own, a search over them saved; once DORMANT/SAVED it must survive the kill with the same results
    const { tag, batch, start, end } = ingestBatch(ctx)
    if ((await ctx.client.call('POST', '/api/ingest/json', ctx.jwt, { json: batch })).status !== 200) return
    // over the batch's own seconds only: a search walks every entry of its time range, whatever the tag
    const launched = await ctx.client.call('POST', '/api/searchctrl/launch', ctx.jwt, { json: { SearchString: `tag=${tag}`, SearchStart: start, SearchEnd: end } })
    if (launched.status !== 200) return
    const id = launched.body.SearchID as string
    if ((await ctx.client.call('PATCH', `/api/searchctrl/${id}/save`, ctx.jwt)).status !== 200) return
    // saved once dormant: no client attached (the launching session is, until it detaches)
    if ((await ctx.client.call('PUT', `/api/searchctrl/${id}/detach`, ctx.jwt)).status !== 200) return
    for (let i = 0; i < 200; i++) {
      const d = await ctx.client.call('GET', `/api/searchctrl/${id}/details`, ctx.jwt)
      if (d.status === 200 && d.body.State === 'DORMANT/SAVED') {
        track(ctx, { area: 'search', id, jwt: ctx.jwt, acked: { fields: { Data: batch.map((e) => e.Data).join() } } })
        return
      }
      await Bun.sleep(25)
    }
  },
}

function track(ctx: WriterCtx, t: Tracked) {
  ctx.mine.push(t)
  ctx.all.push(t)
}

/** 1–50 entries of a tag no other batch has, one a second from a random second of 2020, and the time range they span. */
function ingestBatch(ctx: WriterCtx) {
  const tag = `t${ctx.rng.int(0, 1e9)}-${ctx.mine.length}-${ctx.all.length}`
  const first = Date.UTC(2020, 0, 1) + ctx.rng.int(0, 3e7) * 1000
  const length = ctx.rng.int(1, 50)
  const batch = Array.from({ length }, (_, i) => ({
    TS: new Date(first + i * 1000).toISOString(),
    Tag: tag,
    SRC: '192.0.2.1',
    Data: Buffer.from(`${tag} entry ${i} ${'x'.repeat(ctx.rng.int(0, 200))}`).toString('base64'),
  }))
  return { tag, batch, start: new Date(first).toISOString(), end: new Date(first + length * 1000).toISOString() }
}

const ADMIN_OPS: Record<string, (ctx: WriterCtx) => Promise<unknown>> = {
  async createGroup(ctx) {
    const name = `g-${ctx.rng.int(0, 1e9)}-${ctx.mine.length}`
    const res = await ctx.client.call('POST', '/api/groups', ctx.jwt, { json: { Name: name, Desc: '' } })
    if (res.status !== 200) return
    const t: Tracked = { area: 'group', id: String(res.body), jwt: ctx.jwt, acked: { fields: { Name: name, Desc: '' } } }
    ctx.mine.push(t)
    ctx.all.push(t)
  },
  async updateGroup(ctx) {
    const t = live(ctx, 'group')[0]
    if (!t) return ADMIN_OPS.createGroup!(ctx)
    const desc = `desc-${ctx.rng.int(0, 1e9)}`
    await write(t, { fields: { ...fieldsOf(t.acked), Desc: desc } }, () => ctx.client.call('PUT', `/api/groups/${t.id}`, ctx.jwt, { json: { Desc: desc } }))
  },
  async deleteGroup(ctx) {
    const t = live(ctx, 'group')[0]
    if (t) await write(t, 'gone', () => ctx.client.call('DELETE', `/api/groups/${t.id}`, ctx.jwt))
  },
  async createUser(ctx) {
    const name = `u${ctx.rng.int(0, 1e9)}x${ctx.mine.length}`
    const res = await ctx.client.call('POST', '/api/users', ctx.jwt, { json: { User: name, Pass: 'password-123', Name: name, Email: `${name}@example.com`, Admin: false } })
    if (res.status !== 200) return
    const t: Tracked = { area: 'user', id: String(res.body), jwt: ctx.jwt, acked: { fields: { User: name } } }
    ctx.mine.push(t)
    ctx.all.push(t)
  },
  async deleteUser(ctx) {
    const t = live(ctx, 'user')[0]
    if (t) await write(t, 'gone', () => ctx.client.call('DELETE', `/api/users/${t.id}`, ctx.jwt))
  },
}

type ReadBack = { fields: Record<string, unknown>; contents?: Uint8Array } | undefined
/** Reads an item back through the API as admin (or its owner), ingested batches by their tag's count: undefined when it is not there. */
const READ_BACK: Record<Tracked['area'], (c: Client, admin: string, t: Tracked, tagCounts: Map<string, number>) => Promise<ReadBack>> = {
  async resource(c, admin, t) {
    const meta = await c.call('GET', `/api/resources/${t.id}`, admin)
    if (meta.status === 404) return undefined
    const raw = await c.call('GET', `/api/resources/${t.id}/raw`, admin)
    if (meta.status !== 200 || raw.status !== 200) throw new Error(`resource ${t.id}: ${meta.status}/${raw.status}`)
    return { fields: meta.body, contents: raw.bytes }
  },
  async file(c, admin, t) {
    const meta = await c.call('GET', `/api/files/${t.id}/details?admin=true`, admin)
    if (meta.status === 404) return undefined
    const raw = await c.call('GET', `/api/files/${t.id}?admin=true`, admin)
    if (meta.status !== 200 || raw.status !== 200) throw new Error(`file ${t.id}: ${meta.status}/${raw.status}`)
    return { fields: meta.body, contents: raw.bytes }
  },
  async token(c, _admin, t) {
    const res = await c.call('GET', `/api/tokens/${t.id}`, t.jwt)
    if (res.status === 404) return undefined
    if (res.status !== 200) throw new Error(`token ${t.id}: ${res.status}`)
    return { fields: res.body }
  },
  async user(c, admin, t) {
    const res = await c.call('GET', `/api/users/${t.id}`, admin)
    if (res.status === 404) return undefined
    if (res.status !== 200) throw new Error(`user ${t.id}: ${res.status}`)
    return { fields: res.body }
  },
  async group(c, admin, t) {
    const res = await c.call('GET', `/api/groups/${t.id}`, admin)
    if (res.status === 404) return undefined
    if (res.status !== 200) throw new Error(`group ${t.id}: ${res.status}`)
    return { fields: res.body }
  },
  async dashboard(c, admin, t) {
    const res = await c.call('GET', `/api/dashboards/${t.id}`, admin)
    if (res.status === 404) return undefined
    if (res.status !== 200) throw new Error(`dashboard ${t.id}: ${res.status}`)
    return { fields: { ...res.body, Data: JSON.stringify(res.body.Data) } }
  },
  async library(c, _admin, t) {
    const res = await c.call('GET', `/api/library/${t.id}`, t.jwt)
    if (res.status === 404) return undefined
    if (res.status !== 200) throw new Error(`library entry ${t.id}: ${res.status}`)
    return { fields: res.body }
  },
  async ingest(_c, _admin, t, tagCounts) {
    const n = tagCounts.get(t.id)
    return n === undefined ? undefined : { fields: { Count: n } }
  },
  async search(c, _admin, t) {
    const res = await c.call('GET', `/api/searchctrl/${t.id}/download/json`, t.jwt)
    if (res.status === 404) return undefined
    if (res.status !== 200) throw new Error(`search ${t.id}: ${res.status}`)
    return { fields: { Data: (res.body as { Data: string }[]).map((r) => r.Data).join() } }
  },
}

/**
 * Entries per ingest tag, read from the store (beside the running server): the rows, and the entries the compaction
 * moved into registered segments (server/search/segments.ts).
 */
async function tagCounts(dataDir: string): Promise<Map<string, number>> {
  const at = await openStoreAt(dataDir)
  const rows = await at.rows('SELECT t.name AS name, count(*) AS n FROM entries e JOIN ingest_tags t ON t.id = e.tag_id GROUP BY t.name')
  const names = new Map((await at.rows('SELECT id, name FROM ingest_tags')).map((r) => [Number(r.id), r.name as string]))
  const keys = await at.rows('SELECT key FROM entry_segments')
  await at.close()
  const counts = new Map(rows.map((r) => [r.name as string, Number(r.n)]))
  const blobs = await createDiskBlobStore({ dataDir })
  for (const { key } of keys) {
    const seg = new Segment(new Uint8Array(await ((await blobs.body(String(key))) as Blob).arrayBuffer()))
    for (let i = 0; i < seg.count; i++) {
      const name = names.get(seg.tag[i]!)!
      counts.set(name, (counts.get(name) ?? 0) + 1)
    }
  }
  return counts
}

function matches(actual: { fields: Record<string, unknown>; contents?: Uint8Array } | undefined, want: State): boolean {
  if (want === 'gone') return actual === undefined
  if (!actual) return false
  for (const [k, v] of Object.entries(want.fields)) if (actual.fields[k] !== v) return false
  return want.contents === undefined || Buffer.from(actual.contents ?? []).equals(Buffer.from(want.contents))
}

/** The raw state of a stopped server's data directory: integrity, foreign keys, blob files against references. */
async function inspect(dataDir: string) {
  // PostgreSQL checks its pages and foreign keys itself (a broken reference cannot commit): the integrity checks
  // are SQLite's.
  let integrity = ['ok']
  let foreignKeys: unknown[] = []
  if (!onPg) {
    const db = new Database(join(dataDir, 'quarry.db'))
    integrity = db.query<{ integrity_check: string }, []>('PRAGMA integrity_check').all().map((r) => r.integrity_check)
    foreignKeys = db.query('PRAGMA foreign_key_check').all()
    db.close()
  }
  const inspectedAt = Date.now() // every connection opened before this moment is the killed server's
  const at = await openStoreAt(dataDir)
  // PostgreSQL runs to its end what the killed server had already sent (a DELETE, a COMMIT, still unread in the
  // socket's buffer on a loaded machine) before its backend sees the connection closed and exits: the rows are
  // read once every backend that started before the inspection (the killed server's) is gone. Waiting only for
  // 'active' ones was not enough: a fresh-clone run counted 0 orphans, then the restart's sweep found 2.
  if (onPg)
    for (let waited = 0; ; waited += 20) {
      if (waited >= 10_000) throw new Error('backends of the killed server still run 10 s after the kill')
      const [left] = await at.rows(
        'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND backend_start < to_timestamp($1::double precision / 1000)',
        [inspectedAt],
      )
      if (Number(left!.n) === 0) break
      await Bun.sleep(20)
    }
  // A search the kill caught being saved keeps its row ('saving') and working files; the restart finishes the
  // move, writing its blobs again under the same keys. blobReferences names those keys as pending: kept by the
  // sweep (no orphans), and not missing while they are not written yet.
  const references = await blobReferences(at.store)
  await at.close()
  const blobs = await createDiskBlobStore({ dataDir })
  const files = new Set<string>()
  for await (const b of blobs.list()) files.add(b.key)
  const referenced = new Set(references.map((r) => r.key))
  return {
    integrity,
    foreignKeys,
    missing: references.filter((r) => !r.pending && !files.has(r.key)),
    orphans: [...files].filter((k) => !referenced.has(k)),
  }
}

async function waitFor(lines: string[], msg: string, ms = 10_000): Promise<Record<string, unknown>> {
  for (let waited = 0; waited < ms; waited += 20) {
    const line = lines.find((l) => JSON.parse(l).msg === msg)
    if (line) return JSON.parse(line)
    await Bun.sleep(20)
  }
  throw new Error(`no "${msg}" log line within ${ms} ms`)
}

/** One round: writers, SIGKILL, checks. Throws with the seed on the first broken rule. */
export async function crashRound(seed: number): Promise<CrashRoundResult> {
  const rng = prng(seed)
  const dataDir = mkdtempSync(join(tmpdir(), 'quarry-crash-'))
  const fail = (what: string) => new Error(`crash round failed (reproduce with QUARRY_CRASH_SEED=${seed} QUARRY_CRASH_ROUNDS=1): ${what}`)
  let server: Server | undefined
  try {
    server = await startServer(dataDir)
    const client = new Client(server.url)
    const admin = await client.login('admin', ADMIN_PASSWORD)
    const users: string[] = []
    for (let i = 0; i < USERS; i++) {
      const name = `writer${i}`
      const created = await client.call('POST', '/api/users', admin, { json: { User: name, Pass: 'password-123', Name: name, Email: `${name}@example.com`, Admin: false } })
      if (created.status !== 200) throw fail(`setup: ${created.status}`)
      users.push(await client.login(name, 'password-123'))
    }

    const all: Tracked[] = []
    // A saved search per user before the writers start (under 100 writers few get to DORMANT/SAVED before the kill)
    for (const [i, jwt] of users.entries()) {
      await USER_OPS.savedSearch!({ rng: prng(seed * 1000 - 1 - i), client, jwt, admin: false, mine: [], all })
      if (all.length !== i + 1) throw fail('setup: a saved search did not get to DORMANT/SAVED')
    }
    let stopped = false
    let answered = 0
    const writer = async (i: number) => {
      const isAdmin = i % 10 === 0
      const ctx: WriterCtx = { rng: prng(seed * 1000 + i), client, jwt: isAdmin ? admin : users[i % USERS]!, admin: isAdmin, mine: [], all }
      const ops = isAdmin ? ADMIN_OPS : USER_OPS
      const names = Object.keys(ops)
      while (!stopped) {
        try {
          await ops[ctx.rng.pick(names)]!(ctx)
          answered++
        } catch {
          return // the connection broke: the server was killed
        }
      }
    }
    const writers = Array.from({ length: WRITERS }, (_, i) => writer(i))
    // The kill comes at a random moment once the writers are under way (on a loaded machine the first answers
    // may take a while, and a kill before any of them would test nothing).
    for (let waited = 0; all.length < USERS + MIN_TRACKED_BEFORE_KILL && waited < 30_000; waited += 10) await Bun.sleep(10)
    const killAfterMs = rng.int(0, 2000)
    await Bun.sleep(killAfterMs)
    server.proc.kill('SIGKILL')
    await server.proc.exited
    stopped = true
    await Promise.all(writers)
    server = undefined

    // Down: the raw state.
    const down = await inspect(dataDir)
    if (down.integrity.join() !== 'ok') throw fail(`integrity_check after the kill: ${down.integrity.join('; ')}`)
    if (down.foreignKeys.length) throw fail(`foreign key violations after the kill: ${JSON.stringify(down.foreignKeys).slice(0, 500)}`)
    if (down.missing.length) throw fail(`items whose blob is missing after the kill: ${JSON.stringify(down.missing)}`)

    // Restarted: the sweep takes the kill's orphans; every acknowledged write is there.
    await Bun.sleep(5) // the orphans are older than the grace below
    server = await startServer(dataDir, { QUARRY_BLOB_SWEEP_GRACE: '1ms' })
    const sweep = await waitFor(server.lines, 'blob sweep')
    // The sweep takes every orphan of the kill. It may take more: the restart itself can release blobs before the
    // sweep reads the references (on PostgreSQL the restarted server is a new replica, and the orphaned-searches job
    // turns the killed one's searches that were being saved into errors, whose pending keys then point nowhere; seen
    // once in a fresh-clone run: 8 removed of 7). That it took nothing live is checked below: nothing may be missing.
    if (Number(sweep.removed) < down.orphans.length || sweep.missing !== 0)
      throw fail(`the sweep at restart removed ${sweep.removed} of ${down.orphans.length} orphans, missing ${sweep.missing}`)
    const after = new Client(server.url)
    const adminAgain = await after.login('admin', ADMIN_PASSWORD)
    let cutOff = 0
    const counts = await tagCounts(dataDir)
    for (const t of all) {
      if (t.inflight) cutOff++
      // the tokens' owners' sessions survive the restart, so their JWTs still read
      const actual = await READ_BACK[t.area](after, adminAgain, t, counts)
      if (!matches(actual, t.acked) && !(t.inflight && matches(actual, t.inflight)))
        throw fail(
          `${t.area} ${t.id}: want ${JSON.stringify(t.acked === 'gone' ? 'gone' : t.acked.fields)}${t.inflight ? ` or ${JSON.stringify(t.inflight === 'gone' ? 'gone' : t.inflight.fields)}` : ''}, have ${JSON.stringify(actual?.fields ?? 'gone')}`,
        )
    }
    server.proc.kill('SIGTERM')
    if ((await server.proc.exited) !== 0) throw fail('the restarted server did not stop cleanly')
    server = undefined

    const final = await inspect(dataDir)
    if (final.integrity.join() !== 'ok' || final.missing.length || final.orphans.length)
      throw fail(`after the restart: integrity ${final.integrity.join('; ')}, missing ${final.missing.length}, orphans ${final.orphans.length}`)
    return { seed, killAfterMs, answered, cutOff, tracked: all.length, trackedByArea: Object.fromEntries(Object.entries(Object.groupBy(all, (t) => t.area)).map(([a, ts]) => [a, ts!.length])), orphansAfterKill: down.orphans.length, sweptAtRestart: Number(sweep.removed) }
  } finally {
    if (server) {
      server.proc.kill('SIGKILL')
      await server.proc.exited
    }
    rmSync(dataDir, { recursive: true, force: true })
  }
}

/** The seeds of a run: QUARRY_CRASH_SEED when set (then consecutive seeds), else a fresh base. */
export function crashSeeds(rounds: number): number[] {
  const base = process.env.QUARRY_CRASH_SEED ? Number(process.env.QUARRY_CRASH_SEED) : Math.floor(Math.random() * 2 ** 20)
  return Array.from({ length: rounds }, (_, i) => base + i)
}
