// The replicas of one Quarry (docs/cluster.md): the registry every process writes its heartbeat to, and, when several
// processes share the store (PostgreSQL), the records of the searches each one holds and the forwarding of the
// requests that need a search to the replica that holds it.
//
// Guarantees:
// - Each process is one replica with a random id per start. It is live while its heartbeat (every heartbeatMs) is at
//   most LIVE_HEARTBEATS heartbeats old; the status objects list the live ones. A server alone (SQLite, or PostgreSQL
//   with QUARRY_SINGLE_SERVER) is the whole registry: held in memory, nothing written, no heartbeat.
// - A search is held by exactly one replica (its owner): the one that launched or imported it, or, for a saved
//   search whose owner is gone, the first replica that needs it (takeOver, a conditional write: two replicas never
//   both win). The owner publishes the search's record (the listing's facts) at every change a request makes before
//   it answers, and the progress of running searches every heartbeat; every replica lists the records of live
//   owners, the saved searches nobody holds, and its own searches from memory (exact, as a single process).
// - A request that needs a search another live replica holds is sent to it over HTTP with the cluster secret, with
//   the caller's own credentials, so the owner authenticates the caller and applies its permission rules as for a
//   request of its own; its answer (status, headers, body) is answered as is. An owner that does not answer is gone:
//   its unsaved searches answer 404, as after a restart; a saved one is taken over and served here.
// - Once an owner's heartbeat is older than the bound, its records are ignored everywhere (its unsaved searches
//   leave every listing) and swept; its saved searches stay listed from saved_searches, and those it was still
//   saving are marked ORPHANED by one survivor (failOrphans), so their owners see in ERROR what happened.
// - A search is taken over only for a caller who may see it: a caller who may not changes nothing.
// - Forwarded requests carry the secret and the caller's credentials: between replicas that advertise https, their
//   certificates are checked (against QUARRY_PEER_CA when set).
import type { Logger } from '../runtime/log'
import type { SavedSearchRow, SearchesRepo } from '../search/repo'
import { ORPHANED, type SaveState, type Search, type SearchManager, type SearchView, type Viewer, canView, isOrphaned } from '../search/manager'
import type { ClusterRepo, ReplicaRow, SearchRecordRow } from './repo'

/** How often a replica writes its heartbeat (and publishes the progress of its running searches). */
export const HEARTBEAT_MS = 2000
/** A replica is live while its last heartbeat is at most this many heartbeats old. */
export const LIVE_HEARTBEATS = 3
/** Rows of replicas dead this long are removed from the registry. */
const FORGET_MS = 10 * 60_000
/** How long a forwarded request may wait for the owner's answer to begin before the owner counts as gone. */
export const FORWARD_TIMEOUT_MS = 30_000
/**
 * An import's row is written (saving) before its search is published, while its results move to the blob store:
 * a saving import younger than this is never taken for one left by a dead replica.
 */
const IMPORT_SAVE_GRACE_MS = 10 * 60_000
/** The header that carries the cluster secret on internal requests. */
export const SECRET_HEADER = 'x-quarry-cluster-secret'
/** Where a replica takes requests forwarded to it: the original path follows. */
export const FORWARD_PREFIX = '/api/internal/forward'
/** The search WebSocket of a replica, for replicas that proxy a socket's requests to it. */
export const INTERNAL_WS_SEARCH = '/api/internal/ws/search'

/** Request headers that belong to one connection, not to the request (RFC 9110 §7.6.1), or to the cluster. */
const HOP_HEADERS = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'te', 'upgrade', 'proxy-connection', 'content-length', 'expect', SECRET_HEADER])

/** What a search's published record holds: what listings and details show, and whether it still runs. */
interface Published {
  record: Search['record']
  background: boolean
  save: SaveState
  attached: number
  unattendedSince: number
}

