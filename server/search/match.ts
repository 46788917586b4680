// The expensive stages of searches, run on worker threads, never on the event loop: the stateless head of a query
// (extraction, filters, per-entry processing: HeadBatch), the filter stages of a regex (FilterStage), and the
// compilation of regular expressions.
//
// RE2 is linear in the entry but each byte costs work that grows with the compiled program (query.ts bounds its size):
// the worst accepted pattern takes seconds over the largest entry ingest accepts. On the JS thread that held every
// request of every user for as long; here the JS thread only sends a batch of entries and awaits the answer.
//
// Guarantees:
// - A batch runs on one worker of a pool of `size` threads, started when first needed; batches wait in order of
//   arrival (each search has at most a few out, so searches take turns).
// - A batch that runs longer than `budgetMs` is stopped: its worker is terminated (the only way to interrupt a match)
//   and replaced, and the batch fails with MatchBudgetError; one whose answer comes in before the budget's timer ran
//   (this thread was held) but took longer by the worker's clock fails the same way. A batch whose signal aborts (the
//   search was stopped or deleted) is dropped from the queue or, running, its worker is terminated the same way: no
//   CPU goes on matching for a search nobody wants.
// - Compiled stages and heads are cached per worker, at most CACHE_SIZE (an LRU: the key is user input).
// - A head's output is what the same modules make on this thread: the worker compiles the query from its normal form
//   with the same engine, and the values come back with their types (engine/transfer.ts).
// - The worker is started from its bundled source text (a Blob URL: match-worker-source.ts), so that the single
//   executable and the server bundle need no separate worker file.
import type { RunEnv } from '../../engine/module'
import type { FilterStage, FromMatchWorker, HeadBatch, ToMatchWorker, WireEnv } from './match-worker'

export type { FilterStage }

/** The source of the workers' program, loaded (and under `bun run`, bundled) with the first worker. */
let workerUrl: Promise<string> | undefined
const matchWorkerUrl = () =>
  (workerUrl ??= import('./match-worker-source').then(({ MATCH_WORKER_SOURCE }) =>
    URL.createObjectURL(new Blob([MATCH_WORKER_SOURCE], { type: 'application/javascript' })),
  ))

/** An entry as a head batch takes it. */
export interface HeadInput {
  ts: number
  tag: string
  src: string
  data: Uint8Array
}

let lastHeadKey = 0

/**
 * The stateless head of one running search, as workers run it: the first `n` modules of the query whose normal form
 * is `query`, with the search's RunEnv (its resources copied once into shared memory, so batches do not copy them).
 */
export class HeadJob {
  readonly key: string
  readonly env: WireEnv
  constructor(
    readonly query: string,
    readonly n: number,
    env: RunEnv,
    /** The values the rest of the pipeline reads (Pipeline.headKeeps): only these come back; null: all. */
    readonly keep: string[] | null = null,
  ) {
    // Per search: its stages are built with its own RunEnv (the range, the resources...).
    this.key = `head ${++lastHeadKey}`
    const resources: [string, Uint8Array][] = [...env.resources].map(([name, bytes]) => {
      const shared = new Uint8Array(new SharedArrayBuffer(bytes.byteLength))
      shared.set(bytes)
      return [name, shared]
    })
    this.env = { resources, extractors: [...env.extractors], maxTracked: env.maxTracked, start: env.start, end: env.end, renderer: env.renderer }
  }

  /** The message of one batch. */
  batch(entries: readonly HeadInput[]): HeadBatch {
    const { data, offsets } = pack(entries.map((e) => e.data))
    const ts = new Float64Array(entries.length)
    const tags = new Uint32Array(entries.length)
    const srcs = new Uint32Array(entries.length)
    const names: string[] = []
    const index = new Map<string, number>()
    const nameIndex = (s: string) => {
      let i = index.get(s)
      if (i === undefined) {
        i = names.push(s) - 1
        index.set(s, i)
      }
      return i
    }
    entries.forEach((e, i) => {
      ts[i] = e.ts
      tags[i] = nameIndex(e.tag)
      srcs[i] = nameIndex(e.src)
    })
    return { query: this.query, n: this.n, env: this.env, ...(this.keep ? { keep: this.keep } : {}), data, offsets, ts, names, tags, srcs }
  }
}

