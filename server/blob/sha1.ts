// SHA-1 of a stream of chunks. By default it is computed on a worker thread, so that hashing (0.6-2.5 s per GiB
// depending on the CPU, about as long as `cp` + `sync` of the same GiB) runs alongside receiving, parsing and writing
// on the JS thread instead of after each of them. It can run on the calling thread instead (QUARRY_UPLOAD_HASH=thread):
// less CPU in all on 2 cores, but the body's pieces then pile up for the collector and a 1 GiB upload's peak RSS grew
// 52-71 MiB against 35-41 MiB on the worker, past the 64 MiB bound on an upload's memory, for 3-6 % of speed
// (bench/README.md, upload stages).
//
// Guarantees, either way: the digest is that of the bytes passed to `update`, in order, as they were at the call
// (hashed or copied at once, so the caller may reuse or hand on its chunk). On the worker, memory is bounded: bytes
// are copied into 1 MiB batches from a small shared pool; a full batch is transferred to the worker (no copy) and
// comes back once hashed; `update` answers a promise to wait on while BATCHES_IN_FLIGHT batches of this hash are out,
// which is the backpressure that slows the upload down to the hashing speed. A hash that never fills a batch (every
// small upload) is computed inline by `digest` and never touches the worker. One worker serves every hash of the
// process.
const BATCH = 1024 * 1024
const BATCHES_IN_FLIGHT = 4
/** Batches kept for reuse between hashes; more than one put at a time allocates more, freed after. */
const POOL_KEEP = 2 * BATCHES_IN_FLIGHT

/** Whether a hash runs on the worker unless told otherwise (QUARRY_UPLOAD_HASH; see the head of this file). */
export let HASH_ON_WORKER = true

/** Changes the default for the hashes started from now on (QUARRY_UPLOAD_HASH; bench/resources-parts.ts compares both). */
export function setHashOnWorker(onWorker: boolean): void {
  HASH_ON_WORKER = onWorker
}

/** A batch to hash (`len` bytes of `buf`), then the digest if `final`; or `abort`: forget the hash. */
export interface ToHashWorker {
  id: number
  buf: ArrayBuffer
  len: number
  final?: boolean
  abort?: boolean
}
/** A hashed batch handed back, with the digest (base64) after the final one. */
export interface FromHashWorker {
  id: number
  buf: ArrayBuffer
  digest?: string
}

/**
 * The worker thread's program: one SHA-1 state per hash id; each batch is hashed and transferred back (so the main
 * thread reuses it), the digest answered with the final batch. Messages of one id arrive in the order they were sent,
 * so batches are hashed in stream order. It is started from its own source text (a Blob URL), not from a file, so
 * that the single executable (`bun build --compile`) needs no separate worker entry point: it must therefore refer to
 * nothing outside its own body.
 */
function hashWorkerMain() {
  const scope = globalThis as unknown as Worker
  const states = new Map<number, Bun.CryptoHasher>()
  scope.onmessage = (event: MessageEvent<ToHashWorker>) => {
    const m = event.data
    if (m.abort) {
      states.delete(m.id)
      return
    }
    let state = states.get(m.id)
    if (!state) {
      state = new Bun.CryptoHasher('sha1')
      states.set(m.id, state)
    }
    if (m.len > 0) state.update(new Uint8Array(m.buf, 0, m.len))
    let digest: string | undefined
    if (m.final) {
      digest = state.digest('base64')
      states.delete(m.id)
    }
    const reply: FromHashWorker = { id: m.id, buf: m.buf, digest }
    scope.postMessage(reply, [m.buf])
  }
}
let hashWorkerUrl: string | undefined
const workerUrl = () =>
  (hashWorkerUrl ??= URL.createObjectURL(new Blob([`(${hashWorkerMain.toString()})()`], { type: 'application/javascript' })))

const pool: Uint8Array[] = []
const takeBatch = () => pool.pop() ?? new Uint8Array(BATCH)
const release = (batch: Uint8Array) => {
  if (pool.length < POOL_KEEP) pool.push(batch)
}

let worker: Worker | undefined
const hashes = new Map<number, Sha1Stream>()
let lastId = 0

function hashWorker(): Worker {
  if (worker) return worker
  const w = new Worker(workerUrl())
  w.onmessage = (event: MessageEvent<FromHashWorker>) => {
    const m = event.data
    release(new Uint8Array(m.buf))
    hashes.get(m.id)?.returned(m.digest)
  }
  w.onerror = (event) => {
    // Every hash in progress fails (its put fails and removes what it wrote); the next put starts a new worker.
    const e = new Error(`the SHA-1 worker failed: ${event.message}`)
    worker = undefined
    w.terminate()
    for (const h of hashes.values()) h.fail(e)
    hashes.clear()
  }
  w.unref() // referenced only while a hash uses it (see track)
  worker = w
  return w
}

