// The filter stages (grep, regex) of searches with a regex, matched on worker threads, never on the event loop.
//
// RE2 is linear in the entry but each byte costs work that grows with the compiled program (query.ts bounds its size):
// the worst accepted pattern takes seconds over the largest entry ingest accepts. On the JS thread that held every
// request of every user for as long; here the JS thread only sends a batch of entries and awaits the answer.
//
// Guarantees:
// - A batch runs on one worker of a pool of `size` threads, started when first needed; batches wait in order of
//   arrival (each search has at most one out, so searches take turns).
// - A batch that runs longer than `budgetMs` is stopped: its worker is terminated (the only way to interrupt a match)
//   and replaced, and the batch fails with MatchBudgetError; one whose answer comes in before the budget's timer ran
//   (this thread was held) but took longer by the worker's clock fails the same way. A batch whose signal aborts (the
//   search was stopped or deleted) is dropped from the queue or, running, its worker is terminated the same way: no
//   CPU goes on matching for a search nobody wants.
// - Compiled stages are cached per worker, at most CACHE_SIZE query stage lists (an LRU: the key is user input).
// - The worker is started from its own source text plus re2js's (a Blob URL), so that the single executable
//   (`bun build --compile`) needs no separate worker file (see server/blob/sha1.ts).
// The UMD build, by its path: the bundler must not see the ES module that query.ts imports as text too (it then
// loaded that module as text for both, and `bun build --compile` failed).
// @ts-expect-error: Bun imports the file's source as text (TypeScript knows no such import)
import re2jsSource from '../../node_modules/re2js/build/index.umd.js' with { type: 'text' }
import { type Literals, type PreparedLiterals, literalsMayMatch, prepareLiterals } from '../../engine/regex'

/** A regex stage may carry its pattern's required literals (LazyRegex.literals): entries without them skip RE2. */
export type FilterStage = { op: 'grep'; text: string } | { op: 'regex'; pattern: string; literals?: Literals | null }

/** Compiled stage lists a worker keeps. */
const CACHE_SIZE = 32

/**
 * A batch of entries to match against `stages` (compiled once per `key`): entry i is data[offsets[i], offsets[i+1]),
 * packed into one buffer that is transferred, not copied (Bun's structured clone of 1024 small arrays took 70 ms, the
 * packing 1 ms). Or a pattern to compile only.
 */
type ToMatchWorker =
  | { id: number; key: string; stages: FilterStage[]; data: Uint8Array; offsets: Uint32Array }
  | { id: number; compile: string }
/**
 * For each entry, how many of the stages it passed in order (stages.length: all of them); or the program size of
 * the compiled pattern, or why it does not compile.
 */
interface FromMatchWorker {
  /** 0: the worker has started (sent once, before any answer). */
  id: number
  passed?: Uint16Array
  size?: number
  error?: string
  /** How long the work took on the worker, in ms (its own clock: the JS thread's may have been held meanwhile). */
  ms?: number
}

/**
 * The worker thread's program, given the RE2JS class and the cache size. It must refer to nothing outside its own body (it runs from
 * its source text).
 */
function matchWorkerMain(
  RE2JS: { compile(pattern: string): { test(input: Uint8Array): boolean; programSize(): number } },
  cacheSize: number,
  prepare: typeof prepareLiterals,
  mayMatch: typeof literalsMayMatch,
) {
  const scope = globalThis as unknown as Worker
  const cache = new Map<string, ((d: Buffer) => boolean)[]>()
  const compile = (stages: FilterStage[]) =>
    stages.map((st): ((d: Buffer) => boolean) => {
      if (st.op === 'grep') {
        const needle = Buffer.from(st.text)
        return (d) => d.includes(needle)
      }
      const re = RE2JS.compile(st.pattern)
      const literals: PreparedLiterals | null = prepare(st.literals ?? null)
      return literals === null ? (d) => re.test(d) : (d) => mayMatch(literals, d) && re.test(d)
    })
  scope.onmessage = (event: MessageEvent<ToMatchWorker>) => {
    const m = event.data
    const started = performance.now()
    try {
      if ('compile' in m) {
        let size: number
        try {
          size = RE2JS.compile(m.compile).programSize()
        } catch (e) {
          scope.postMessage({ id: m.id, error: e instanceof Error ? e.message : String(e), ms: performance.now() - started } satisfies FromMatchWorker)
          return
        }
        scope.postMessage({ id: m.id, size, ms: performance.now() - started } satisfies FromMatchWorker)
        return
      }
      let steps = cache.get(m.key)
      if (steps) cache.delete(m.key)
      else steps = compile(m.stages)
      cache.set(m.key, steps)
      if (cache.size > cacheSize) cache.delete(cache.keys().next().value!)
      const passed = new Uint16Array(m.offsets.length - 1)
      for (let i = 0; i < passed.length; i++) {
        const d = Buffer.from(m.data.buffer, m.data.byteOffset + m.offsets[i]!, m.offsets[i + 1]! - m.offsets[i]!)
        let n = 0
        while (n < steps.length && steps[n]!(d)) n++
        passed[i] = n
      }
      scope.postMessage({ id: m.id, passed, ms: performance.now() - started } satisfies FromMatchWorker, [passed.buffer])
    } catch (e) {
      scope.postMessage({ id: m.id, error: e instanceof Error ? e.message : String(e) } satisfies FromMatchWorker)
    }
  }
  scope.postMessage({ id: 0 } satisfies FromMatchWorker)
}

let workerUrl: string | undefined
const matchWorkerUrl = () =>
  (workerUrl ??= URL.createObjectURL(
    new Blob([`const re2js = {};\n(function (exports, module) {\n${re2jsSource as string}\n}).call(globalThis, re2js, { exports: re2js });\n(${matchWorkerMain.toString()})(re2js.RE2JS, ${CACHE_SIZE}, (${prepareLiterals.toString()}), (${literalsMayMatch.toString()}))`], {
      type: 'application/javascript',
    }),
  ))

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
    const offsets = new Uint32Array(entries.length + 1)
    for (let i = 0; i < entries.length; i++) offsets[i + 1] = offsets[i]! + entries[i]!.byteLength
    const data = new Uint8Array(offsets[entries.length]!)
    entries.forEach((e, i) => data.set(e, offsets[i]!))
    const answer = await this.submit({ id: 0, key: JSON.stringify(stages), stages, data, offsets }, this.budgetMs, signal, false)
    if (answer.error !== undefined) throw new Error(`matching failed: ${answer.error}`)
    return answer.passed!
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
      slot.worker.postMessage(job.msg, 'data' in job.msg ? [job.msg.data.buffer as ArrayBuffer, job.msg.offsets.buffer as ArrayBuffer] : [])
    }
  }

  private spawn(): Slot {
    const worker = new Worker(matchWorkerUrl())
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
    return slot
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
}