export interface ClusterDeps {
  repo: ClusterRepo
  saved: SearchesRepo
  manager: SearchManager
  log: Logger
  clock: () => number
  /** Several processes share the store: publish searches and forward requests. False on SQLite. */
  shared: boolean
  /** QUARRY_CLUSTER_SECRET; without it this process takes no internal requests. */
  secret: string | undefined
  heartbeatMs?: number
  /**
   * Whether a user still exists: the searches of a user deleted through another replica are removed by the heartbeat
   * (the replica that deleted the user removed its own at once).
   */
  userExists?: (uid: number) => Promise<boolean>
  /** How requests are sent to other replicas (default: fetch). */
  fetch?: (url: string, init: RequestInit) => Promise<Response>
  /**
   * QUARRY_PEER_CA: the PEM CA certificates the other replicas' https addresses are checked against, for forwarded
   * requests and relayed sockets; undefined: the system's.
   */
  peerCa?: string
}

export interface ReplicaSelf {
  name: string
  address: string
  description: unknown
}

export class Cluster {
  readonly id = crypto.randomUUID()
  readonly shared: boolean
  readonly heartbeatMs: number
  private self: ReplicaRow | undefined
  private timer: ReturnType<typeof setInterval> | undefined
  /** The data of each record last written, by search id. */
  private readonly published = new Map<string, string>()
  private syncing: Promise<void> | null = null
  private syncAgain = false
  /** Requests that reached this process through another replica: served here, never forwarded again. */
  private readonly forwarded = new WeakSet<Request>()
  private readonly secret: Buffer | undefined

  constructor(private readonly deps: ClusterDeps) {
    this.shared = deps.shared
    this.heartbeatMs = deps.heartbeatMs ?? HEARTBEAT_MS
    this.secret = deps.secret === undefined ? undefined : Buffer.from(deps.secret)
  }

  /** The oldest heartbeat of a live replica. */
  private liveSince(): number {
    return this.deps.clock() - this.heartbeatMs * LIVE_HEARTBEATS
  }

  // ---- the registry

  /** Registers this process and starts its heartbeat. */
  async start(self: ReplicaSelf): Promise<void> {
    const now = this.deps.clock()
    this.self = { id: this.id, name: self.name, address: self.address, description: JSON.stringify(self.description), started: now, heartbeat: now }
    // A server alone: nothing to write (a heartbeat every 2 s would be written for nobody to read).
    if (!this.shared) return
    await this.deps.repo.register(this.self)
    await this.claimLoaded()
    await this.sync()
    this.timer = setInterval(() => void this.beat(), this.heartbeatMs)
    this.timer.unref()
  }

  private async beat(): Promise<void> {
    const { repo, clock, log } = this.deps
    try {
      const now = clock()
      // Swept as dead after a long pause (a suspended VM): a new row, the same id, and every record written again
      // (the others swept them with the row; a search being saved without its record would be taken for an orphan).
      if (!(await repo.heartbeat(this.id, now))) {
        await repo.register({ ...this.self!, heartbeat: now })
        this.published.clear()
      }
      await repo.sweep(now - FORGET_MS, this.liveSince())
      if (this.shared) {
        await this.releaseLost()
        this.deps.manager.sweep()
        await this.dropOrphans()
        await this.sync()
      }
    } catch (e) {
      log.warn('the replica heartbeat failed', { replica: this.id, error: e instanceof Error ? e.message : String(e) })
    }
  }

  /**
   * Makes this replica the owner of the searches it loaded at start (those it was saving, whose working files only it
   * has), whoever holds their records: a survivor may have taken one over meanwhile, as ORPHANED, to answer for it
   * without its results; that survivor lets it go at its next heartbeat (releaseLost).
   */
  private async claimLoaded(): Promise<void> {
    const { repo, manager } = this.deps
    for (const s of manager.held()) {
      const data = JSON.stringify(this.publication(s))
      const holder = await repo.ownerOf(s.record.id, this.liveSince())
      if (await repo.claim(this.recordRow(s, data), this.liveSince(), holder?.owner)) this.published.set(s.record.id, data)
    }
  }

  /**
   * Stops holding the searches whose records another replica now owns (it claimed one this replica was found
   * unreachable for, or came back with the working files of one this replica held as ORPHANED): two replicas never
   * go on answering for one search. Nothing stored is touched.
   */
  private async releaseLost(): Promise<void> {
    const { repo, manager } = this.deps
    // Only the searches held before the records were read: one taken over while they were read is this replica's,
    // whatever the older record said.
    const held = manager.held()
    const owners = new Map((await repo.liveRecords(this.liveSince())).map((r) => [r.id, r.owner]))
    for (const s of held) {
      const owner = owners.get(s.record.id)
      if (owner === undefined || owner === this.id) continue
      manager.release(s.record.id)
      this.published.delete(s.record.id)
    }
  }

