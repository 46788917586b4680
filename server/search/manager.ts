// The search manager: every search the server knows and its state machine (docs/api.md "Search states"). Running
// one search is the runner's (runner.ts).
//
// A search is described by four facts, and its State words follow from them alone (stateWords):
//   clients     the sessions (or API tokens) attached to it;
//   background  set by Background at launch or PATCH .../background;
//   save        'none' | 'saving' (asked to be saved, results not yet in the blob store) | 'saved';
//   error       why it failed, '' when it did not.
// Whether it still runs is not a state word (docs/api.md "Search states": no STOPPED); `finished` tells it.
//
// Guarantees:
// - Stopping or deleting a search halts its run (runner.ts) at its next step and gives up a batch it has on a worker.
// - One user has at most `maxPerUser` searches that are not saved (running or kept), on all replicas together: a
//   launch past it is 429, unless some of theirs here only wait out their grace period: the oldest of those are
//   removed first to make room (a client that closes its searches and launches more never meets the cap).
// - Results go to the working directory as they are found (runner.ts); a saving search is moved to the blob store
//   (saving.ts) only once it is DORMANT (no client) and finished, in the background.
// - A search that is neither backgrounded nor saved and has no client is removed `graceMs` after it lost its last
//   client by a detach (checked by sweep(), which every operation runs first and the server runs periodically).
// - A client that ends detaches from every search: a session or API token that ends (detachClients), and an API
//   token once its expiry has passed (sweep()). A search it leaves without client that is neither backgrounded nor
//   saved is removed at once (no grace period: an ended client cannot come back to it). A client that continues
//   under a new name (refreshed JWT) or with a new expiry (refreshed or changed token) keeps its attachments.
// - Deleting removes the search from memory, its row, its working files and its blobs before it answers.
// - Saved searches are rows + blobs and are loaded again at start; a search that was 'saving' at a crash is
//   finished from its working files when they are there.
import { existsSync, renameSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { type BlobStore, discardBlob } from '../blob'
import { Errors } from '../http/errors'
import type { Quotas } from '../store/quota'
import type { ArchiveLimits } from './archive'
import type { EntriesRepo } from './entries'
import { TagDirectory } from './tags'
import { type RunnerDeps, SearchRunner } from './runner'
import { readRecords, readRecordsWithin, readRecordsWithinFromEnd, resultSource } from './records'
import type { ImportInfo, LaunchInfo, SavedSearchRow, SearchRecord, SearchesRepo } from './repo'
import { INDEX_ENTRY_BYTES, type ResultSource, resultBytes, type WorkFiles, listWorkDir, removeWorkFiles, workDir, workFiles } from './results'
import { type ImportBound, type ReadArchive, type SaveState, exportArchive, readArchiveInto, savedRow, transferToBlobs } from './saving'
import type { PipelineStats } from '../../engine/pipeline-stats'
import type { CompiledQuery } from '../../engine/query'

/**
 * The error of a saving search whose replica died before its results reached the blob store (they were in that
 * replica's working files): set by a surviving replica (server/cluster), so that its owner sees what happened.
 */

/** Entries a preview search reads (the newest of its tags; the Go client: "a few hundred or thousand entries"). */
export const PREVIEW_ENTRIES = 500
export const ORPHANED = 'the replica that ran this search stopped (crash or kill) before its results were saved: they are lost; launch the search again'
/** What a search marked ORPHANED says instead when its replica came back with the results it had found until then. */
const CUT_OFF = 'the replica that ran this search stopped before the search finished: the results are those it had found until then'

/** A saving search left by a dead replica (marked by a surviving one). */
export const isOrphaned = (row: Pick<SavedSearchRow, 'state' | 'error'>) => row.state === 'saving' && row.error.startsWith(ORPHANED)

/** History entries answered at most, and kept per user (older launches are dropped as new ones are recorded). */
const HISTORY_LIMIT = 1000

export type { SaveState }

/**
 * One search in memory: the RunTarget of its run (runner.ts), what its moves to the blob store change (saving.ts)
 * and what reads of its results read (records.ts).
 */
export interface Search {
  record: SearchRecord
  clients: Set<string>
  background: boolean
  save: SaveState
  /** True while its run feeds it (runner.ts). */
  running: boolean
  /** Set when the search is stopped or deleted: its run ends at its next step. */
  halt: boolean
  /** Aborted with halt: a batch being matched for it on a worker is given up at once. */
  abort: AbortController
  removed: boolean
  /** Clock time it lost its last client (0 while it has one). */
  unattendedSince: number
  /** Its working files, until its results are in the blob store. */
  work: WorkFiles | null
  blob: { results: string; index: string } | null
  runner: Promise<void> | null
  transfer: Promise<void> | null
  /** What went through each module of its pipeline, by time (the stats requests); absent for a search loaded from storage. */
  stats?: PipelineStats
}

/**
 * What listings and details show of a search: a search in this process's memory, or the record another replica
 * published (server/cluster), whose clients are only a count.
 */
export type SearchView = Pick<Search, 'record' | 'background' | 'save' | 'unattendedSince'> & { clients: { readonly size: number } }

/** Who asks: their UID, admin rights in effect, and the groups they belong to. */
export interface Viewer {
  uid: number
  admin: boolean
  groups: ReadonlySet<number>
}

export interface LaunchRequest {
  uid: number
  gid: number
  client: string
  /** When the client stops being one (an API token's expiry); 0: it ends only by an event (detachClients). */
  clientExpires: number
  clientKind: LaunchInfo['client']
  userQuery: string
  query: CompiledQuery
  start: number
  end: number
  background: boolean
  noHistory: boolean
  metadata: unknown
}

/** What the manager needs; the rest of RunnerDeps goes to its runner. */
export interface ManagerDeps extends Omit<RunnerDeps, 'tags'> {
  /** Storage quotas: a saved search counts against its owner's once SAVED (server/store/quota.ts); absent: none. */
  quotas?: Quotas
  entries: EntriesRepo
  /** The tags by name and number, kept in memory (server/search/tags.ts); default: one over `entries`, alone. */
  tags?: TagDirectory
  searches: SearchesRepo
  blobs: BlobStore
  dataDir: string
  graceMs: number
  /** Live searches (not saved) one user may have at a time; a launch past it is refused with 429. */
  maxPerUser: number
  /** Launches kept in each user's history (default HISTORY_LIMIT, also what is answered). */
  historyKeep?: number
  /**
   * In a cluster (shared store), saved searches are not all loaded at start: each is held by one replica at a time,
   * the one that launched it or took it over (adoptSaved); only those this process was saving are loaded.
   */
  shared?: boolean
  /**
   * In a cluster: the user's searches that are not saved and that other live replicas hold, so that the cap
   * (maxPerUser) holds over the whole cluster, not per replica.
   */
  unsavedElsewhere?: (uid: number) => Promise<number>
}

/** The State words of a search, in the clients' order (ACTIVE/BACKGROUNDED, SAVED/ATTACHED, DORMANT/SAVED). */
export function stateWords(s: Pick<Search, 'background' | 'save'> & { clients: { readonly size: number }; record: { error: string } }): string {
  const attached = s.clients.size > 0
  const words: string[] = []
  if (s.save === 'saved') words.push(...(attached ? ['SAVED', 'ATTACHED'] : ['DORMANT', 'SAVED']))
  else {
    words.push(!attached && (s.background || s.save === 'saving') ? 'DORMANT' : 'ACTIVE')
    if (s.background) words.push('BACKGROUNDED')
    if (s.save === 'saving') words.push('SAVING')
  }
  if (s.record.error) words.push('ERROR')
  return words.join('/')
}


export class SearchManager {
  private readonly searches = new Map<string, Search>()
  /** The clients that end at a time (API tokens with an expiry), with that time; sweep() detaches them then. */
  private readonly clientExpiry = new Map<string, number>()
  private readonly dir: string
  private readonly runner: SearchRunner
  /** The engine's tags by name and number (stable: the store's own ids). */
  readonly tags: TagDirectory

  constructor(private readonly deps: ManagerDeps) {
    this.dir = workDir(deps.dataDir)
    this.tags = deps.tags ?? new TagDirectory(deps.entries)
    this.runner = new SearchRunner({ ...deps, tags: this.tags })
  }

  /**
   * Loads saved searches, finishes the move of those that were saving at a stop, and removes working files no
   * saved search needs (results of unsaved searches of an earlier run).
   */
  async init(): Promise<void> {
    const keep = new Set<string>()
    for (const row of await this.deps.searches.listSaved()) {
      // In a cluster, a saving search is this process's only when its working files are here (an earlier run of it).
      if (this.deps.shared && (row.state === 'saved' || !existsSync(workFiles(this.dir, row.id).results))) continue
      const s = this.fromRow(row)
      if (row.state === 'saving') {
        const files = workFiles(this.dir, row.id)
        if (!existsSync(files.results) || !existsSync(files.index)) {
          this.deps.log.warn('a search that was being saved lost its results; removed', { search: row.id })
          await this.deps.searches.deleteSaved(row.id)
          continue
        }
        s.work = files
        s.record.storeSize = statSync(files.results).size
        s.record.indexSize = statSync(files.index).size
        s.record.itemCount = s.record.indexSize / INDEX_ENTRY_BYTES
        // Back with its working files after another replica marked it orphaned: the results are not lost after all.
        if (s.record.error.startsWith(ORPHANED)) s.record.error = s.record.finished ? '' : CUT_OFF
        if (!s.record.finished) s.record.finished = s.record.lastUpdate
        keep.add(`${row.id}.ndjson`).add(`${row.id}.idx`)
      }
      this.searches.set(row.id, s)
      this.maybeTransfer(s)
    }
    for (const name of listWorkDir(this.dir)) if (!keep.has(name)) rmSync(join(this.dir, name), { force: true })
  }

  private fromRow(row: SavedSearchRow): Search {
    const { state, resultsKey, indexKey, ...record } = row
    return {
      record,
      clients: new Set(),
      background: false,
      save: state,
      running: false,
      halt: false,
      abort: new AbortController(),
      removed: false,
      unattendedSince: 0,
      work: null,
      blob: resultsKey && indexKey ? { results: resultsKey, index: indexKey } : null,
      runner: null,
      transfer: null,
    }
  }

  private newId(): string {
    for (;;) {
      const n = crypto.getRandomValues(new Uint32Array(2))
      const id = String(1_000_000_000 + ((n[0]! * 4096 + (n[1]! % 4096)) % 9_000_000_000))
      if (!this.searches.has(id)) return id
    }
  }

  // ---- launching and running

  /** Compiles a query; its regexes are compiled on a worker first, each within COMPILE_BUDGET_MS (runner.ts). QueryError when refused. */
  parse(src: string): Promise<CompiledQuery> {
    return this.runner.compile(src)
  }

  async launch(req: LaunchRequest): Promise<Search> {
    this.sweep()
    let live = (await this.deps.unsavedElsewhere?.(req.uid)) ?? 0
    for (const s of this.searches.values()) if (s.record.uid === req.uid && s.save !== 'saved') live++
    if (live >= this.deps.maxPerUser) live -= this.evictUnattended(req.uid, live - this.deps.maxPerUser + 1)
    if (live >= this.deps.maxPerUser)
      throw Errors.tooManyRequests(
        `you have ${live} searches that are not saved, the most one user may have (QUARRY_MAX_SEARCHES_PER_USER): delete, detach or save some first`,
      )
    // A search's results are bounded by its owner's quota (the whole quota, not what is left: unsaved results are
    // working files, not stored bytes): one that could never be saved stops growing there, so a short launch
    // request cannot make the server write unbounded results (docs/security.md, "Searches").
    const maxResultBytes = await this.deps.quotas?.limitFor(req.uid)
    const resources = await this.runner.loadResources(req.uid, req.query)
    const now = this.deps.clock()
    const id = this.newId()
    const files = workFiles(this.dir, id)
    const s: Search = {
      record: {
        id,
        uid: req.uid,
        gid: req.gid,
        userQuery: req.userQuery,
        effectiveQuery: req.query.text,
        startRange: req.start,
        endRange: req.end,
        started: now,
        finished: 0,
        lastUpdate: now,
        storeSize: 0,
        indexSize: 0,
        itemCount: 0,
        metadata: req.metadata ?? null,
        import: null,
        launchInfo: { background: req.background, client: req.clientKind },
        noHistory: req.noHistory,
        error: '',
      },
      clients: new Set([req.client]),
      background: req.background,
      save: 'none',
      running: true,
      halt: false,
      abort: new AbortController(),
      removed: false,
      unattendedSince: 0,
      work: files,
      blob: null,
      runner: null,
      transfer: null,
    }
    if (!req.noHistory)
      await this.deps.searches.addHistory(
        { uid: req.uid, gid: req.gid, userQuery: req.userQuery, effectiveQuery: s.record.effectiveQuery, launched: now },
        this.deps.historyKeep ?? HISTORY_LIMIT,
      )
    this.searches.set(id, s)
    this.noteExpiry(req.client, req.clientExpires)
    s.runner = this.feed(s, req.query, maxResultBytes, resources)
    return s
  }

  /** Runs the search; once it ended, its files go if it was deleted meanwhile, else a saving one is moved. */
  private async feed(s: Search, query: CompiledQuery, maxResultBytes: number | undefined, resources: Map<string, Uint8Array>): Promise<void> {
    await this.runner.run(s, query, maxResultBytes, resources)
    if (s.removed && s.work) removeWorkFiles(s.work)
    else this.maybeTransfer(s)
  }

  // ---- the moves of the state table

  /** PATCH .../background: from ACTIVE or BACKGROUNDED only; owner, group member or admin. */
  background(v: Viewer, id: string): void {
    const s = this.viewable(v, id)
    if (s.save !== 'none') throw Errors.conflict(`search ${id} is ${stateWords(s)}: only an active search can be backgrounded`)
    s.background = true
  }

  /** PATCH .../save: SAVING, then SAVED once dormant and finished; a body replaces Metadata. */
  async save(v: Viewer, id: string, metadata: unknown): Promise<void> {
    const s = this.viewable(v, id)
    // Refused up front (413, nothing changed) when the results so far already take the owner past the quota; a
    // search that grows past it afterwards ends in ERROR when it is moved (transfer).
    if (s.save === 'none') {
      const quota = await this.deps.quotas?.of(s.record.uid)
      const size = s.record.storeSize + s.record.indexSize
      if (quota && size > 0 && quota.used + size > quota.limit) throw Errors.quotaExceeded(quota.limit, quota.used, size)
    }
    if (metadata !== undefined) s.record.metadata = metadata
    if (s.save === 'none') s.save = 'saving'
    await this.deps.searches.putSaved(savedRow(s))
    this.maybeTransfer(s)
  }

  /** PUT .../stop: owner or admin; the feed stops, the output stays. A saved or dormant search: 400. */
  stop(v: Viewer, id: string): void {
    const s = this.modifiable(v, id, 'stop')
    const words = stateWords(s)
    if (/\b(SAVED|DORMANT)\b/.test(words)) throw Errors.badRequest(`search ${id} is ${words}: a saved or dormant search cannot be stopped`)
    halt(s)
  }

  /** DELETE: owner or admin; clients are detached and every stored result is removed before this answers. */
  async delete(v: Viewer, id: string): Promise<void> {
    const s = this.modifiable(v, id, 'delete')
    await this.remove(s)
  }

  /** `expires`: when the client ends by itself (an API token's expiry), 0 for never. */
  attach(v: Viewer, id: string, client: string, expires = 0): void {
    const s = this.viewable(v, id)
    s.clients.add(client)
    s.unattendedSince = 0
    this.noteExpiry(client, expires)
  }

  private noteExpiry(client: string, expires: number): void {
    if (expires > 0) this.clientExpiry.set(client, expires)
    else this.clientExpiry.delete(client)
  }

  /**
   * A client keeps its attachments with a new expiry (a refreshed or changed API token; 0: never). The sweep runs
   * first, so a token that had already expired has lost them and does not get them back.
   */
  setClientExpiry(client: string, expires: number): void {
    this.sweep()
    if (this.clientExpiry.has(client) || [...this.searches.values()].some((s) => s.clients.has(client))) this.noteExpiry(client, expires)
  }

  detach(v: Viewer, id: string, client: string): void {
    this.detachClient(this.viewable(v, id), client)
  }

  /**
   * A client lets go of a search it attached, whatever its caller may see now: one that lost the right (a demoted
   * admin, a member removed from the group) must not keep the search held. Only that client's attachment goes;
   * nothing when the search is gone.
   */
  releaseClient(id: string, client: string): void {
    const s = this.searches.get(id)
    if (s) this.detachClient(s, client)
  }

  /**
   * The clients have ended (sessions: logout, lock, deletion, expiry; API tokens: deleted or expired): every search
   * loses them. One left with no client that is neither backgrounded nor saved is removed at once, as at the end of its
   * grace period: no ended client can come back to it, so only its owner's cap would remember it.
   */
  detachClients(clients: readonly string[], since = this.deps.clock()): void {
    if (clients.length === 0) return
    for (const c of clients) this.clientExpiry.delete(c)
    for (const s of [...this.searches.values()]) {
      let lost = false
      for (const c of clients) if (s.clients.delete(c)) lost = true
      if (!lost || s.clients.size > 0) continue
      s.unattendedSince = since
      if (unkept(s)) this.discard(s)
      else this.maybeTransfer(s)
    }
  }

  /** A client continues under a new name (a refreshed JWT is a new session): its attachments move along. */
  replaceClient(from: string, to: string): void {
    for (const s of this.searches.values()) if (s.clients.delete(from)) s.clients.add(to)
  }

  /** `since`: when the client left (the grace period runs from then). */
  private detachClient(s: Search, client: string, since = this.deps.clock()): void {
    if (!s.clients.delete(client) || s.clients.size > 0) return
    s.unattendedSince = since
    this.maybeTransfer(s)
  }

  /** Removes every search of a deleted user, with its results (their saved rows went with the user). */
  async removeOwnedBy(uid: number): Promise<void> {
    for (const s of [...this.searches.values()]) if (s.record.uid === uid) await this.remove(s)
  }

  /**
   * Makes room under the cap for a launch of `uid`: removes up to `wanted` of their searches here that wait out their
   * grace period (no client, neither backgrounded nor saved), those left longest ago first. The grace period is for
   * coming back to a search; a user launching past the cap has moved on, and only such a search could stop them.
   * Answers how many went.
   */
  private evictUnattended(uid: number, wanted: number): number {
    const waiting = [...this.searches.values()]
      .filter((s) => s.record.uid === uid && unkept(s) && s.clients.size === 0)
      .sort((a, b) => a.unattendedSince - b.unattendedSince)
      .slice(0, wanted)
    for (const s of waiting) this.discard(s)
    return waiting.length
  }

  /** Removes searches nobody keeps: no client for the grace period, neither backgrounded nor saved. */
  sweep(): void {
    const now = this.deps.clock()
    for (const [client, expires] of this.clientExpiry) if (expires <= now) this.detachClients([client], expires)
    for (const s of this.searches.values()) {
      if (unkept(s) && s.clients.size === 0 && now - s.unattendedSince >= this.deps.graceMs) this.discard(s)
    }
  }

  /** Removes a search nobody keeps, without waiting (it is gone from the map at once). */
  private discard(s: Search): void {
    void this.remove(s).catch((e: unknown) => this.deps.log.error('could not remove a search', { search: s.record.id, error: String(e) }))
  }

  private async remove(s: Search): Promise<void> {
    s.removed = true
    halt(s)
    s.clients.clear()
    this.searches.delete(s.record.id)
    // The runner is not waited for (it may be between steps); it removes the files again when it ends.
    // A move to the blob store is waited for: it sees `removed` and discards what it put, and nothing else waits for it once the
    // search left the map (settled() included), so answering earlier would let its blobs come and go afterwards.
    if (s.transfer) await s.transfer
    if (s.save !== 'none') await this.deps.searches.deleteSaved(s.record.id)
    if (s.work) removeWorkFiles(s.work)
    if (s.blob) {
      await discardBlob(this.deps.blobs, s.blob.results, this.deps.log)
      await discardBlob(this.deps.blobs, s.blob.index, this.deps.log)
    }
  }

  /** Starts moving a saving search's results to the blob store once it is dormant and finished. */
  private maybeTransfer(s: Search): void {
    if (s.save !== 'saving' || s.running || s.clients.size > 0 || s.transfer || s.removed || !s.work) return
    s.transfer = transferToBlobs(this.deps, s, s.work).then(() => undefined).finally(() => {
      s.transfer = null
    })
  }

  /** Waits until no search is running or being moved (tests and shutdown). */
  async settled(): Promise<void> {
    for (;;) {
      const busy = [...this.searches.values()].flatMap((s) => [s.runner, s.transfer]).filter((p) => p !== null)
      const pending = [...this.searches.values()].some((s) => s.running || s.transfer)
      if (!pending) return
      await Promise.all(busy)
    }
  }

  /** Stops every runner (shutdown); saved searches stay as they are. */
  async close(): Promise<void> {
    for (const s of this.searches.values()) halt(s)
    await this.settled()
    this.runner.close()
  }

  /**
   * Removes working files no search owns that have not been written for `graceMs`: what an import or a search cut
   * off by a crash left (init() does the same at start). Answers how many files were removed.
   */
  async sweepWorkFiles(graceMs: number): Promise<number> {
    const owned = new Set<string>()
    for (const s of this.searches.values()) if (s.work) owned.add(s.work.results).add(s.work.index)
    const before = Date.now() - graceMs
    let removed = 0
    for (const name of listWorkDir(this.dir)) {
      const path = join(this.dir, name)
      if (owned.has(path)) continue
      const modified = statSync(path, { throwIfNoEntry: false })?.mtimeMs
      if (modified !== undefined && modified < before) {
        rmSync(path, { force: true })
        removed++
      }
    }
    return removed
  }

  // ---- export and import (archive format: server/search/archive.ts, docs/search-archive.md)

  /** A saved search as a search archive (.tar.gz), streamed from its stored results. */
  exportArchive(s: Search): Promise<ReadableStream<Uint8Array>> {
    return exportArchive(this.deps.blobs, s)
  }

  /**
   * Reads a search archive into fresh working files. Resolves once the whole archive was read and found sound;
   * on any failure (ArchiveError for the archive's faults) the files are removed and nothing is left.
   */
  readArchive(stream: ReadableStream<Uint8Array>, limits: Partial<ArchiveLimits>, bound?: ImportBound): Promise<ReadArchive> {
    return readArchiveInto(this.importFiles(), stream, limits, bound)
  }

  /** A working file pair for an import, under a name no search uses. */
  importFiles(): WorkFiles {
    return workFiles(this.dir, `import-${crypto.randomUUID()}`)
  }

  /**
   * Makes an imported search (its results in `files`, written by a ResultWriter) a SAVED search of the importer.
   * The files are renamed to the new search's own and moved to the blob store before this answers.
   */
  async adopt(record: Omit<SearchRecord, 'id' | 'import'> & { import: ImportInfo }, files: WorkFiles): Promise<Search> {
    const id = this.newId()
    const own = workFiles(this.dir, id)
    renameSync(files.results, own.results)
    renameSync(files.index, own.index)
    const s: Search = {
      record: { ...record, id },
      clients: new Set(),
      background: false,
      save: 'saving',
      running: false,
      halt: false,
      abort: new AbortController(),
      removed: false,
      unattendedSince: 0,
      work: own,
      blob: null,
      runner: null,
      transfer: null,
    }
    try {
      await this.deps.searches.putSaved(savedRow(s))
      const failed = await transferToBlobs(this.deps, s, own)
      if (s.save !== 'saved') throw failed ?? new Error(s.record.error)
    } catch (e) {
      await this.deps.searches.deleteSaved(id)
      removeWorkFiles(own)
      throw e
    }
    this.searches.set(id, s)
    return s
  }

  /**
   * A saved search of the store held from now on by this process (in a cluster, one whose holder is gone or that
   * no replica held yet); the one already held when it is. Its results are in the blob store, so nothing moves.
   */
  adoptSaved(row: SavedSearchRow): Search {
    const held = this.searches.get(row.id)
    if (held) return held
    const s = this.fromRow(row)
    this.searches.set(row.id, s)
    return s
  }

  /**
   * Stops holding a search another replica holds now (server/cluster): its feed stops, and nothing stored (row, blobs,
   * working files) is touched.
   */
  release(id: string): void {
    const s = this.searches.get(id)
    if (!s) return
    halt(s)
    this.searches.delete(id)
  }

  /** Whether this process holds the search. */
  has(id: string): boolean {
    return this.searches.has(id)
  }

  /** Every search this process holds, without the sweep (what it publishes to the cluster). */
  held(): Search[] {
    return [...this.searches.values()]
  }

  // ---- reading

  /** The search when the caller may see it: owner, member of its group, admin. Else 404, as for a missing one. */
  viewable(v: Viewer, id: string): Search {
    this.sweep()
    const s = this.searches.get(id)
    if (!s || !canView(v, s)) throw Errors.notFound('search')
    return s
  }

  /** The search when the caller may change it: 404 when they may not see it, 403 when they only see it. */
  private modifiable(v: Viewer, id: string, what: string): Search {
    const s = this.viewable(v, id)
    if (!v.admin && s.record.uid !== v.uid) throw Errors.forbidden(`only the owner or an admin may ${what} this search`)
    return s
  }

  /** Searches the caller may see (all of them for `all`), oldest first. */
  list(v: Viewer, all: boolean): Search[] {
    this.sweep()
    return [...this.searches.values()].filter((s) => all || reaches(v, s)).sort((a, b) => a.record.started - b.record.started)
  }

  history(uid: number) {
    return this.deps.searches.history(uid, HISTORY_LIMIT)
  }

  /** Where the search's results can be read now (none: an ORPHANED search, whose results were lost). */
  source(s: Search): ResultSource {
    return resultSource(s)
  }

  /** The search's results as NDJSON bytes, as far as they are stored now. */
  resultBytes(s: Search): Promise<ReadableStream<Uint8Array>> {
    return resultBytes(this.deps.blobs, resultSource(s))
  }

  /** Records `first` up to (not including) `last` of a search's results, as far as they are stored now (records.ts). */
  readRecords(s: Search, first: number, last: number): Promise<string[]> {
    return readRecords(this.deps.blobs, s, first, last)
  }

  /**
   * Records `first` up to (not including) `last` counted within the subset of the results whose TS lies in
   * [`from`, `to`) (0: unbounded on that side), as far as they are stored now; `more` tells whether records of that
   * subset follow the returned ones (records.ts).
   */
  readRecordsWithin(s: Search, from: number, to: number, first: number, last: number): Promise<{ lines: string[]; more: boolean }> {
    return readRecordsWithin(this.deps.blobs, s, from, to, first, last)
  }

  /**
   * The same subset as readRecordsWithin, counted from its newest record backwards and read in that order
   * (records.ts readRecordsWithinFromEnd): the order the clients page a search's entries in.
   */
  readRecordsWithinFromEnd(s: Search, from: number, to: number, first: number, last: number): Promise<{ lines: string[]; more: boolean }> {
    return readRecordsWithinFromEnd(this.deps.blobs, s, from, to, first, last)
  }

  /**
   * The start of a preview search's range ending at `end` (the platform's Preview timeframe: "a small number of the
   * most recent entries"): the latest time from which the query's tags hold at least PREVIEW_ENTRIES entries up to
   * `end`, found by binary search over the store's counts (about 45 counts, none reading entry data); the start of
   * time when they hold fewer, or when the store cannot count.
   */
  async previewStart(tags: readonly string[], end: number): Promise<number> {
    const count = this.deps.entries.count?.bind(this.deps.entries)
    if (!count) return 0
    const named = tags.filter((t) => t !== '*')
    const ids = tags.includes('*') ? null : [...(await this.tags.idsOf(named)).values()]
    if ((await count(ids, 0, end)) <= PREVIEW_ENTRIES) return 0
    let lo = 0 // count(lo, end) >= PREVIEW_ENTRIES
    let hi = end // count(hi, end) < PREVIEW_ENTRIES
    while (hi - lo > 1) {
      const mid = lo + Math.floor((hi - lo) / 2)
      if ((await count(ids, mid, end)) >= PREVIEW_ENTRIES) lo = mid
      else hi = mid
    }
    return lo
  }

  /** Whether the engine answers: its store can be queried. */
  async ping(): Promise<void> {
    await this.deps.entries.ping()
  }
}

/** Stops the feed of a search; a batch being matched for it is given up. */
function halt(s: Search): void {
  s.halt = true
  s.abort.abort()
}

/** A search nobody asked to keep: neither backgrounded nor saved (or saving). */
const unkept = (s: Search) => s.save === 'none' && !s.background

/** Own searches and those shared with a group of the viewer: a listing's normal view, admins included. */
export function reaches(v: Viewer, s: Pick<Search, 'record'>): boolean {
  return s.record.uid === v.uid || (s.record.gid > 0 && v.groups.has(s.record.gid))
}

/** Admins may view every search (docs/api.md "Searches": admins may do anything with any search). */
export function canView(v: Viewer, s: Pick<Search, 'record'>): boolean {
  return v.admin || reaches(v, s)
}
