// The search manager: every search the server knows, its state machine (docs/api.md "Search states") and the
// runner that feeds it from the entries store.
//
// A search is described by four facts, and its State words follow from them alone (stateWords):
//   clients     the sessions (or API tokens) attached to it;
//   background  set by Background at launch or PATCH .../background;
//   save        'none' | 'saving' (asked to be saved, results not yet in the blob store) | 'saved';
//   error       why it failed, '' when it did not.
// Whether it still runs is not a state word (docs/api.md "Search states": no STOPPED); `finished` tells it.
//
// Guarantees:
// - A search reads the entries in chunks of CHUNK (and at most about CHUNK_BYTES of data) and yields to the event
//   loop after every step of about STEP_MS (checked after every entry), so requests keep being answered while it
//   runs. The stateless head of a query (extraction, filters, eval...: all but greps alone) runs on worker threads
//   (match.ts), a batch at a time, while this thread reads the next: however costly a regex or an extraction, it
//   never holds the event loop; a batch past MATCH_BUDGET_MS stops its search with an error, and stopping or deleting
//   a search gives up its batch at once.
// - One user has at most `maxPerUser` searches that are not saved (running or kept), on all replicas together: a
//   launch past it is 429, unless some of theirs here only wait out their grace period: the oldest of those are
//   removed first to make room (a client that closes its searches and launches more never meets the cap).
// - Results go to the working directory as they are found; a saving search is moved to the blob store only once it
//   is DORMANT (no client) and finished, in the background; until its row says 'saved' the working files stay.
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
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { type BlobStore, discardBlob } from '../blob'
import { Errors } from '../http/errors'
import type { Logger } from '../runtime/log'
import { type OwnerQuota, QuotaExceeded, type Quotas } from '../store/quota'
import { formatTime } from '../runtime/time'
import { ArchiveError, type ArchiveLimits, type SearchArchiveDescription, readSearchArchive, writeSearchArchive } from './archive'
import type { Cursor, EntriesRepo, ScanRow } from './entries'
import { TagDirectory } from './tags'
import { HeadJob, type HeadInput, MatchAbortedError, MatchBudgetError, MatchCompileError, MatchPool } from './match'
import { QueryError } from '../../engine/errors'
import { MAX_LOOKUP_BYTES } from '../../engine/modules/lookup'
import type { AutoExtractorDefinition } from '../../engine/module'
import { ALL_TAGS } from '../../engine/parse'
import { type RunEnv, flushAll } from '../../engine/module'
import type { Entry } from '../../engine/entry'
import { Pipeline } from '../../engine/pipeline'
import type { PipelineStats } from '../../engine/pipeline-stats'
import { type CompiledQuery, compileQuery } from '../../engine/query'
import { boundRegexes } from '../../engine/regex'
import { TransferReader, readEntryOut } from '../../engine/transfer'
import { type ImportInfo, type LaunchInfo, type SavedSearchRow, type SearchRecord, type SearchesRepo, searchBlobKeys, searchQueryAndTimes } from './repo'
import {
  INDEX_ENTRY_BYTES,
  type ResultSource,
  ResultWriter,
  resultBytes,
  type WorkFiles,
  listWorkDir,
  records,
  removeWorkFiles,
  workDir,
  workFiles,
} from './results'

/** Entries read per query (index entries; the rows of those whose tag is wanted). */
export const CHUNK = 128
/** A query also ends once it has read this much entry data (an entry may be MiBs: see the ingest body limit). */
export const CHUNK_BYTES = 1 << 20
/**
 * A step reads chunks until it has run this long, then yields to the event loop: steps stay short however busy the
 * machine is (a fixed number of entries per step took 5 times longer under load and held other requests that long).
 */
export const STEP_MS = 2
/**
 * Worker threads running the stateless heads of searches (extraction, regexes, eval...): one fewer than the CPUs (the
 * event loop keeps one), from 1 to 4. Searches beyond that take turns, batch by batch.
 */