/** Keeps the process alive while the worker has hashes to answer, and not otherwise. */
function track(id: number, h: Sha1Stream | undefined) {
  if (h) hashes.set(id, h)
  else hashes.delete(id)
  if (!worker) return
  if (hashes.size > 0) worker.ref()
  else worker.unref()
}

export class Sha1Stream {
  /** The hash state when this hash runs on the calling thread (see the constructor). */
  private readonly inline: Bun.CryptoHasher | undefined
  private batch: Uint8Array | undefined
  private fill = 0
  /** 0 until the first full batch goes to the worker. */
  private id = 0
  private inFlight = 0
  private finished = false
  private failure: Error | undefined
  private wake: { resolve: () => void; reject: (e: Error) => void } | undefined
  private result: { resolve: (digest: string) => void; reject: (e: Error) => void } | undefined

  /** `worker`: hash on the worker thread (the default, see HASH_ON_WORKER) or on the calling one. */
  constructor(opts: { worker?: boolean } = {}) {
    if (!(opts.worker ?? HASH_ON_WORKER)) this.inline = new Bun.CryptoHasher('sha1')
  }

  /** Takes the chunk's bytes; answers a promise when the caller should wait before the next chunk. */
  update(chunk: Uint8Array): Promise<void> | undefined {
    if (this.failure) throw this.failure
    if (this.finished) throw new Error('update after digest or abort')
    if (this.inline) {
      this.inline.update(chunk)
      return undefined
    }
    let off = 0
    while (off < chunk.byteLength) {
      this.batch ??= takeBatch()
      const n = Math.min(chunk.byteLength - off, BATCH - this.fill)
      this.batch.set(off === 0 && n === chunk.byteLength ? chunk : chunk.subarray(off, off + n), this.fill)
      this.fill += n
      off += n
      if (this.fill === BATCH) this.send(false)
    }
    if (this.inFlight < BATCHES_IN_FLIGHT) return undefined
    return new Promise<void>((resolve, reject) => {
      this.wake = { resolve, reject }
    })
  }

  /** The SHA-1 (base64) of everything passed to `update`. */
  async digest(): Promise<string> {
    if (this.failure) throw this.failure
    if (this.finished) throw new Error('digest after digest or abort')
    this.finished = true
    if (this.inline) return this.inline.digest('base64')
    const batch = (this.batch ??= takeBatch())
    if (this.id === 0) {
      const digest = new Bun.CryptoHasher('sha1').update(batch.subarray(0, this.fill)).digest('base64')
      this.batch = undefined
      release(batch)
      return digest
    }
    const done = new Promise<string>((resolve, reject) => {
      this.result = { resolve, reject }
    })
    this.send(true)
    return done
  }

  /** Forgets the hash (the put failed); idempotent, and harmless after `digest`. */
  abort(): void {
    if (this.finished) return
    this.finished = true
    if (this.batch) release(this.batch)
    this.batch = undefined
    if (this.id !== 0 && !this.failure) {
      worker?.postMessage({ id: this.id, buf: new ArrayBuffer(0), len: 0, abort: true } satisfies ToHashWorker)
      track(this.id, undefined)
    }
  }

  private send(final: boolean) {
    const batch = this.batch!
    this.batch = undefined
    if (this.id === 0) {
      this.id = ++lastId
      hashWorker()
      track(this.id, this)
    }
    const msg: ToHashWorker = { id: this.id, buf: batch.buffer as ArrayBuffer, len: this.fill, final }
    this.fill = 0
    this.inFlight++
    worker!.postMessage(msg, [msg.buf])
  }

  /** A batch came back from the worker, with the digest after the final one. */
  returned(digest: string | undefined) {
    this.inFlight--
    if (digest !== undefined) {
      track(this.id, undefined)
      this.result?.resolve(digest)
      return
    }
    if (this.wake && this.inFlight < BATCHES_IN_FLIGHT) {
      const { resolve } = this.wake
      this.wake = undefined
      resolve()
    }
  }

  fail(e: Error) {
    this.failure = e
    this.wake?.reject(e)
    this.result?.reject(e)
    this.wake = undefined
    this.result = undefined
  }
}
