// The blob store: where resource and file contents live, apart from the SQL store that holds their metadata.
// Two backends behind one narrow interface: local disk (the embedded default) and any S3-compatible server.
// Nothing here knows about HTTP or Elysia; errors are typed so the route layer can map them to statuses.

import { Sha1Stream } from './sha1'

/**
 * Guarantees, for both backends:
 * - Contents are streamed: `put` never holds a whole upload in memory and `get` streams from the store.
 * - `put` is all or nothing per key: until it resolves, readers see the previous contents (or none); if it fails
 *   (the input stream errors, `maxBytes` is exceeded, the store fails) the previous contents stay intact and no
 *   partial or stray object is left behind.
 * - Replacing contents under one key is atomic on disk (rename) and on S3 (an object appears only when its upload
 *   completes), but callers should still write each new version under a fresh key and delete the old key after the
 *   metadata points at the new one: that keeps a reader that is half-way through the old version working, and a
 *   crash in between leaves an orphan (found by `list()`), never a dangling reference.
 * - Keys are opaque strings made by the server; anything that is not a valid key (see `assertBlobKey`) is refused
 *   with `BlobKeyError` before the store is touched.
 */
export interface BlobStore {
  /** `disk` or `s3`, for logs and the version endpoint. */
  readonly kind: 'disk' | 's3'
  /**
   * Stores the stream's bytes under `key`, replacing what was there.
   * Size and SHA-1 (base64) are computed while streaming. Over `maxBytes` → `BlobTooLargeError`, nothing written.
   */
  put(key: string, stream: ReadableStream<Uint8Array>, opts?: PutOptions): Promise<PutResult>
  /**
   * Stores `bytes`, already in memory, under `key` as `put` stores a stream, as durably (on disk a temporary file
   * written, fsynced, renamed into place and its directory fsynced; on S3 one upload) and as atomically (a failure
   * leaves the previous contents or nothing), without a stream and without the SHA-1 no caller of it reads: sealed
   * segments, whose puts took half again the CPU and seven times the page faults through `put` (bench/README.md,
   * "bench/ingest-es-hec.ts").
   */
  putBytes(key: string, bytes: Uint8Array): Promise<void>
  /**
   * The contents (or a byte range of them) as a stream. `BlobNotFoundError` when there is no such blob;
   * `BlobRangeError` when `start` is at or past the end (except that a range from 0 of an empty blob is simply
   * empty) or the range is malformed. An `end` past the last byte is clamped to it.
   */
  get(key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array>>
  /**
   * The whole blob as a response body, for downloads: on disk a file that Bun sends with sendfile (no copy through
   * JavaScript; measured about twice as fast as streaming it), on S3 the stream of `get`. `BlobNotFoundError` when
   * missing. Unlike `get`, a disk download that starts after the blob was replaced and deleted fails mid-way.
   */
  body(key: string): Promise<Blob | ReadableStream<Uint8Array>>
  /**
   * The whole blob in memory, for blobs that are written once and never replaced (sealed segments): on disk a
   * read-only memory map of its file (no copy; the pages come from the page cache as they are read). Absent on S3.
   * `BlobNotFoundError` when missing. A file is never truncated in place (a put renames a new file over it, a delete
   * unlinks it), so a mapping stays readable as long as it is held; an I/O error of the disk under a mapping ends the
   * process (SIGBUS) where a read would have failed.
   */
  map?(key: string): Promise<Uint8Array>
  /** The blob's size, or undefined when there is none. */
  stat(key: string): Promise<{ size: number } | undefined>
  /** Removes the blob; removing a missing blob is not an error. */
  delete(key: string): Promise<void>
  /** Copies `from` to `to` inside the store (server-side on S3); `BlobNotFoundError` when `from` is missing. */
  copy(from: string, to: string): Promise<void>
  /** Every blob with its last-modification time, in no particular order (for the orphan sweep). */
  list(): AsyncIterable<BlobEntry>
  /**
   * Removes what puts cut off by a crash left behind and no put of this store is still writing, once it has not
   * been written for `graceMs`: on disk the temporary files; answers how many. (On S3 a failed put aborts its
   * multipart upload itself; what a crash leaves is for the bucket's AbortIncompleteMultipartUpload lifecycle rule.)
   */
  sweepPartial(graceMs: number): Promise<number>
}

export interface PutOptions {
  /** Largest accepted size in bytes; a longer stream is aborted with `BlobTooLargeError`. */
  maxBytes?: number
}

export interface PutResult {
  size: number
  /** SHA-1 of the contents, base64. */
  sha1: string
}

/** Inclusive byte offsets, as in an HTTP Range header: `{ start: 0, end: 0 }` is the first byte. */
export interface ByteRange {
  start: number
  end?: number
}

export interface BlobEntry {
  key: string
  lastModified: Date
}

export class BlobError extends Error {
  override name = 'BlobError'
}
export class BlobNotFoundError extends BlobError {
  override name = 'BlobNotFoundError'
  constructor(readonly key: string) {
    super(`no blob ${key}`)
  }
}
export class BlobTooLargeError extends BlobError {
  override name = 'BlobTooLargeError'
  constructor(readonly maxBytes: number) {
    super(`the contents exceed ${maxBytes} bytes`)
  }
}
export class BlobRangeError extends BlobError {
  override name = 'BlobRangeError'
}
export class BlobKeyError extends BlobError {
  override name = 'BlobKeyError'
}
/** The store did not answer within the bound (guard.ts): the request fails with 503, naming the blob store. */
export class BlobUnavailableError extends BlobError {
  override name = 'BlobUnavailableError'
  constructor(readonly timeoutMs: number) {
    super(`the blob store did not answer within ${timeoutMs / 1000} s (QUARRY_BLOB_TIMEOUT): try again later`)
  }
}

const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]*$/
export const MAX_KEY_LENGTH = 512

