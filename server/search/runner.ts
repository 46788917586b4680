// Running one search: its pipeline fed from the entries store into its working files (results.ts), with what the
// query needs loaded first (resources, auto-extractors), and the pool of worker threads that runs the stateless heads
// of queries and compiles their regexes. The registry and the state machine are the manager's (manager.ts); a run
// reads and writes only the fields of RunTarget.
//
// Guarantees:
// - A search reads the entries in chunks of CHUNK (and at most about CHUNK_BYTES of data) and yields to the event
//   loop after every step of about STEP_MS (checked after every entry), so requests keep being answered while it
//   runs. The stateless head of a query (extraction, filters, eval...: all but greps alone) runs on worker threads
//   (match.ts), a batch at a time, while this thread reads the next: however costly a regex or an extraction, it
//   never holds the event loop; a batch past MATCH_BUDGET_MS stops its search with an error, and stopping or deleting
//   a search (RunTarget.halt, .abort) gives up its batch at once.
// - Results go to the working files as they are found, and the record's sizes follow every flush (a running
//   search's results can be read up to them); a run whose results pass `maxResultBytes` ends in error there.
// - A failure while a run feeds its search ends it with record.error set (a stop or delete during a batch is none);
//   `running` is false and `finished` set when it ends, whatever ended it.
// - A query that names a resource its owner cannot read, or whose stages refuse what they read of one, is refused
//   before the search exists (loadResources: 400 with the position of the argument).
import { availableParallelism } from 'node:os'
import { Errors } from '../http/errors'
import type { Logger } from '../runtime/log'
import type { Cursor, EntriesRepo } from './entries'
import type { TagDirectory } from './tags'
import { HeadJob, type HeadInput, MatchAbortedError, MatchBudgetError, MatchCompileError, MatchPool } from './match'
import type { SearchRecord } from './repo'
import { ResultWriter, type WorkFiles } from './results'
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

/**
 * Entries read per query (index entries; the rows of those whose tag is wanted). Each query costs the store a probe
 * of its rows' index and of the segment list (about 70 µs together here), whatever it answers: at 128 a walk over
 * 1,000,000 entries in segments spent 0.5 s of its 1.4 s in them. Steps stay short all the same: a step ends after
 * STEP_MS, checked after every entry, and a query reads at most CHUNK_BYTES of data.
 */
export const CHUNK = 1024
/** A query also ends once it has read this much entry data (an entry may be MiBs: see the ingest body limit). */
export const CHUNK_BYTES = 1 << 20
/**
 * A step reads chunks until it has run this long, then yields to the event loop: steps stay short however busy the
 * machine is (a fixed number of entries per step took 5 times longer under load and held other requests that long).
 */
export const STEP_MS = 2
/** The clock is read after every CLOCK_EVERY_MASK + 1 entries of the main thread's walk (a read costs about 40 ns). */
const CLOCK_EVERY_MASK = 7
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

export interface RunnerDeps {
  entries: EntriesRepo
  /** The tags by name and number, kept in memory (server/search/tags.ts). */
  tags: TagDirectory
  log: Logger
  clock: () => number
  /** Runs the stateless heads of searches and compiles regexes off the event loop (default: a pool of worker threads). */
  matcher?: MatchPool
  /** Time one regex may take to compile (default COMPILE_BUDGET_MS). */
  compileBudgetMs?: number
  /** Entries per query (default CHUNK). */
  chunk?: number
  /** Entry data one query reads at most (default CHUNK_BYTES; tests make it small). */
  chunkBytes?: number
  /** Time a step may run before it yields (default STEP_MS; 0: one chunk per step). */
  stepMs?: number
  /** What a search awaits between steps (default: the next event-loop turn); tests pass one they control. */
  step?: () => Promise<void>
  /**
   * The contents of the resource a query names (lookup -r), by name or GUID, as the user may read it (their own,
   * shared with a group of theirs, global); undefined when there is none they may read, 'too large' when it holds more
   * than maxBytes. Absent: queries that name a resource are refused.
   */
  resource?: (uid: number, name: string, maxBytes: number) => Promise<Uint8Array | 'too large' | undefined>
  /** The auto-extractor definitions that apply to a search of `uid` over `tags`, one per tag (the `ax` module); absent: none. */
  extractors?: (uid: number, tags: readonly string[]) => Promise<Map<string, AutoExtractorDefinition>>
}