  /** Removes the searches this process holds for users that no longer exist (deleted through another replica). */
  private async dropOrphans(): Promise<void> {
    const { userExists, manager } = this.deps
    if (!userExists) return
    for (const uid of new Set(manager.held().map((s) => s.record.uid))) if (!(await userExists(uid))) await manager.removeOwnedBy(uid)
  }

  /** Stops the heartbeat and leaves the registry (a clean stop: the others stop listing this replica at once). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    if (!this.self) return
    this.self = undefined
    if (!this.shared) return
    await this.syncing?.catch(() => undefined)
    await this.deps.repo.leave(this.id).catch((e: unknown) => this.deps.log.warn('could not leave the replica registry', { error: String(e) }))
  }

  /** The live replicas, this one included once started; [] before start (an app driven without listening). */
  async replicas(): Promise<ReplicaRow[]> {
    if (!this.self) return []
    if (!this.shared) return [this.self]
    const live = await this.deps.repo.live(this.liveSince())
    return live.some((r) => r.id === this.id) ? live : [...live, this.self]
  }

  // ---- search records

  private publication(s: SearchView): Published {
    return { record: s.record, background: s.background, save: s.save, attached: s.clients.size, unattendedSince: s.unattendedSince }
  }

  private recordRow(s: SearchView, data: string): SearchRecordRow {
    return { id: s.record.id, owner: this.id, uid: s.record.uid, gid: s.record.gid, started: s.record.started, data, updated: this.deps.clock() }
  }

  /**
   * Writes the records of the searches this process holds that changed since they were last written, and removes
   * those of searches it no longer holds. Concurrent calls are joined: the last caller's changes are written before
   * its call resolves.
   */
  async sync(): Promise<void> {
    if (!this.shared) return
    if (this.syncing) {
      this.syncAgain = true
      while (this.syncing) await this.syncing.catch(() => undefined)
      if (!this.syncAgain) return
    }
    this.syncAgain = false
    this.syncing = this.write().finally(() => {
      this.syncing = null
    })
    await this.syncing
  }

  /** sync() without waiting (a socket closing, a search ending): failures are logged; the heartbeat tries again. */
  syncSoon(): void {
    if (!this.shared) return
    this.sync().catch((e: unknown) => this.deps.log.warn('could not publish the search records', { error: e instanceof Error ? e.message : String(e) }))
  }

  private async write(): Promise<void> {
    const current = new Map<string, { s: Search; data: string }>()
    for (const s of this.deps.manager.held()) current.set(s.record.id, { s, data: JSON.stringify(this.publication(s)) })
    const changed = [...current].filter(([id, c]) => this.published.get(id) !== c.data)
    const gone = [...this.published.keys()].filter((id) => !current.has(id))
    await this.deps.repo.putRecords(changed.map(([, c]) => this.recordRow(c.s, c.data)))
    await this.deps.repo.deleteRecords(this.id, gone)
    for (const [id, c] of changed) this.published.set(id, c.data)
    for (const id of gone) this.published.delete(id)
  }

  /**
   * The searches other replicas hold (live owners only) and the saved searches nobody holds, as listings show them;
   * never those this process holds (the caller lists them from memory).
   */
  async othersSearches(): Promise<SearchView[]> {
    if (!this.shared) return []
    const { repo, saved, manager } = this.deps
    const records = await repo.liveRecords(this.liveSince())
    const held = new Set(records.map((r) => r.id))
    const out: SearchView[] = []
    for (const r of records) {
      if (r.owner === this.id || manager.has(r.id)) continue
      const p = JSON.parse(r.data) as Published
      out.push({ record: p.record, background: p.background, save: p.save, unattendedSince: p.unattendedSince, clients: { size: p.attached } })
    }
    for (const row of await saved.listSaved())
      if ((row.state === 'saved' || isOrphaned(row)) && !held.has(row.id) && !manager.has(row.id)) out.push(savedView(row))
    return out
  }