/** Entries packed into one buffer (entry i is data[offsets[i], offsets[i+1])), to be transferred. */
function pack(entries: readonly Uint8Array[]): { data: Uint8Array; offsets: Uint32Array } {
  const offsets = new Uint32Array(entries.length + 1)
  for (let i = 0; i < entries.length; i++) offsets[i + 1] = offsets[i]! + entries[i]!.byteLength
  const data = new Uint8Array(offsets[entries.length]!)
  entries.forEach((e, i) => data.set(e, offsets[i]!))
  return { data, offsets }
}

/** The buffers of a message that are transferred (moved, not copied) to the worker. */
function transferList(msg: ToMatchWorker): ArrayBuffer[] {
  if ('head' in msg) return [msg.head.data.buffer, msg.head.offsets.buffer, msg.head.ts.buffer, msg.head.tags.buffer, msg.head.srcs.buffer] as ArrayBuffer[]
  if ('data' in msg) return [msg.data.buffer as ArrayBuffer, msg.offsets.buffer as ArrayBuffer]
  return []
}

/** A batch ran past the pool's budget and was stopped. */
export class MatchBudgetError extends Error {}

const budgetError = (job: Job) =>
  new MatchBudgetError(`${'compile' in job.msg ? 'compiling the regular expression' : 'matching one batch of entries'} took longer than ${job.budgetMs / 1000} s`)
/** A pattern does not compile (the message is RE2's). */
export class MatchCompileError extends Error {}
/** A batch was given up because its signal aborted. */
export class MatchAbortedError extends Error {}

interface Job {
  msg: ToMatchWorker
  budgetMs: number
  resolve: (answer: FromMatchWorker) => void
  reject: (e: Error) => void
  signal: AbortSignal | undefined
  onAbort: () => void
  slot: Slot | null
}

interface Slot {
  worker: Worker
  /** Set once the worker has started: a budget counts from the dispatch, so a batch goes only to a started worker. */
  ready: boolean
  job: Job | null
  timer: ReturnType<typeof setTimeout> | undefined
}

export class MatchPool {
  private readonly slots: Slot[] = []
  private readonly queue: Job[] = []
  private lastId = 0
  private closed = false
  /** Head batches asked for so far (tests: which queries ran their head here). */
  headBatches = 0
  /** The workers' program, once loaded (see matchWorkerUrl). */
  private url: string | undefined
  private loading = false

  constructor(
    readonly size: number,
    /** Time a batch may run (applies to batches dispatched after a change). */
    public budgetMs: number,
  ) {}

  /**
   * Matches every entry against the stages, in order, each entry stopping at the first stage it fails: answers how
   * many stages each passed. Rejects with MatchBudgetError past the budget, MatchAbortedError once `signal` aborts.
   */
  async run(stages: FilterStage[], entries: Uint8Array[], signal?: AbortSignal): Promise<Uint16Array> {
    if (entries.length === 0) return new Uint16Array(0)
    const answer = await this.submit({ id: 0, key: JSON.stringify(stages), stages, ...pack(entries) }, this.budgetMs, signal, false)
    if (answer.error !== undefined) throw new Error(`matching failed: ${answer.error}`)
    return answer.passed!
  }

  /**
   * Puts entries through a search's stateless head: answers the entries that came out (transfer.ts writeEntryOut:
   * read them with readEntryOut, `index` into `entries`), and gives onReached how far each entry went in the head
   * (its pipeline stats). Rejects as run() does.
   */
  async runHead(head: HeadJob, entries: readonly HeadInput[], signal?: AbortSignal, onReached?: (reached: Uint16Array) => void): Promise<Uint8Array> {
    if (entries.length === 0) return new Uint8Array(0)
    this.headBatches++
    const answer = await this.submit({ id: 0, key: head.key, head: head.batch(entries) }, this.budgetMs, signal, false)
    // The error of a module names the module (QueryError, SearchLimitError): passed on as it is, as the same error
    // thrown on this thread would be.
    if (answer.error !== undefined) throw new Error(answer.error)
    if (answer.reached) onReached?.(answer.reached)
    return answer.out!
  }

  /**
   * The program size of a pattern compiled on a worker (compiling some patterns of a few KB takes seconds); rejects
   * with MatchCompileError when it does not compile, MatchBudgetError past `budgetMs`. It goes before waiting batches.
   */
  async compile(pattern: string, budgetMs: number): Promise<number> {
    const answer = await this.submit({ id: 0, compile: pattern }, budgetMs, undefined, true)
    if (answer.error !== undefined) throw new MatchCompileError(answer.error)
    return answer.size!
  }