export const MATCH_WORKERS = Math.max(1, Math.min(4, availableParallelism() - 1))
/**
 * How long one batch (CHUNK_BYTES of entries plus one entry) may take on a worker before its search is stopped with
 * an error: the worst accepted regex filter over the largest entry of the default body limit takes about 2 s alone,
 * so this leaves a loaded machine room, and stops a search that would hold a worker for minutes (entries far larger
 * than the default limit allows; or an extraction with the worst accepted pattern over the largest entries: re2js
 * finds captures at about 20 µs per byte with it, a minute for 3 MB).
 */
export const MATCH_BUDGET_MS = 60_000
/** Batches of one search given to the workers at a time (the next runs there while this thread handles one). */
const BATCHES_IN_FLIGHT = 2
/** Entries sent to a worker at once at most (with at most CHUNK_BYTES of data, or what STEP_MS of reading found). */
export const MATCH_BATCH = 1024
/**
 * How long compiling one regex may take (on a worker) before the query is refused: patterns the bound accepts compile
 * in well under 0.3 s; some of a few KB that compile to small programs took 4 s.
 */
export const COMPILE_BUDGET_MS = 2_000
/** How the error of a failed move to the blob store starts; a later save that succeeds clears it. */
const SAVE_FAILED = 'saving failed: '
/**
 * The error of a saving search whose replica died before its results reached the blob store (they were in that
 * replica's working files): set by a surviving replica (server/cluster), so that its owner sees what happened.
 */
export const ORPHANED = 'the replica that ran this search stopped (crash or kill) before its results were saved: they are lost; launch the search again'
/** What a search marked ORPHANED says instead when its replica came back with the results it had found until then. */
const CUT_OFF = 'the replica that ran this search stopped before the search finished: the results are those it had found until then'

/** A saving search left by a dead replica (marked by a surviving one). */
export const isOrphaned = (row: Pick<SavedSearchRow, 'state' | 'error'>) => row.state === 'saving' && row.error.startsWith(ORPHANED)

/** Imported records are written out this many at a time. */
const IMPORT_FLUSH_RECORDS = 1024
/** History entries answered at most, and kept per user (older launches are dropped as new ones are recorded). */
const HISTORY_LIMIT = 1000

/**
 * How much an import may store, checked record by record while the archive streams in: at most `ratio` times the
 * compressed bytes received so far plus `floor`, never more than `max`, and never more than the room `quota` leaves.
 */
export interface ImportBound {
  ratio: number
  floor: number
  max: number
  quota?: OwnerQuota
}

/** An archive read into working files, not yet a search. */
export interface ReadArchive {
  description: SearchArchiveDescription
  files: WorkFiles
  storeSize: number
  indexSize: number
  itemCount: number
}

export type SaveState = 'none' | 'saving' | 'saved'

/** One search in memory. */
export interface Search {
  record: SearchRecord
  clients: Set<string>
  background: boolean
  save: SaveState
  /** True while the runner feeds it. */
  running: boolean
  /** Set when the search is stopped or deleted: the runner ends at its next step. */
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

export interface ManagerDeps {
  /** Storage quotas: a saved search counts against its owner's once SAVED (server/store/quota.ts); absent: none. */
  quotas?: Quotas
  entries: EntriesRepo
  /** The tags by name and number, kept in memory (server/search/tags.ts); default: one over `entries`, alone. */
  tags?: TagDirectory
  searches: SearchesRepo
  blobs: BlobStore
  log: Logger
  clock: () => number
  dataDir: string
  graceMs: number
  /** Live searches (not saved) one user may have at a time; a launch past it is refused with 429. */
  maxPerUser: number
  /** Runs the stateless heads of searches and compiles regexes off the event loop (default: a pool of worker threads). */
  matcher?: MatchPool
  /** Time one regex may take to compile (default COMPILE_BUDGET_MS). */
  compileBudgetMs?: number
  /** Launches kept in each user's history (default HISTORY_LIMIT, also what is answered). */
  historyKeep?: number
  /** Entries per query (default CHUNK). */
  chunk?: number
  /** Entry data one query reads at most (default CHUNK_BYTES; tests make it small). */
  chunkBytes?: number
  /** Time a step may run before it yields (default STEP_MS; 0: one chunk per step). */
  stepMs?: number
  /** What a search awaits between steps (default: the next event-loop turn); tests pass one they control. */
  step?: () => Promise<void>
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
  /**
   * The contents of the resource a query names (lookup -r), by name or GUID, as the user may read it (their own,
   * shared with a group of theirs, global); undefined when there is none they may read, 'too large' when it holds more
   * than maxBytes. Absent: queries that name a resource are refused.
   */
  resource?: (uid: number, name: string, maxBytes: number) => Promise<Uint8Array | 'too large' | undefined>
  /** The auto-extractor definitions that apply to a search of `uid` over `tags`, one per tag (the `ax` module); absent: none. */
  extractors?: (uid: number, tags: readonly string[]) => Promise<Map<string, AutoExtractorDefinition>>
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

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
  private pool: MatchPool | undefined
  /** The engine's tags by name and number (stable: the store's own ids). */
  readonly tags: TagDirectory