  /**
   * Marks ORPHANED the saving searches no live replica holds: their replica died before their results reached the
   * blob store, so nobody can finish them (its working files went with it). Run by one replica at a time (a lease):
   * they are then listed, with the reason, until their owner deletes them. A replica that comes back with the
   * working files of one finishes saving it and clears the mark (SearchManager.init). Answers the ids marked.
   */
  async failOrphans(): Promise<string[]> {
    if (!this.shared) return []
    const now = this.deps.clock()
    const ids = await this.deps.repo.failOrphanedSaves(this.liveSince(), ORPHANED, now - IMPORT_SAVE_GRACE_MS)
    if (ids.length > 0) this.deps.log.warn('searches being saved by a replica that died were marked failed', { searches: ids })
    return ids
  }

  /** The user's searches that are not saved and that other live replicas hold (the per-user cap is cluster-wide). */
  async unsavedElsewhere(uid: number): Promise<number> {
    if (!this.shared) return 0
    let n = 0
    for (const r of await this.deps.repo.liveRecords(this.liveSince()))
      if (r.uid === uid && r.owner !== this.id && !this.deps.manager.has(r.id) && (JSON.parse(r.data) as Published).save !== 'saved') n++
    return n
  }

  // ---- forwarding

  /** Whether the request came from another replica (it is then served here, whoever holds the search). */
  isForwarded(request: Request): boolean {
    return this.forwarded.has(request)
  }

  /**
   * Where a request about search `id` is served. Undefined: here (a saved search nobody holds that the caller may
   * see is taken over first); a Response: the answer of the replica that holds it. `viewer` is asked only when this
   * replica would take the search over: a caller who may not see it leaves it where it is (the handler answers 404).
   */
  async route(request: Request, id: string, viewer: () => Promise<Viewer>, body?: string): Promise<Response | undefined> {
    if (!this.shared || this.deps.manager.has(id)) return undefined
    if (!this.forwarded.has(request)) {
      const owner = await this.deps.repo.ownerOf(id, this.liveSince())
      if (owner && owner.owner !== this.id) {
        const answer = await this.forward(request, owner.address, body)
        if (answer) return answer
        await this.takeOver(id, await viewer(), owner.owner)
        return undefined
      }
    }
    await this.takeOver(id, await viewer())
    return undefined
  }

  /** The live owner's address of a search another replica holds; undefined when it is (or may become) this one's. */
  async remoteOwner(id: string): Promise<{ owner: string; address: string } | undefined> {
    if (!this.shared || this.deps.manager.has(id)) return undefined
    const owner = await this.deps.repo.ownerOf(id, this.liveSince())
    return owner && owner.owner !== this.id ? owner : undefined
  }

  /**
   * Holds a saved search of the store here when no live replica holds it (or only `from`, found unreachable), and
   * `viewer` may see it: checked before anything is written, so a caller who may not see a search never moves it.
   * Also a search whose saving was cut off by the death of its replica (ORPHANED), so that its owner can read why and
   * delete it. False when it is neither, the viewer may not see it, or another replica holds it.
   */
  async takeOver(id: string, viewer: Viewer, from?: string): Promise<boolean> {
    const row = await this.deps.saved.getSaved(id)
    if (!row || !(row.state === 'saved' || isOrphaned(row))) return false
    const view = savedView(row)
    if (!canView(viewer, view)) return false
    const data = JSON.stringify(this.publication(view))
    if (!(await this.deps.repo.claim(this.recordRow(view, data), this.liveSince(), from))) return false
    this.deps.manager.adoptSaved(row)
    this.published.set(id, data)
    return true
  }