  private submit(msg: ToMatchWorker, budgetMs: number, signal: AbortSignal | undefined, first: boolean): Promise<FromMatchWorker> {
    if (this.closed) return Promise.reject(new MatchAbortedError('the server is stopping'))
    if (signal?.aborted) return Promise.reject(new MatchAbortedError('the search was stopped'))
    msg.id = ++this.lastId
    return new Promise<FromMatchWorker>((resolve, reject) => {
      const job: Job = {
        msg,
        budgetMs,
        resolve,
        reject,
        signal,
        onAbort: () => this.abort(job, new MatchAbortedError('the search was stopped')),
        slot: null,
      }
      signal?.addEventListener('abort', job.onAbort, { once: true })
      if (first) this.queue.unshift(job)
      else this.queue.push(job)
      this.dispatch()
    })
  }

  /** Stops every worker; queued and running batches fail. */
  close(): void {
    this.closed = true
    for (const job of this.queue.splice(0)) this.settle(job, new MatchAbortedError('the server is stopping'))
    for (const slot of this.slots.splice(0)) {
      if (slot.job) this.settle(slot.job, new MatchAbortedError('the server is stopping'))
      clearTimeout(slot.timer)
      slot.worker.terminate()
    }
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const slot = this.slots.find((s) => s.ready && s.job === null)
      if (!slot) {
        if (this.slots.length < this.size) this.spawn() // dispatch runs again once it has started
        return
      }
      const job = this.queue.shift()!
      slot.job = job
      job.slot = slot
      slot.timer = setTimeout(() => this.abort(job, budgetError(job)), job.budgetMs)
      slot.worker.postMessage(job.msg, transferList(job.msg))
    }
  }

  private spawn(): void {
    if (this.url === undefined) {
      if (!this.loading) {
        this.loading = true
        matchWorkerUrl().then(
          (url) => {
            this.url = url
            this.dispatch()
          },
          (e: unknown) => {
            this.loading = false
            for (const job of this.queue.splice(0)) this.settle(job, new Error(`the matching worker cannot start: ${e instanceof Error ? e.message : e}`))
          },
        )
      }
      return
    }
    const worker = new Worker(this.url)
    const slot: Slot = { worker, ready: false, job: null, timer: undefined }
    worker.onmessage = (event: MessageEvent<FromMatchWorker>) => {
      if (event.data.id === 0) {
        slot.ready = true
        this.dispatch()
        return
      }
      const job = slot.job
      if (!job || job.msg.id !== event.data.id) return
      clearTimeout(slot.timer)
      slot.job = null
      job.slot = null
      // The budget timer may not have run yet although the work took longer: when this thread was held (a long
      // collection, a starved process), the worker's answer and the overdue timer are both waiting, and the answer
      // is taken first. The worker's own clock decides then, so an over-budget batch is refused whatever the order.
      this.settle(job, (event.data.ms ?? 0) > job.budgetMs ? budgetError(job) : event.data)
      this.dispatch()
    }
    worker.onerror = (event) => {
      const job = slot.job
      this.retire(slot)
      if (job) this.settle(job, new Error(`the matching worker failed: ${event.message}`))
      this.dispatch()
    }
    worker.unref() // the server's listener keeps the process alive; an idle pool must not
    this.slots.push(slot)
  }

  /** Ends a job before its answer: out of the queue, or its worker terminated and replaced when it runs. */
  private abort(job: Job, e: Error): void {
    const queued = this.queue.indexOf(job)
    if (queued >= 0) this.queue.splice(queued, 1)
    else if (job.slot) this.retire(job.slot)
    else return // already answered
    this.settle(job, e)
    this.dispatch()
  }

  private retire(slot: Slot): void {
    clearTimeout(slot.timer)
    if (slot.job) slot.job.slot = null
    slot.job = null
    slot.worker.terminate()
    const i = this.slots.indexOf(slot)
    if (i >= 0) this.slots.splice(i, 1)
  }

  private settle(job: Job, result: FromMatchWorker | Error): void {
    job.signal?.removeEventListener('abort', job.onAbort)
    if (result instanceof Error) job.reject(result)
    else job.resolve(result)
  }

  /** Worker threads running now (tests). */
  get workers(): number {
    return this.slots.length
  }

  /** Batches on a worker now (tests). */
  get busy(): number {
    return this.slots.filter((s) => s.job !== null).length
  }
}