  constructor(private readonly deps: ManagerDeps) {
    this.dir = workDir(deps.dataDir)
    this.pool = deps.matcher
    this.tags = deps.tags ?? new TagDirectory(deps.entries)
  }

  /** The worker pool of searches and regexes, started with the first one that needs it. */
  private get matcher(): MatchPool {
    return (this.pool ??= new MatchPool(MATCH_WORKERS, MATCH_BUDGET_MS))
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

  /** Compiles a query; its regexes are compiled on a worker first, each within COMPILE_BUDGET_MS. QueryError when refused. */
  async parse(src: string): Promise<CompiledQuery> {
    const query = compileQuery(src)
    const budget = this.deps.compileBudgetMs ?? COMPILE_BUDGET_MS
    const sized: Parameters<typeof boundRegexes>[0][number][] = []
    for (const regex of query.regexes) {
      let size: number | Error
      try {
        size = await this.matcher.compile(regex.pattern, budget)
      } catch (e) {
        if (e instanceof MatchBudgetError)
          throw new QueryError(`the regular expression takes more than ${budget / 1000} s to compile: simplify it`, regex.pos, regex.moduleIndex, regex.module)
        if (!(e instanceof MatchCompileError)) throw e
        size = e
      }
      sized.push({ regex, size })
    }
    boundRegexes(sized)
    return query
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
    const resources = await this.loadResources(req.uid, req.query)
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
    s.runner = this.run(s, req.query, maxResultBytes, resources)
    return s
  }

  /**
   * The resources the query's modules need (CompiledModule.needs), read once for the run. One the owner cannot read
   * refuses the launch: 400 with the position of the module's argument that names it.
   */
  private async loadResources(uid: number, query: CompiledQuery): Promise<Map<string, Uint8Array>> {
    const loaded = new Map<string, Uint8Array>()
    for (const [index, m] of query.modules.entries()) {
      for (const name of m.needs?.resources ?? []) {
        if (loaded.has(name)) continue
        const contents = await this.deps.resource?.(uid, name, MAX_LOOKUP_BYTES)
        if (contents instanceof Uint8Array) {
          loaded.set(name, contents)
          continue
        }
        const call = query.parsed.modules[index]
        const pos = call?.args.find((t) => t.text === name)?.pos ?? call?.argPos ?? 0
        const refused = new QueryError(
          contents === 'too large'
            ? `the resource ${JSON.stringify(name)} is larger than the ${MAX_LOOKUP_BYTES / 1024 / 1024} MiB a lookup table may be`
            : `no resource ${JSON.stringify(name)} that you can read (name it by its name or GUID)`,
          pos,
          index,
          m.name,
        )
        throw Errors.badQuery(refused.message, refused.position)
      }
    }
    // A stage checks what it reads of a resource when it is made (lookup: the columns it names): made once here, a
    // mistake is refused now rather than failing the search once it runs.
    const env: RunEnv = { resources: loaded, extractors: new Map(), maxTracked: 1, start: 0, end: 0, renderer: query.renderer.name }
    for (const m of query.modules) {
      if (!m.needs?.resources?.length) continue
      try {
        m.stage(env)
      } catch (e) {
        if (e instanceof QueryError) throw Errors.badQuery(e.message, e.position)
        throw e
      }
    }
    return loaded
  }

  /** Feeds the search from the entries store, one step per event-loop turn, until done, stopped or deleted. */
  private async run(s: Search, query: CompiledQuery, maxResultBytes = Number.POSITIVE_INFINITY, resources = new Map<string, Uint8Array>()): Promise<void> {
    const { entries, clock, log } = this.deps
    const writer = new ResultWriter(s.work!)
    const env = {
      resources,
      extractors: await this.extractorsOf(s, query),
      maxTracked: 1_000_000,
      start: s.record.startRange,
      end: s.record.endRange,
      renderer: query.renderer.name,
    }
    const pipeline = new Pipeline(query, env, (record) => writer.add(record))
    s.stats = pipeline.stats
    // The stateless head of the query (extraction, filters, eval...) runs on worker threads, a batch at a time, while
    // this thread reads the next and pushes what came out through the rest; a head of greps alone (Buffer.includes,
    // linear and fast) runs here, between the step checks.
    const head = pipeline.workerFilters()
    const offload = pipeline.headWorthSending() ? new HeadJob(query.text, pipeline.head, env) : null
    // Batches still out when the run ends (a limit reached, a failure) are given up, not run to the end.
    const unwanted = new AbortController()
    const signal = AbortSignal.any([s.abort.signal, unwanted.signal])
    /** Set when the store counted the entries (a query that is only `count`): the pipeline saw none and emits nothing. */
    let counted = false
    try {
      const tags = this.tags
      // Tags named by the query that do not exist yet have no entries to find.
      const wanted = query.tags.includes(ALL_TAGS) ? null : [...(await tags.idsOf(query.tags)).values()]
      let cursor: Cursor = { ts: s.record.startRange || Number.MIN_SAFE_INTEGER, tagId: -1, id: -1 }
      const end = s.record.endRange
      let done = wanted !== null && wanted.length === 0
      const stepMs = this.deps.stepMs ?? STEP_MS
      let stepStart = performance.now()
      // Ends a step once it has run stepMs: checked after every entry, not only every chunk, so one step runs at most
      // stepMs plus the handling of one entry here (greps, or the modules after a stateless head that ran on a worker).
      // stepMs 0 (tests): exactly one chunk per step.
      const due = () => performance.now() - stepStart >= stepMs
      // A query that is exactly `count` or `grep <literal> | count`: the store counts the wanted tags' entries in the
      // range (EntriesRepo.count: from its index, or with one indexOf loop over a segment's data) instead of walking
      // them, and the one entry the count module would emit goes to the renderer as it would.
      const counting = entries.count ? countOnly(query) : null
      if (!done && !s.halt && counting) {
        const n = await entries.count!(wanted, cursor.ts, end, counting.needle)
        const render = query.renderer
        const stage = render.stage(env)
        const toRecord = (e: Entry) => writer.add(render.record(e))
        stage.push({ ts: env.end || Date.now(), tag: '', src: '', data: new Uint8Array(0), values: new Map([['count', n]]) }, toRecord)
        flushAll(stage, toRecord)
        done = counted = true
      }
      const endStep = async () => {
        await writer.flush()
        this.progress(s, writer)
        if (writer.bytes > maxResultBytes)
          throw new Error(`the results exceed the storage quota of ${maxResultBytes} bytes (QUARRY_USER_QUOTA): the search was stopped there`)
        await (this.deps.step ?? nextTurn)()
        stepStart = performance.now()
      }
      // A leading grep drops every entry without its text: the store may skip those (a segment is searched whole).
      const first = head[0]
      // So may a leading regex without the longest literal every match of it holds (LazyRegex.needle).
      const needle = first?.op === 'grep' ? first.text : first?.op === 'regex' ? first.regex.needle : null
      const hint = needle ? { needle: Buffer.from(needle) } : undefined
      const scan = async () => {
        if (done || s.halt) return []
        const rows = await entries.scan(wanted, cursor, end, this.deps.chunk ?? CHUNK, this.deps.chunkBytes ?? CHUNK_BYTES, hint)
        if (rows.length > 0) cursor = rows.at(-1)!
        return rows
      }
      // For a worker: chunks up to MATCH_BATCH entries or CHUNK_BYTES of data (one chunk when stepMs is 0), read in
      // steps (the event loop gets a turn each stepMs), so that the hand-over to the worker is paid per batch.
      const batch = async () => {
        const rows = await scan()
        let bytes = 0
        for (const r of rows) bytes += r.data?.byteLength ?? 0
        while (stepMs > 0 && rows.length > 0 && rows.length < MATCH_BATCH && bytes < CHUNK_BYTES && !s.halt) {
          if (due()) await endStep()
          const more = await scan()
          if (more.length === 0) break
          for (const r of more) {
            rows.push(r)
            bytes += r.data?.byteLength ?? 0
          }
        }
        return rows
      }
      // A tag's name is in memory but for a tag made since the directory was loaded (awaited only then: per entry).
      const tagName = async (id: number) => (await tags.namesOf([id])).get(id) ?? ''
      // Up to BATCHES_IN_FLIGHT batches of this search are on the workers while this thread reads the next and
      // pushes what came out of the head through the rest of the pipeline.
      const inFlight: { sent: HeadInput[]; out: Promise<Uint8Array> }[] = []
      let exhausted = false
      while (!done && !s.halt) {
        if (offload) {
          while (!exhausted && !done && !s.halt && inFlight.length < BATCHES_IN_FLIGHT) {
            const read = await batch()
            if (read.length === 0) exhausted = true
            else {
              const sent: HeadInput[] = []
              for (const row of read)
                if (row.data !== null) sent.push({ ts: row.ts, tag: tags.nameNow(row.tagId) ?? (await tagName(row.tagId)), src: row.src ?? '', data: row.data })
              const out = this.matcher.runHead(offload, sent, signal, (reached) => pipeline.countHead(sent, reached))
              out.catch(() => undefined) // handled where it is awaited; one read ahead may never be
              inFlight.push({ sent, out })
            }
          }
          const next = inFlight.shift()
          if (!next) break
          const reader = new TransferReader(await next.out)
          const from = (i: number) => next.sent[i]!
          while (reader.more && !s.halt) {
            pipeline.push(readEntryOut(reader, from).entry, true)
            if (pipeline.done()) {
              done = true
              break
            }
            if (stepMs > 0 && due()) await endStep()
          }
        } else {
          const rows = await scan()
          if (rows.length === 0) break
          for (const row of rows) {
            if (s.halt) break
            if (row.data === null) continue
            const tag = tags.nameNow(row.tagId) ?? (await tagName(row.tagId))
            pipeline.push({ ts: row.ts, tag, src: row.src ?? '', data: row.data, values: new Map() })
            if (pipeline.done()) {
              done = true
              break
            }
            if (stepMs > 0 && due()) await endStep()
          }
        }
        if (!done && !s.halt && due()) await endStep()
      }
      unwanted.abort()
      await writer.flush()
      this.progress(s, writer)
      // What condensing stages hold comes out a slice at a time, with the event loop's turns between slices (a stats
      // of a million keys took seconds in one go). A stopped search still emits what it held; a deleted one does not.
      if (!counted)
        for (const _ of pipeline.flushSteps()) {
          if (s.removed) break
          if (due()) await endStep()
        }
      await writer.close()
      this.progress(s, writer)
    } catch (e) {
      // Stopped or deleted while a batch was being matched: the search ends as stopped, not failed.
      if (!(e instanceof MatchAbortedError && s.halt)) {
        s.record.error =
          e instanceof MatchBudgetError
            ? `${e.message}: the search was stopped (a shorter regular expression, or fewer of them, runs faster)`
            : e instanceof Error
              ? e.message
              : String(e)
        log.error('search failed', { search: s.record.id, error: s.record.error })
      }
      await writer.close().catch(() => undefined)
      this.progress(s, writer)
    } finally {
      unwanted.abort()
      s.running = false
      s.record.finished = clock()
      s.record.lastUpdate = s.record.finished
    }
    if (s.removed && s.work) removeWorkFiles(s.work)
    else this.maybeTransfer(s)
  }

  /**
   * The auto-extractors of the query's tags for its owner, when a module needs them (ax). When they cannot be loaded
   * the search runs without them (ax passes nothing) and carries the error, so that an empty answer is not taken
   * for a true one.
   */
  private async extractorsOf(s: Search, query: CompiledQuery): Promise<Map<string, AutoExtractorDefinition>> {
    if (!this.deps.extractors || !query.modules.some((m) => m.needs?.extractors)) return new Map()
    try {
      return await this.deps.extractors(s.record.uid, query.tags)
    } catch (e) {
      this.deps.log.error('auto-extractors could not be loaded', { search: s.record.id, error: e instanceof Error ? e.message : String(e) })
      s.record.error = `the auto-extractors could not be loaded: ${e instanceof Error ? e.message : String(e)}`
      return new Map()
    }
  }

  private progress(s: Search, w: ResultWriter): void {
    s.record.storeSize = w.storeSize
    s.record.indexSize = w.indexSize
    s.record.itemCount = w.count
    s.record.lastUpdate = this.deps.clock()
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
    await this.deps.searches.putSaved(this.row(s))
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
    s.transfer = this.transfer(s, s.work).then(() => undefined).finally(() => {
      s.transfer = null
    })
  }

  /**
   * Moves the results to the blob store and marks the search saved; answers the error when that failed (the search
   * then stays SAVING with ERROR and its working files). The owner's quota is checked before anything is copied
   * and again in the transaction that marks it saved.
   */
  private async transfer(s: Search, work: WorkFiles): Promise<unknown> {
    const { blobs, searches, log } = this.deps
    const keys = searchBlobKeys(s.record.id)
    try {
      const quota = await this.deps.quotas?.of(s.record.uid)
      const size = s.record.storeSize + s.record.indexSize
      if (quota && size > 0 && quota.used + size > quota.limit) throw new QuotaExceeded(quota.limit, quota.used, size)
      await blobs.put(keys.results, Bun.file(work.results).stream())
      await blobs.put(keys.index, Bun.file(work.index).stream())
      if (s.removed) throw new Error('deleted while being saved')
      s.blob = keys
      if (s.record.error.startsWith(SAVE_FAILED)) s.record.error = ''
      // Shown SAVED only once the row says so: in a cluster, a replica that dies right after a caller saw SAVED
      // leaves a row another replica can take over (a 'saving' row it could not).
      await searches.putSaved({ ...this.row(s), state: 'saved' }, quota?.limit)
      s.save = 'saved'
      s.work = null
      removeWorkFiles(work)
      return undefined
    } catch (e) {
      await discardBlob(blobs, keys.results, log)
      await discardBlob(blobs, keys.index, log)
      if (s.removed) return e
      s.blob = null
      s.save = 'saving'
      s.record.error = `${SAVE_FAILED}${e instanceof Error ? e.message : String(e)}`
      log.error('could not save a search', { search: s.record.id, error: s.record.error })
      return e
    }
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
    this.pool?.close()
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
  async exportArchive(s: Search): Promise<ReadableStream<Uint8Array>> {
    const r = s.record
    const description = {
      ...searchQueryAndTimes(r),
      Metadata: r.metadata ?? null,
      ItemCount: r.itemCount,
    }
    return writeSearchArchive(description, records(await this.resultBytes(s)))
  }

  /**
   * Reads a search archive into fresh working files. Resolves once the whole archive was read and found sound;
   * on any failure (ArchiveError for the archive's faults) the files are removed and nothing is left.
   */
  async readArchive(stream: ReadableStream<Uint8Array>, limits: Partial<ArchiveLimits>, bound?: ImportBound): Promise<ReadArchive> {
    const files = this.importFiles()
    const writer = new ResultWriter(files)
    // The compressed bytes received so far: what an import's stored bytes are bounded relative to.
    let compressed = 0
    const counted = bound
      ? stream.pipeThrough(
          new TransformStream<Uint8Array, Uint8Array>({
            transform(chunk, ctl) {
              compressed += chunk.byteLength
              ctl.enqueue(chunk)
            },
          }),
        )
      : stream
    const room = bound?.quota ? bound.quota.limit - bound.quota.used : Number.POSITIVE_INFINITY
    try {
      const description = await readSearchArchive(counted, limits, async (record) => {
        writer.add(JSON.stringify(record))
        if (bound) {
          const stored = writer.bytes
          if (stored > bound.max) throw new ArchiveError(`the archive expands to more than the limit of ${bound.max} bytes`)
          if (stored > bound.ratio * compressed + bound.floor)
            throw new ArchiveError(
              `the archive expands to more than ${bound.ratio} times its compressed size (${compressed} bytes received, ${stored} bytes to store): refused as a possible zip bomb`,
            )
          if (stored > room) throw new QuotaExceeded(bound.quota!.limit, bound.quota!.used, stored)
        }
        if (writer.queued >= IMPORT_FLUSH_RECORDS) await writer.flush()
      })
      await writer.close()
      return { description, files, storeSize: writer.storeSize, indexSize: writer.indexSize, itemCount: writer.count }
    } catch (e) {
      await writer.close().catch(() => undefined)
      removeWorkFiles(files)
      throw e
    }
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
      await this.deps.searches.putSaved(this.row(s))
      const failed = await this.transfer(s, own)
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

  private row(s: Search): SavedSearchRow {
    return {
      ...s.record,
      state: s.save === 'saved' ? 'saved' : 'saving',
      resultsKey: s.blob?.results ?? null,
      indexKey: s.blob?.index ?? null,
    }
  }

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
    if (s.blob) return { kind: 'blob', key: s.blob.results, size: s.record.storeSize }
    if (!s.work) return { kind: 'none', size: 0 }
    return { kind: 'work', files: s.work, size: s.record.storeSize }
  }

  /** The search's results as NDJSON bytes, as far as they are stored now. */
  resultBytes(s: Search): Promise<ReadableStream<Uint8Array>> {
    return resultBytes(this.deps.blobs, this.source(s))
  }

  /**
   * Records `first` up to (not including) `last` of a search's results, as the JSON text of each, as far as they are
   * stored now (a running search's flushed prefix): the index finds them without reading the records before them.
   */
  async readRecords(s: Search, first: number, last: number): Promise<string[]> {
    const count = s.record.itemCount
    const storeSize = s.record.storeSize
    const blob = s.blob
    const work = s.work
    const from = Math.max(0, Math.min(first, count))
    const to = Math.max(from, Math.min(last, count))
    if (to === from) return []
    // The end offset of the last record is the next record's start, or the stored size after the last one.
    const idxEnd = Math.min(to + 1, count) * INDEX_ENTRY_BYTES
    const idxStart = from * INDEX_ENTRY_BYTES
    const read = (key: string | undefined, path: string | undefined, start: number, end: number) => this.readBytes(key, path, start, end)
    const idx = Buffer.from(await read(blob?.index, work?.index, idxStart, idxEnd))
    const offsets: number[] = []
    for (let i = 0; i + INDEX_ENTRY_BYTES <= idx.length; i += INDEX_ENTRY_BYTES) offsets.push(Number(idx.readBigUInt64LE(i)))
    const start = offsets[0]!
    const end = to < count ? offsets[to - from]! : storeSize
    const text = Buffer.from(await read(blob?.results, work?.results, start, end)).toString('utf8')
    return text.split('\n').filter((l) => l !== '')
  }

  /**
   * Records `first` up to (not including) `last` counted within the subset of the results whose TS lies in
   * [`from`, `to`) (0: unbounded on that side), as far as they are stored now; `more` tells whether records of that
   * subset follow the returned ones. A search's own results are in TS order (its feed scans by time): the subset's
   * bounds are found by binary search over the index, reading one record head per probe. An imported search's
   * results may be in any order: they are scanned in batches of SCAN_BATCH records, one batch per event-loop turn,
   * stopping at the first subset record after the wanted ones.
   */
  async readRecordsWithin(s: Search, from: number, to: number, first: number, last: number): Promise<{ lines: string[]; more: boolean }> {
    const count = s.record.itemCount
    const lower = from || Number.NEGATIVE_INFINITY
    const upper = to || Number.POSITIVE_INFINITY
    if (first >= last || lower >= upper) return { lines: [], more: false }
    const inRange = (ts: number) => ts >= lower && ts < upper
    if (!s.record.import) {
      // The first record at or after `t` (records without a TS, a summary's, sort last).
      const bound = async (t: number) => {
        if (!Number.isFinite(t)) return t < 0 ? 0 : count
        let lo = 0
        let hi = count
        while (lo < hi) {
          const mid = (lo + hi) >>> 1
          const ts = await this.recordTs(s, mid, count)
          if (ts !== null && ts < t) lo = mid + 1
          else hi = mid
        }
        return lo
      }
      const start = await bound(lower)
      const end = await bound(upper)
      const lines = await this.readRecords(s, start + first, Math.min(start + last, end))
      return { lines, more: start + first + lines.length < end }
    }
    const lines: string[] = []
    let seen = 0
    for (let i = 0; i < count; i += SCAN_BATCH) {
      for (const line of await this.readRecords(s, i, Math.min(i + SCAN_BATCH, count))) {
        const ts = anyTsOf(line)
        if (ts === null || !inRange(ts)) continue
        if (seen >= last) return { lines, more: true }
        if (seen >= first) lines.push(line)
        seen++
      }
      await nextTurn()
    }
    return { lines, more: false }
  }

  /** The TS of record `i` (of `count` stored), read from the head of the record alone; null when it has none. */
  private async recordTs(s: Search, i: number, count: number): Promise<number | null> {
    const blob = s.blob
    const work = s.work
    const idx = Buffer.from(await this.readBytes(blob?.index, work?.index, i * INDEX_ENTRY_BYTES, (i + 1) * INDEX_ENTRY_BYTES))
    if (idx.length < INDEX_ENTRY_BYTES || i >= count) return null
    const at = Number(idx.readBigUInt64LE(0))
    const head = await this.readBytes(blob?.results, work?.results, at, Math.min(at + RECORD_HEAD_BYTES, s.record.storeSize))
    return tsOf(Buffer.from(head).toString('utf8'))
  }

  private async readBytes(key: string | undefined, path: string | undefined, start: number, end: number): Promise<Uint8Array> {
    return key !== undefined
      ? new Uint8Array(await new Response(await this.deps.blobs.get(key, { start, end: end - 1 })).arrayBuffer())
      : new Uint8Array(await Bun.file(path!).slice(start, end).arrayBuffer())
  }

  /** Whether the engine answers: its store can be queried. */
  async ping(): Promise<void> {
    await this.deps.entries.ping()
  }
}

/** Records read per batch when an unordered result set is scanned for a time range. */
const SCAN_BATCH = 1000
/** Enough of a record's first bytes to hold its TS: `{"TS":"` and an RFC 3339 time with nanoseconds and an offset. */
const RECORD_HEAD_BYTES = 64

/** The TS of a result record from its JSON text (records written by a search begin with it); null without one. */
function tsOf(line: string): number | null {
  const m = /^\{"TS":"([^"]+)"/.exec(line)
  const ms = Date.parse(m?.[1] ?? '')
  return Number.isNaN(ms) ? null : ms
}

/** The TS of a record in any member order (an imported archive's): the whole record is parsed when needed. */
function anyTsOf(line: string): number | null {
  const fast = tsOf(line)
  if (fast !== null) return fast
  try {
    const ts = (JSON.parse(line) as { TS?: unknown }).TS
    const ms = typeof ts === 'string' ? Date.parse(ts) : Number.NaN
    return Number.isNaN(ms) ? null : ms
  } catch {
    return null
  }
}

/**
 * What the store can count without a walk (EntriesRepo.count): a query whose modules are a plain `count`, alone or
 * after one plain-literal grep (a worker filter: no flag, no wildcard); null for any other.
 */
export function countOnly(query: CompiledQuery): { needle?: Uint8Array } | null {
  const m = query.modules
  const last = m.at(-1)
  if (!last || last.name !== 'count' || last.text !== 'count') return null
  if (m.length === 1) return {}
  const f = m[0]!.workerFilter
  if (m.length === 2 && m[0]!.name === 'grep' && f?.op === 'grep' && f.text !== '') return { needle: Buffer.from(f.text) }
  return null
}

/** Whether the query's only module is a plain `count`. */
export function isOnlyCount(query: CompiledQuery): boolean {
  const c = countOnly(query)
  return c !== null && c.needle === undefined
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
