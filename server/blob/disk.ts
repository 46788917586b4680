// The local-disk blob store (the embedded default): `<dataDir>/blobs/<aa>/<bb>/<name>`, fanned out by the SHA-1 of
// the key so no directory grows past a few thousand entries. A put streams into `blobs/tmp/`, fsyncs, and is
// renamed into place only when complete (then the directory is fsynced), so a reader or a crash never sees half a
// blob; a failed put removes its temporary file.
//
// Under load every awaited file operation costs a turn of the event loop, and a turn waits behind every request
// that is ready at the time (measured with bench/load.sh: a small upload took about as many times longer than a
// whoami as it had awaited operations). So the metadata operations that take microseconds (mkdir of a missing
// fan-out directory, rename, opening and closing a directory) are made synchronously; what can wait on the disk
// (writes, fsync) stays asynchronous.
import { closeSync, constants, fsync, mkdirSync, openSync, renameSync, statSync } from 'node:fs'
import { copyFile, type FileHandle, mkdir, open, readdir, rm, stat, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import {
  assertBlobKey,
  type BlobEntry,
  type BlobStore,
  BlobNotFoundError,
  BlobRangeError,
  type ByteRange,
  checkRange,
  Meter,
  type PutOptions,
  type PutResult,
} from './index'
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../runtime/datadir'

const READ_CHUNK = 256 * 1024
/**
 * A put starts an fdatasync of what it has written so far every this many bytes (one at a time, on Bun's thread
 * pool), so the disk writes a large blob back while the rest still arrives, instead of all of it in the final fsync
 * (about 0.7 s per GiB here). The final fsync before the rename is what makes the blob durable, as before.
 */
const SYNC_EVERY = 64 * 1024 * 1024
/**
 * A put gathers what it receives (64 KiB pieces from an HTTP body) into buffers of this size and writes whole buffers,
 * one write in flight while the next buffer fills: a write per 64 KiB cost a thread-pool round trip each, awaited
 * before the next piece was read (bench/README.md, "bench/resources-parts.ts"). Buffers are pooled across puts, a few kept.
 */
const WRITE_BATCH = 1024 * 1024
const WRITE_POOL_KEEP = 4
const writePool: Uint8Array[] = []
const takeWriteBuffer = () => writePool.pop() ?? new Uint8Array(WRITE_BATCH)
const releaseWriteBuffer = (b: Uint8Array | undefined) => {
  if (b && writePool.length < WRITE_POOL_KEEP) writePool.push(b)
}

/** Temporary files older than this at start are left-overs of a crash and are removed. */
const STALE_TEMP_MS = 60 * 60_000

export interface DiskBlobStoreOptions {
  /** The data directory; blobs live in its `blobs/` folder. */
  dataDir: string
}

export async function createDiskBlobStore(opts: DiskBlobStoreOptions): Promise<BlobStore> {
  const root = join(opts.dataDir, 'blobs')
  const tmpDir = join(root, 'tmp')
  // Directories are made on the first write, so an unused store leaves no trace in the data directory.
  await removeStaleTemps(tmpDir, Date.now() - STALE_TEMP_MS, new Set())
  let tmpReady = false
  const ensureTmp = async () => {
    if (tmpReady) return
    await mkdir(tmpDir, { recursive: true, mode: PRIVATE_DIR_MODE })
    tmpReady = true
  }
  /** Temporary files puts and copies of this store are writing now, which the partial sweep leaves alone. */
  const writing = new Set<string>()

  // `/` is allowed in keys but not in file names; `~` is not allowed in keys, so the mapping is reversible.
  const fileName = (key: string) => key.replaceAll('/', '~')
  const keyOf = (name: string) => name.replaceAll('~', '/')
  const dirOf = (key: string) => {
    const h = new Bun.CryptoHasher('sha1').update(key).digest('hex')
    return join(root, h.slice(0, 2), h.slice(2, 4))
  }
  const pathOf = (key: string) => {
    assertBlobKey(key)
    return join(dirOf(key), fileName(key))
  }

  /**
   * Renames a complete, fsynced temporary file to the blob of `key` and makes the rename durable. The fan-out
   * directory is made only when the rename finds it missing.
   */
  async function moveInto(temp: string, key: string): Promise<void> {
    const dir = dirOf(key)
    const target = join(dir, fileName(key))
    try {
      renameSync(temp, target)
    } catch (e) {
      if (!isNotFound(e)) throw e
      mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE })
      renameSync(temp, target)
    }
    await syncDir(dir)
  }

  async function put(key: string, stream: ReadableStream<Uint8Array>, putOpts: PutOptions = {}): Promise<PutResult> {
    assertBlobKey(key)
    const meter = new Meter(putOpts.maxBytes)
    const temp = join(tmpDir, `${crypto.randomUUID()}.part`)
    let fh: FileHandle | undefined
    let syncing: Promise<void> | undefined
    let syncFailure: unknown
    let unsynced = 0
    const reader = stream.getReader()
    // The buffer being filled, and the one a write in flight (`flushing`) holds; taken on the first bytes.
    let filling: Uint8Array | undefined
    let fill = 0
    let flushingBuffer: Uint8Array | undefined
    let flushing: Promise<void> | undefined
    let writeFailure: unknown
    const writeAll = async (file: FileHandle, b: Uint8Array, n: number) => {
      let off = 0
      while (off < n) off += (await file.write(b, off, n - off)).bytesWritten
    }
    /** Waits for the write in flight; its buffer becomes free. A failed write fails the put here. */
    const settleWrite = async () => {
      await flushing
      flushing = undefined
      if (writeFailure !== undefined) throw writeFailure
    }
    writing.add(temp)
    try {
      await ensureTmp()
      fh = await open(temp, 'wx', PRIVATE_FILE_MODE)
      const file = fh
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        const hashing = meter.add(value) // hashes the chunk (or copies it for the hash worker); throws over the limit
        for (let off = 0; off < value.byteLength; ) {
          filling ??= takeWriteBuffer()
          const n = Math.min(value.byteLength - off, WRITE_BATCH - fill)
          filling.set(off === 0 && n === value.byteLength ? value : value.subarray(off, off + n), fill)
          fill += n
          off += n
          if (fill < WRITE_BATCH) continue
          await settleWrite()
          const full = filling
          filling = flushingBuffer
          flushingBuffer = full
          fill = 0
          flushing = writeAll(file, full, WRITE_BATCH).catch((e: unknown) => void (writeFailure ??= e))
          unsynced += WRITE_BATCH
          if (unsynced >= SYNC_EVERY && !syncing) {
            unsynced = 0
            // Kept, not left to the final fsync: Linux reports a write-back error to an open file once. It covers
            // the writes done so far (the one in flight may or may not be in it; the final fsync covers all).
            syncing = file.datasync().then(
              () => void (syncing = undefined),
              (e: unknown) => void ((syncFailure ??= e), (syncing = undefined)),
            )
          }
        }
        if (hashing) await hashing
      }
      await settleWrite()
      if (filling && fill > 0) await writeAll(file, filling, fill)
      // The hash finishes while the file is fsynced.
      const result = meter.result()
      result.catch(() => {})
      await syncing
      if (syncFailure !== undefined) throw syncFailure
      await fh.sync()
      await fh.close()
      fh = undefined
      const stored = await result
      await moveInto(temp, key)
      return stored
    } catch (e) {
      meter.abort()
      reader.cancel(e).catch(() => {})
      await flushing // never close the file under a running write or fdatasync (neither rejects)
      flushing = undefined
      await syncing
      await fh?.close().catch(() => {})
      await rm(temp, { force: true }).catch(() => {})
      throw e
    } finally {
      writing.delete(temp)
      reader.releaseLock()
      // No write holds them any more (settled above, or awaited by the catch).
      if (flushing === undefined) {
        releaseWriteBuffer(filling)
        releaseWriteBuffer(flushingBuffer)
      }
    }
  }

  async function putBytes(key: string, bytes: Uint8Array): Promise<void> {
    assertBlobKey(key)
    const temp = join(tmpDir, `${crypto.randomUUID()}.part`)
    let fh: FileHandle | undefined
    writing.add(temp)
    try {
      await ensureTmp()
      fh = await open(temp, 'wx', PRIVATE_FILE_MODE)
      for (let off = 0; off < bytes.byteLength; ) off += (await fh.write(bytes, off, bytes.byteLength - off)).bytesWritten
      await fh.sync()
      await fh.close()
      fh = undefined
      await moveInto(temp, key)
    } catch (e) {
      await fh?.close().catch(() => {})
      await rm(temp, { force: true }).catch(() => {})
      throw e
    } finally {
      writing.delete(temp)
    }
  }

  async function get(key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array>> {
    const path = pathOf(key)
    if (range) checkRange(range)
    // The stream reads from the open file, so a put that replaces the blob meanwhile does not change what it sees.
    let fh: FileHandle
    try {
      fh = await open(path, 'r')
    } catch (e) {
      if (isNotFound(e)) throw new BlobNotFoundError(key)
      throw e
    }
    let pos: number
    let end: number // exclusive
    try {
      const size = (await fh.stat()).size
      pos = range?.start ?? 0
      end = range?.end === undefined ? size : Math.min(range.end + 1, size)
      if (range && range.start > 0 && range.start >= size) throw new BlobRangeError(`range ${range.start}- is past the end (${size} bytes)`)
    } catch (e) {
      await fh.close()
      throw e
    }
    let closed = false
    const close = async () => {
      if (closed) return
      closed = true
      await fh.close()
    }
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          if (pos >= end) {
            await close()
            controller.close()
            return
          }
          const buf = new Uint8Array(Math.min(READ_CHUNK, end - pos))
          const { bytesRead } = await fh.read(buf, 0, buf.byteLength, pos)
          if (bytesRead === 0) {
            await close()
            controller.close()
            return
          }
          pos += bytesRead
          controller.enqueue(bytesRead === buf.byteLength ? buf : buf.subarray(0, bytesRead))
        } catch (e) {
          await close().catch(() => {})
          controller.error(e)
        }
      },
      async cancel() {
        await close()
      },
    })
  }

  async function statBlob(key: string): Promise<{ size: number } | undefined> {
    try {
      return { size: (await stat(pathOf(key))).size }
    } catch (e) {
      if (isNotFound(e)) return undefined
      throw e
    }
  }

  async function del(key: string): Promise<void> {
    try {
      await unlink(pathOf(key))
    } catch (e) {
      if (!isNotFound(e)) throw e
    }
  }

  async function copy(from: string, to: string): Promise<void> {
    const source = pathOf(from)
    assertBlobKey(to)
    const temp = join(tmpDir, `${crypto.randomUUID()}.part`)
    writing.add(temp)
    try {
      await ensureTmp()
      try {
        await copyFile(source, temp, constants.COPYFILE_FICLONE) // a reflink where the file system has them
      } catch (e) {
        if (isNotFound(e)) throw new BlobNotFoundError(from)
        throw e
      }
      const fh = await open(temp, 'r+')
      await fh.chmod(PRIVATE_FILE_MODE).then(() => fh.sync()).finally(() => fh.close())
      await moveInto(temp, to)
    } catch (e) {
      await rm(temp, { force: true }).catch(() => {})
      throw e
    } finally {
      writing.delete(temp)
    }
  }

  async function* list(): AsyncIterable<BlobEntry> {
    for (const a of await readdirIfAny(root)) {
      if (!/^[0-9a-f]{2}$/.test(a)) continue // skips tmp/
      for (const b of await readdirIfAny(join(root, a))) {
        const dir = join(root, a, b)
        for (const name of await readdirIfAny(dir)) {
          const s = await stat(join(dir, name)).catch(() => undefined)
          if (s?.isFile()) yield { key: keyOf(name), lastModified: s.mtime }
        }
      }
    }
  }

  async function body(key: string): Promise<Blob> {
    const file = Bun.file(pathOf(key))
    if (!(await file.exists())) throw new BlobNotFoundError(key)
    return file
  }

  async function map(key: string): Promise<Uint8Array> {
    const path = pathOf(key)
    try {
      // An empty file cannot be mapped.
      return statSync(path).size === 0 ? new Uint8Array(0) : Bun.mmap(path, { shared: false })
    } catch (e) {
      if (isNotFound(e)) throw new BlobNotFoundError(key)
      throw e
    }
  }

  const sweepPartial = (graceMs: number) => removeStaleTemps(tmpDir, Date.now() - graceMs, writing)

  return { kind: 'disk', put, putBytes, get, body, map, stat: statBlob, delete: del, copy, list, sweepPartial }
}

function isNotFound(e: unknown): boolean {
  const code = (e as { code?: string } | null)?.code
  return code === 'ENOENT' || code === 'ENOTDIR'
}

async function readdirIfAny(dir: string): Promise<string[]> {
  try {
    return await readdir(dir)
  } catch (e) {
    if (isNotFound(e)) return []
    throw e
  }
}

const fsyncFd = promisify(fsync)

/** Makes a rename in `dir` durable. */
async function syncDir(dir: string): Promise<void> {
  const fd = openSync(dir, 'r')
  try {
    await fsyncFd(fd)
  } finally {
    closeSync(fd)
  }
}

/** Removes the temporary files not written since `olderThan` that no put is writing; answers how many. */
async function removeStaleTemps(tmpDir: string, olderThan: number, writing: ReadonlySet<string>): Promise<number> {
  let removed = 0
  for (const name of await readdirIfAny(tmpDir)) {
    const path = join(tmpDir, name)
    if (writing.has(path)) continue
    const s = await stat(path).catch(() => undefined)
    if (s && s.mtimeMs < olderThan) {
      await rm(path, { force: true })
      removed++
    }
  }
  return removed
}