/** What a run reads and writes of its search (the manager's Search). */
export interface RunTarget {
  record: SearchRecord
  /** The working files the run writes; set for the whole run. */
  work: WorkFiles | null
  /** True while the run feeds it; set false when the run ends. */
  running: boolean
  /** Set when the search is stopped or deleted: the run ends at its next step. */
  halt: boolean
  /** Aborted with halt: a batch being matched for it on a worker is given up at once. */
  abort: AbortController
  /** Set when the search is deleted: what condensing stages hold is not emitted. */
  removed: boolean
  /** What went through each module of its pipeline, by time (the stats requests): set when the run starts. */
  stats?: PipelineStats
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

/** Runs searches: one pipeline per run(), the worker pool shared by all. */
export class SearchRunner {
  private pool: MatchPool | undefined

  constructor(private readonly deps: RunnerDeps) {
    this.pool = deps.matcher
  }

  /** The worker pool of searches and regexes, started with the first one that needs it. */
  private get matcher(): MatchPool {
    return (this.pool ??= new MatchPool(MATCH_WORKERS, MATCH_BUDGET_MS))
  }

  /** Stops the worker pool (shutdown), once no search runs. */
  close(): void {
    this.pool?.close()
  }

  /** Compiles a query; its regexes are compiled on a worker first, each within COMPILE_BUDGET_MS. QueryError when refused. */
  async compile(src: string): Promise<CompiledQuery> {
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

  /**
   * The resources the query's modules need (CompiledModule.needs), read once for the run. One the owner cannot read
   * refuses the launch: 400 with the position of the module's argument that names it.
   */
  async loadResources(uid: number, query: CompiledQuery): Promise<Map<string, Uint8Array>> {
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
  async run(s: RunTarget, query: CompiledQuery, maxResultBytes = Number.POSITIVE_INFINITY, resources = new Map<string, Uint8Array>()): Promise<void> {
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
    const offload = pipeline.headWorthSending() ? new HeadJob(query.text, pipeline.head, env, pipeline.headKeeps()) : null
    // Batches still out when the run ends (a limit reached, a failure) are given up, not run to the end.
    const unwanted = new AbortController()
    const signal = AbortSignal.any([s.abort.signal, unwanted.signal])
    /** Set when the store counted the entries (a query that is only `count`): the pipeline saw none and emits nothing. */
    let counted = false
    try {
      const tags = this.deps.tags
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
      let sinceClock = 0
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
            if (stepMs > 0 && (++sinceClock & CLOCK_EVERY_MASK) === 0 && due()) await endStep()
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
  }

  /**
   * The auto-extractors of the query's tags for its owner, when a module needs them (ax). When they cannot be loaded
   * the search runs without them (ax passes nothing) and carries the error, so that an empty answer is not taken
   * for a true one.
   */
  private async extractorsOf(s: RunTarget, query: CompiledQuery): Promise<Map<string, AutoExtractorDefinition>> {
    if (!this.deps.extractors || !query.modules.some((m) => m.needs?.extractors)) return new Map()
    try {
      return await this.deps.extractors(s.record.uid, query.tags)
    } catch (e) {
      this.deps.log.error('auto-extractors could not be loaded', { search: s.record.id, error: e instanceof Error ? e.message : String(e) })
      s.record.error = `the auto-extractors could not be loaded: ${e instanceof Error ? e.message : String(e)}`
      return new Map()
    }
  }

  private progress(s: RunTarget, w: ResultWriter): void {
    s.record.storeSize = w.storeSize
    s.record.indexSize = w.indexSize
    s.record.itemCount = w.count
    s.record.lastUpdate = this.deps.clock()
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
