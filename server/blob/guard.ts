// The blob store as requests use it: no operation waits on an unresponsive store for longer than a bound, and each
// outcome tells the dependency tracker whether the store answers.
//
// Guarantees:
// - Every operation that waits on the store (get, body, map, stat, delete, copy, each page of list) fails with
//   BlobUnavailableError once the store has not answered for `timeoutMs`. A stream it answered fails the same way when
//   its next chunk takes that long (a download from a store that froze mid-way ends instead of hanging).
// - A put fails with BlobUnavailableError once the store has taken nothing for `timeoutMs` while the input had data
//   ready (or had ended): a slow uploader is waited for, a frozen store is not. The input is cancelled, so the put
//   leaves what the BlobStore contract says a failed put leaves. A putBytes (a sealed segment, a few MiB at most)
//   fails so once the whole write has taken `timeoutMs`.
// - Refusals of the store's own (BlobNotFoundError, BlobRangeError, BlobTooLargeError, BlobKeyError) and a failure of
//   a put's input count as answers: the store is up. Any other failure, a timeout included, counts as the store failing.
//   A delete that succeeds does not count as recovery: it is the cleanup after a failed write, which a store that
//   refuses writes (a full disk) still does, and the state would flip at every failed write.
// The operation given up on may still end inside the store later (an object written after all); what it wrote is an
// orphan for the blob sweep, as after a crash.
import type { Dependencies } from '../runtime/dependencies'
import { BlobError, type BlobStore, BlobUnavailableError } from './index'

export function guardBlobStore(store: BlobStore, timeoutMs: number, deps: Pick<Dependencies, 'ok' | 'failed'>): BlobStore {
  const unavailable = () => new BlobUnavailableError(timeoutMs)
  const settle = <T>(p: Promise<T>, recovers = true): Promise<T> =>
    p.then(
      (v) => {
        if (recovers) deps.ok('blobs')
        return v
      },
      (e: unknown) => {
        if (e instanceof BlobError && !(e instanceof BlobUnavailableError)) deps.ok('blobs')
        else deps.failed('blobs', e)
        throw e
      },
    )
  const within = <T>(p: Promise<T>, recovers = true): Promise<T> => {
    let timer: ReturnType<typeof setTimeout> | undefined
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(unavailable()), timeoutMs)
    })
    return settle(
      Promise.race([p, late]).finally(() => clearTimeout(timer)),
      recovers,
    )
  }
  /** The stream, failing once a chunk takes longer than the bound. */
  const watched = (stream: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> => {
    const reader = stream.getReader()
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const next = await within(reader.read())
          if (next.done) controller.close()
          else controller.enqueue(next.value)
        } catch (e) {
          reader.cancel(e).catch(() => {})
          controller.error(e)
        }
      },
      cancel(reason) {
        return reader.cancel(reason)
      },
    })
  }

  function put(key: string, input: ReadableStream<Uint8Array>, opts?: Parameters<BlobStore['put']>[2]) {
    const reader = input.getReader()
    let waitingOnInput = false
    let inputFailed = false
    let lastProgress = performance.now()
    const fed = new ReadableStream<Uint8Array>({
      async pull(controller) {
        waitingOnInput = true
        try {
          const next = await reader.read()
          lastProgress = performance.now()
          if (next.done) controller.close()
          else controller.enqueue(next.value)
        } catch (e) {
          inputFailed = true
          controller.error(e)
        } finally {
          waitingOnInput = false
        }
      },
      cancel(reason) {
        return reader.cancel(reason)
      },
    })
    let watchdog: ReturnType<typeof setInterval> | undefined
    const stalled = new Promise<never>((_, reject) => {
      watchdog = setInterval(
        () => {
          if (waitingOnInput || performance.now() - lastProgress < timeoutMs) return
          reader.cancel(unavailable()).catch(() => {})
          reject(unavailable())
        },
        Math.max(25, Math.floor(timeoutMs / 4)),
      )
    })
    const done = Promise.race([store.put(key, fed, opts), stalled]).finally(() => clearInterval(watchdog))
    return done.then(
      (v) => {
        deps.ok('blobs')
        return v
      },
      (e: unknown) => {
        if (inputFailed || (e instanceof BlobError && !(e instanceof BlobUnavailableError))) deps.ok('blobs')
        else deps.failed('blobs', e)
        throw e
      },
    )
  }

  async function* list() {
    const pages = store.list()[Symbol.asyncIterator]()
    for (;;) {
      const next = await within(pages.next())
      if (next.done) return
      yield next.value
    }
  }

  return {
    kind: store.kind,
    put,
    putBytes: (key, bytes) => within(store.putBytes(key, bytes)),
    get: async (key, range) => watched(await within(store.get(key, range))),
    body: async (key) => {
      const body = await within(store.body(key))
      return body instanceof ReadableStream ? watched(body) : body
    },
    ...(store.map ? { map: (key: string) => within(store.map!(key)) } : {}),
    stat: (key) => within(store.stat(key)),
    delete: (key) => within(store.delete(key), false),
    copy: (from, to) => within(store.copy(from, to)),
    list,
    sweepPartial: (graceMs) => store.sweepPartial(graceMs),
  }
}