/**
 * A key is one or more `/`-separated segments of letters, digits, `.`, `_` and `-`, each starting with a letter or a
 * digit (so no `.`/`..` segment, no hidden file, no absolute path, no backslash), at most 512 characters in all.
 */
export function assertBlobKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_KEY_LENGTH || !key.split('/').every((s) => SEGMENT.test(s)))
    throw new BlobKeyError(`invalid blob key ${JSON.stringify(String(key).slice(0, 80))}`)
}

/** Refuses a malformed range (negative, fractional, end before start) with `BlobRangeError`. */
export function checkRange(range: ByteRange): void {
  const { start, end } = range
  if (!Number.isSafeInteger(start) || start < 0 || (end !== undefined && (!Number.isSafeInteger(end) || end < start)))
    throw new BlobRangeError(`invalid range ${start}-${end ?? ''}`)
}

/**
 * Counts and hashes a stream as it passes, failing with `BlobTooLargeError` as soon as it grows past `maxBytes`.
 * Shared by both backends so size, SHA-1 and the limit behave identically. The SHA-1 (`Sha1Stream`) runs on the
 * calling thread, or on 4 or more cores on a worker thread alongside the caller's receiving and writing; either way
 * `add` is done with the chunk when it returns (hashed, or copied for the worker), so the caller may write or hand on
 * the chunk at once, and it answers a promise to await before the next chunk when the worker's hashing lags.
 * A put that fails calls `abort` so the hash state is dropped.
 */
export class Meter {
  size = 0
  private readonly sha1 = new Sha1Stream()
  constructor(private readonly maxBytes = Number.POSITIVE_INFINITY) {}
  /** Accounts for a chunk; throws before it is written anywhere when it crosses the limit. */
  add(chunk: Uint8Array): Promise<void> | undefined {
    this.size += chunk.byteLength
    if (this.size > this.maxBytes) {
      this.sha1.abort()
      throw new BlobTooLargeError(this.maxBytes)
    }
    return this.sha1.update(chunk)
  }
  async result(): Promise<PutResult> {
    return { size: this.size, sha1: await this.sha1.digest() }
  }
  abort(): void {
    this.sha1.abort()
  }
}

/**
 * The download body of the blob an item's row names (null when it names none). A replace that commits between
 * reading the row and opening its blob deletes that blob; then the row is read again (`reread`, which checks access
 * again and answers 404 for an item deleted meanwhile) and the blob it names now is opened, so a download racing an
 * upload answers one whole version instead of a 500. `BlobNotFoundError` when the row still names the missing blob.
 */
export async function openBody<R extends { blobKey: string | null }>(
  blobs: BlobStore,
  row: R,
  reread: () => Promise<R>,
): Promise<{ row: R; body: Blob | ReadableStream<Uint8Array> | null }> {
  for (let attempt = 1; ; attempt++) {
    if (!row.blobKey) return { row, body: null }
    try {
      return { row, body: await blobs.body(row.blobKey) }
    } catch (e) {
      if (!(e instanceof BlobNotFoundError) || attempt >= 3) throw e
      const fresh = await reread()
      if (fresh.blobKey === row.blobKey) throw e
      row = fresh
    }
  }
}

/**
 * Deletes a blob that no metadata points at any more. A failure is logged, not raised: the request that let go
 * of the blob has succeeded, and what is left is an orphan for the sweep, never a dangling reference.
 */
export async function discardBlob(blobs: BlobStore, key: string | null | undefined, log: { warn(msg: string, fields?: Record<string, unknown>): void }) {
  if (!key) return
  await blobs.delete(key).catch((e: unknown) => log.warn('could not delete a blob', { key, error: String(e) }))
}

/**
 * The store with its puts in flight counted, so that a shutdown that closes the connections of unfinished uploads
 * can wait until those puts have failed and removed what they wrote (a temporary file, an S3 multipart upload).
 */
export function trackPuts(store: BlobStore): { blobs: BlobStore; settled(timeoutMs: number): Promise<boolean> } {
  const inFlight = new Set<Promise<unknown>>()
  const tracked = <T>(p: Promise<T>): Promise<T> => {
    inFlight.add(p)
    const done = () => void inFlight.delete(p)
    p.then(done, done)
    return p
  }
  const blobs: BlobStore = {
    ...store,
    put: (key, stream, opts) => tracked(store.put(key, stream, opts)),
    putBytes: (key, bytes) => tracked(store.putBytes(key, bytes)),
  }
  return {
    blobs,
    /** Whether every put in flight settled within the time. */
    async settled(timeoutMs) {
      const all = Promise.allSettled([...inFlight]).then(() => true)
      return Promise.race([all, Bun.sleep(timeoutMs).then(() => inFlight.size === 0)])
    },
  }
}

export { createDiskBlobStore } from './disk'
export { guardBlobStore } from './guard'
export type { S3Config, S3BlobStoreOptions } from './s3'

/**
 * The S3 blob store. Its module (and the minio client, over 100 ms to import) is loaded only by a configuration
 * that uses it, so a server on the disk store starts without it.
 */
export async function createS3BlobStore(opts: import('./s3').S3BlobStoreOptions): Promise<BlobStore> {
  return (await import('./s3')).createS3BlobStore(opts)
}