  /**
   * Sends the request to the replica at `address` under FORWARD_PREFIX, with the secret and the caller's own
   * headers, and answers its answer. Undefined when that replica does not answer (refused, reset, or no answer
   * within FORWARD_TIMEOUT_MS).
   */
  async forward(request: Request, address: string, body?: string): Promise<Response | undefined> {
    const url = new URL(request.url)
    const headers = new Headers()
    for (const [k, v] of request.headers) if (!HOP_HEADERS.has(k.toLowerCase())) headers.set(k, v)
    headers.set(SECRET_HEADER, this.deps.secret ?? '')
    const abort = new AbortController()
    const timer = setTimeout(() => abort.abort(), FORWARD_TIMEOUT_MS)
    try {
      const send = this.deps.fetch ?? ((u: string, init: RequestInit) => fetch(u, init))
      const res = await send(`${address}${FORWARD_PREFIX}${url.pathname}${url.search}`, {
        method: request.method,
        headers,
        body: ['GET', 'HEAD'].includes(request.method) ? undefined : (body ?? ''),
        redirect: 'manual',
        signal: abort.signal,
        decompress: false,
        ...this.peerTls(),
      } as RequestInit)
      clearTimeout(timer)
      return new Response(res.body, { status: res.status, headers: res.headers })
    } catch (e) {
      clearTimeout(timer)
      this.deps.log.warn('a replica did not answer a forwarded request: its searches count as gone', {
        address,
        path: url.pathname,
        error: e instanceof Error ? e.message : String(e),
      })
      return undefined
    }
  }

  /**
   * Checks the secret of an internal request, in constant time: 'missing' (no header), 'wrong' (another value, or
   * this process has no secret and takes no internal requests) or 'ok'.
   */
  checkSecret(given: string | null): 'ok' | 'missing' | 'wrong' {
    if (given === null || given === '') return 'missing'
    if (!this.secret) return 'wrong'
    const g = Buffer.from(given)
    // Compared over the configured secret's length whatever the length given, so the time tells nothing.
    const padded = Buffer.alloc(this.secret.length)
    g.copy(padded, 0, 0, Math.min(g.length, padded.length))
    return crypto.timingSafeEqual(padded, this.secret) && g.length === this.secret.length ? 'ok' : 'wrong'
  }

  /** The request of another replica as this process serves it (marked: it is not forwarded again). */
  accept(inner: Request): Request {
    this.forwarded.add(inner)
    return inner
  }

  /** Bun's TLS options for connections to other replicas: their certificates checked against QUARRY_PEER_CA. */
  private peerTls(): { tls?: { ca: string } } {
    return this.deps.peerCa === undefined ? {} : { tls: { ca: this.deps.peerCa } }
  }

  /**
   * The URL, headers and TLS options with which this process opens the search socket of the replica at `address` for
   * a caller.
   */
  upstreamSocket(address: string, headers: Headers): { url: string; headers: Record<string, string>; protocols: string[]; tls?: { ca: string } } {
    const out: Record<string, string> = { [SECRET_HEADER]: this.deps.secret ?? '' }
    for (const name of ['authorization', 'service-token', 'gravwell-token', 'cookie']) {
      const v = headers.get(name)
      if (v !== null) out[name] = v
    }
    const protocols = (headers.get('sec-websocket-protocol') ?? '').split(',').map((p) => p.trim()).filter((p) => p !== '')
    return { url: `${address.replace(/^http/, 'ws')}${INTERNAL_WS_SEARCH}`, headers: out, protocols, ...this.peerTls() }
  }
}

/**
 * What a replica says at start when the other replicas reach it over plain HTTP on an address outside this host:
 * forwarded requests carry the cluster secret and the callers' JWTs and API tokens, readable by anyone on the
 * network path. Undefined for https, and for a loopback address (every replica on one host).
 */
export function clearTextWarning(origin: string): string | undefined {
  const url = new URL(origin)
  if (url.protocol !== 'http:') return undefined
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host)) return undefined
  return `this replica is reached by the others at ${origin} over plain HTTP: the requests they forward to it carry the cluster secret and the users' JWTs and API tokens in clear; serve HTTPS (QUARRY_TLS_CERT, QUARRY_TLS_KEY) and advertise https (QUARRY_ADVERTISE, QUARRY_PEER_CA for a private CA), or keep the replicas on a network nobody else can read (docs/cluster.md)`
}

/** A saved (or ORPHANED) search as listings show it when nobody holds it: no client, nothing running. */
function savedView(row: SavedSearchRow): SearchView {
  const { state, resultsKey: _r, indexKey: _i, ...record } = row
  return { record, background: false, save: state, unattendedSince: 0, clients: { size: 0 } }
}
