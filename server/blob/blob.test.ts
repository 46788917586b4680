// One contract suite for every BlobStore backend: local disk, and S3 against the real server test/run.sh starts
// (a one-node Ceph RADOS Gateway on loopback). The S3 run never skips: without QUARRY_TEST_S3_* it fails; only a run
// without the test servers (test/services.ts) leaves it out.
import { afterEach, describe, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  type BlobStore,
  BlobKeyError,
  BlobNotFoundError,
  BlobRangeError,
  BlobTooLargeError,
  createDiskBlobStore,
  createS3BlobStore,
} from './index'
import { MISSING_S3, testS3 } from '../../test/s3'
import { withServers } from '../../test/services'

interface Harness {
  store: BlobStore
  /** Left-overs of failed puts: temporary files on disk, incomplete multipart uploads on S3. */
  strays(): Promise<string[]>
  cleanup(): Promise<void>
}

const MiB = 1024 * 1024

function bytes(n: number, seed = 0): Uint8Array {
  const b = new Uint8Array(n)
  for (let i = 0; i < n; i++) b[i] = (i * 7 + seed + (i >> 8)) & 255
  return b
}

/** A stream of `data` in `chunkSize` pieces; with `failAfter`, it errors once that many bytes have been sent. */
function streamOf(data: Uint8Array, chunkSize = 64 * 1024, failAfter?: number): ReadableStream<Uint8Array> {
  let pos = 0
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (failAfter !== undefined && pos >= failAfter) return controller.error(new Error('client went away'))
      if (pos >= data.byteLength) return controller.close()
      const next = data.slice(pos, pos + chunkSize)
      pos += next.byteLength
      controller.enqueue(next)
    },
  })
}

async function read(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer())
}

const sha1 = (b: Uint8Array) => new Bun.CryptoHasher('sha1').update(b).digest('base64')

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p
  } catch (e) {
    return e
  }
  throw new Error('expected a rejection')
}

async function keys(store: BlobStore): Promise<string[]> {
  const out: string[] = []
  for await (const e of store.list()) out.push(e.key)
  return out.sort()
}

function contract(name: string, makeHarness: () => Promise<Harness>) {
  describe(`BlobStore contract: ${name}`, () => {
    const open: Harness[] = []
    afterEach(async () => {
      for (const h of open.splice(0)) await h.cleanup()
    })
    async function setup() {
      const h = await makeHarness()
      open.push(h)
      return h
    }

    test('an empty blob round-trips', async () => {
      const { store } = await setup()
      expect(await store.put('empty', streamOf(new Uint8Array(0)))).toEqual({ size: 0, sha1: '2jmj7l5rSw0yVb/vlWAYkK/YBwk=' })
      expect(await read(await store.get('empty'))).toEqual(new Uint8Array(0))
      expect(await store.stat('empty')).toEqual({ size: 0 })
    })

    test('every byte value round-trips, in uneven chunks', async () => {
      const { store } = await setup()
      const data = new Uint8Array(256 * 3).map((_, i) => i & 255)
      expect(await store.put('bin', streamOf(data, 77))).toEqual({ size: data.byteLength, sha1: sha1(data) })
      expect(await read(await store.get('bin'))).toEqual(data)
    })

    test('a few MiB stream in and out (multipart on S3)', async () => {
      const { store, strays } = await setup()
      const data = bytes(6 * MiB + 123)
      expect(await store.put('big', streamOf(data))).toEqual({ size: data.byteLength, sha1: sha1(data) })
      expect(await store.stat('big')).toEqual({ size: data.byteLength })
      const back = await read(await store.get('big'))
      expect(back.byteLength).toBe(data.byteLength)
      expect(sha1(back)).toBe(sha1(data))
      const mid = await read(await store.get('big', { start: 5 * MiB - 10, end: 5 * MiB + 9 }))
      expect(mid).toEqual(data.slice(5 * MiB - 10, 5 * MiB + 10))
      expect(await strays()).toEqual([])
    })

    test('ranges: start only, start and end, end past the end, start past the end', async () => {
      const { store } = await setup()
      const data = bytes(1000)
      await store.put('r', streamOf(data, 100))
      expect(await read(await store.get('r', { start: 990 }))).toEqual(data.slice(990))
      expect(await read(await store.get('r', { start: 0 }))).toEqual(data)
      expect(await read(await store.get('r', { start: 10, end: 19 }))).toEqual(data.slice(10, 20))
      expect(await read(await store.get('r', { start: 5, end: 5 }))).toEqual(data.slice(5, 6))
      expect(await read(await store.get('r', { start: 995, end: 5000 }))).toEqual(data.slice(995))
      expect(await rejection(store.get('r', { start: 1000 }))).toBeInstanceOf(BlobRangeError)
      expect(await rejection(store.get('r', { start: 5000, end: 6000 }))).toBeInstanceOf(BlobRangeError)
      expect(await rejection(store.get('r', { start: 10, end: 9 }))).toBeInstanceOf(BlobRangeError)
      expect(await rejection(store.get('r', { start: -1 }))).toBeInstanceOf(BlobRangeError)
      expect(await rejection(store.get('r', { start: 1.5 }))).toBeInstanceOf(BlobRangeError)
    })

    test('a range from 0 of an empty blob is empty', async () => {
      const { store } = await setup()
      await store.put('e', streamOf(new Uint8Array(0)))
      expect(await read(await store.get('e', { start: 0 }))).toEqual(new Uint8Array(0))
      expect(await read(await store.get('e', { start: 0, end: 10 }))).toEqual(new Uint8Array(0))
      expect(await rejection(store.get('e', { start: 1 }))).toBeInstanceOf(BlobRangeError)
    })

    test('body answers the whole blob as a response body; a missing one is not-found', async () => {
      const { store } = await setup()
      const data = new Uint8Array(256 * 5).map((_, i) => (i * 7) & 255)
      await store.put('whole', streamOf(data, 100))
      expect(new Uint8Array(await new Response(await store.body('whole')).arrayBuffer())).toEqual(data)
      await store.put('nothing', streamOf(new Uint8Array(0)))
      expect((await new Response(await store.body('nothing')).arrayBuffer()).byteLength).toBe(0)
      expect(await rejection(store.body('nope'))).toBeInstanceOf(BlobNotFoundError)
      expect(await rejection(store.body('../escape'))).toBeInstanceOf(BlobKeyError)
    })

    test('a missing blob: get fails with not-found, stat is undefined', async () => {
      const { store } = await setup()
      const e = await rejection(store.get('nope'))
      expect(e).toBeInstanceOf(BlobNotFoundError)
      expect((e as BlobNotFoundError).key).toBe('nope')
      expect(await rejection(store.get('nope', { start: 3 }))).toBeInstanceOf(BlobNotFoundError)
      expect(await store.stat('nope')).toBeUndefined()
    })

    test('delete is idempotent', async () => {
      const { store } = await setup()
      await store.put('d', streamOf(bytes(10)))
      await store.delete('d')
      expect(await store.stat('d')).toBeUndefined()
      expect(await rejection(store.get('d'))).toBeInstanceOf(BlobNotFoundError)
      await store.delete('d')
      await store.delete('never-was')
    })

    test('copy makes an independent blob; copying a missing blob fails', async () => {
      const { store } = await setup()
      const a = bytes(3000, 1)
      const b = bytes(2000, 2)
      await store.put('src', streamOf(a))
      await store.put('dst', streamOf(b))
      await store.copy('src', 'dst') // replaces
      expect(await read(await store.get('dst'))).toEqual(a)
      await store.copy('src', 'dir/copy')
      await store.put('src', streamOf(b))
      expect(await read(await store.get('dir/copy'))).toEqual(a)
      expect(await read(await store.get('src'))).toEqual(b)
      expect(await rejection(store.copy('missing', 'other'))).toBeInstanceOf(BlobNotFoundError)
      expect(await store.stat('other')).toBeUndefined()
    })

    test('put replaces the previous contents', async () => {
      const { store } = await setup()
      await store.put('o', streamOf(bytes(5000, 1)))
      const second = bytes(700, 9)
      expect(await store.put('o', streamOf(second))).toEqual({ size: 700, sha1: sha1(second) })
      expect(await read(await store.get('o'))).toEqual(second)
      expect(await store.stat('o')).toEqual({ size: 700 })
    })

    test('putBytes stores bytes in memory as put stores a stream: empty, every byte value, a few MiB, a replace', async () => {
      const { store, strays } = await setup()
      await store.putBytes('pb/empty', new Uint8Array(0))
      expect(await store.stat('pb/empty')).toEqual({ size: 0 })
      expect(await read(await store.get('pb/empty'))).toEqual(new Uint8Array(0))
      const all = new Uint8Array(256 * 3).map((_, i) => i & 255)
      await store.putBytes('pb/all', all)
      expect(await read(await store.get('pb/all'))).toEqual(all)
      const big = bytes(6 * MiB + 5, 2)
      await store.putBytes('pb/big', big.subarray(3)) // a view into a larger buffer: only its bytes
      expect(await store.stat('pb/big')).toEqual({ size: big.byteLength - 3 })
      expect(sha1(await read(await store.get('pb/big')))).toBe(sha1(big.subarray(3)))
      await store.putBytes('pb/all', bytes(10, 5))
      expect(await read(await store.get('pb/all'))).toEqual(bytes(10, 5))
      expect(await keys(store)).toEqual(['pb/all', 'pb/big', 'pb/empty'])
      expect(await strays()).toEqual([])
    })

    test('maxBytes: exactly the limit is fine; over it aborts, leaves nothing and keeps the previous contents', async () => {
      const { store, strays } = await setup()
      expect((await store.put('m', streamOf(bytes(100)), { maxBytes: 100 })).size).toBe(100)
      const previous = bytes(50, 3)
      await store.put('m', streamOf(previous))
      for (const size of [101, 7 * MiB]) {
        const e = await rejection(store.put('m', streamOf(bytes(size)), { maxBytes: size === 101 ? 100 : 6 * MiB }))
        expect(e).toBeInstanceOf(BlobTooLargeError)
        expect(await read(await store.get('m'))).toEqual(previous)
        expect(await rejection(store.put('fresh', streamOf(bytes(size)), { maxBytes: size - 1 }))).toBeInstanceOf(BlobTooLargeError)
        expect(await store.stat('fresh')).toBeUndefined()
      }
      expect(await keys(store)).toEqual(['m'])
      expect(await strays()).toEqual([])
    })

    test('a stream that fails mid-way leaves nothing and keeps the previous contents', async () => {
      const { store, strays } = await setup()
      const previous = bytes(300, 4)
      await store.put('f', streamOf(previous))
      for (const [size, failAfter] of [[10_000, 4096], [8 * MiB, 6 * MiB]] as const) {
        const e = await rejection(store.put('f', streamOf(bytes(size), 64 * 1024, failAfter)))
        expect((e as Error).message).toBe('client went away')
        expect(await read(await store.get('f'))).toEqual(previous)
        expect(await rejection(store.put('g', streamOf(bytes(size), 64 * 1024, failAfter)))).toBeInstanceOf(Error)
        expect(await store.stat('g')).toBeUndefined()
      }
      expect(await keys(store)).toEqual(['f'])
      expect(await strays()).toEqual([])
    })

    test('list yields every blob with its last-modified time', async () => {
      const { store } = await setup()
      expect(await keys(store)).toEqual([])
      const before = Date.now() - 5000
      await store.put('a', streamOf(bytes(1)))
      await store.put('p/q/b', streamOf(bytes(2)))
      await store.copy('a', 'c')
      const entries = []
      for await (const e of store.list()) entries.push(e)
      expect(entries.map((e) => e.key).sort()).toEqual(['a', 'c', 'p/q/b'])
      for (const e of entries) {
        expect(e.lastModified).toBeInstanceOf(Date)
        expect(e.lastModified.getTime()).toBeGreaterThan(before)
        expect(e.lastModified.getTime()).toBeLessThan(Date.now() + 5000)
      }
    })

    test('bad keys are refused before anything is touched', async () => {
      const { store } = await setup()
      await store.put('ok', streamOf(bytes(10)))
      const bad = ['', '.', '..', '../x', 'a/../b', '/abs', 'a/', 'a//b', '.hidden', 'a/.b', 'a\\b', 'a b', 'a~b', 'a%2Fb', 'ü', 'x'.repeat(513), 'a\0b']
      for (const key of bad) {
        expect(await rejection(store.put(key, streamOf(bytes(10))))).toBeInstanceOf(BlobKeyError)
        expect(await rejection(store.putBytes(key, bytes(10)))).toBeInstanceOf(BlobKeyError)
        expect(await rejection(store.get(key))).toBeInstanceOf(BlobKeyError)
        expect(await rejection(store.stat(key))).toBeInstanceOf(BlobKeyError)
        expect(await rejection(store.delete(key))).toBeInstanceOf(BlobKeyError)
        expect(await rejection(store.copy('ok', key))).toBeInstanceOf(BlobKeyError)
        expect(await rejection(store.copy(key, 'ok2'))).toBeInstanceOf(BlobKeyError)
      }
      expect(await keys(store)).toEqual(['ok'])
    })
  })
}

// --- disk ---------------------------------------------------------------------------------------------------------

function tempFiles(dataDir: string): string[] {
  try {
    return readdirSync(join(dataDir, 'blobs', 'tmp'))
  } catch {
    return [] // not made yet
  }
}

contract('disk', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'quarry-blob-'))
  return {
    store: await createDiskBlobStore({ dataDir }),
    strays: async () => tempFiles(dataDir),
    cleanup: async () => rmSync(dataDir, { recursive: true, force: true }),
  }
})

describe('disk blob store', () => {
  test('blobs live in fan-out directories under <dataDir>/blobs and survive a new store', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'quarry-blob-'))
    try {
      const store = await createDiskBlobStore({ dataDir })
      expect(readdirSync(dataDir)).toEqual([]) // nothing until the first write
      expect(await keys(store)).toEqual([])
      await store.put('a/b', streamOf(bytes(10)))
      const fanOut = readdirSync(join(dataDir, 'blobs')).filter((d) => d !== 'tmp')
      expect(fanOut).toHaveLength(1)
      expect(fanOut[0]).toMatch(/^[0-9a-f]{2}$/)
      const again = await createDiskBlobStore({ dataDir })
      expect(await read(await again.get('a/b'))).toEqual(bytes(10))
      expect(tempFiles(dataDir)).toEqual([])
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })

  test('a put writes whole 1 MiB buffers however small the pieces it receives (a write per 64 KiB piece held uploads back)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'quarry-blob-'))
    // Every FileHandle write of the process is counted by its size while the put runs.
    const probe = await open(join(dataDir, 'probe'), 'w')
    const proto = Object.getPrototypeOf(probe) as { write: (...a: unknown[]) => Promise<unknown> }
    await probe.close()
    const original = proto.write
    const sizes: number[] = []
    proto.write = function (this: unknown, buf: unknown, off?: unknown, len?: unknown, ...rest: unknown[]) {
      sizes.push(typeof len === 'number' ? len : (buf as Uint8Array).byteLength - (typeof off === 'number' ? off : 0))
      return original.call(this, buf, off, len, ...rest)
    }
    try {
      const store = await createDiskBlobStore({ dataDir })
      const data = bytes(3 * MiB + 5000, 3)
      const stored = await store.put('w/batched', streamOf(data, 64 * 1024))
      proto.write = original
      expect(stored).toEqual({ size: data.byteLength, sha1: new Bun.CryptoHasher('sha1').update(data).digest('base64') })
      expect(sizes).toEqual([MiB, MiB, MiB, 5000])
      expect(await read(await store.get('w/batched'))).toEqual(data)
      // Odd pieces that straddle the buffers come out the same.
      sizes.length = 0
      proto.write = function (this: unknown, buf: unknown, off?: unknown, len?: unknown, ...rest: unknown[]) {
        sizes.push(typeof len === 'number' ? len : (buf as Uint8Array).byteLength - (typeof off === 'number' ? off : 0))
        return original.call(this, buf, off, len, ...rest)
      }
      await store.put('w/odd', streamOf(data, 333_333))
      proto.write = original
      expect(sizes).toEqual([MiB, MiB, MiB, 5000])
      expect(await read(await store.get('w/odd'))).toEqual(data)
      expect(tempFiles(dataDir)).toEqual([])
    } finally {
      proto.write = original
      rmSync(dataDir, { recursive: true, force: true })
    }
  })

  test('stale temporary files of a crashed put are removed at start, recent ones are left alone', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'quarry-blob-'))
    try {
      const tmp = join(dataDir, 'blobs', 'tmp')
      mkdirSync(tmp, { recursive: true })
      writeFileSync(join(tmp, 'old.part'), 'x')
      const old = new Date(Date.now() - 2 * 3_600_000)
      utimesSync(join(tmp, 'old.part'), old, old)
      writeFileSync(join(tmp, 'recent.part'), 'y') // perhaps another process's put in progress
      await createDiskBlobStore({ dataDir })
      expect(tempFiles(dataDir)).toEqual(['recent.part'])
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })

  test('a put makes its fan-out directory again when it has gone missing; a copy makes a new one', async () => {
    // The rename is tried first and the directory made only when the rename finds it missing (disk.ts: moveInto).
    const dataDir = mkdtempSync(join(tmpdir(), 'quarry-blob-'))
    try {
      const store = await createDiskBlobStore({ dataDir })
      const fanOut = () => readdirSync(join(dataDir, 'blobs')).filter((d) => d !== 'tmp')
      await store.put('x', streamOf(bytes(10, 1)))
      for (const d of fanOut()) rmSync(join(dataDir, 'blobs', d), { recursive: true })
      expect(await rejection(store.get('x'))).toBeInstanceOf(BlobNotFoundError)
      await store.put('x', streamOf(bytes(20, 2)))
      expect(await read(await store.get('x'))).toEqual(bytes(20, 2))
      expect(fanOut()).toHaveLength(1)
      await store.copy('x', 'y') // 'y' fans out elsewhere
      expect(fanOut()).toHaveLength(2)
      expect(await read(await store.get('y'))).toEqual(bytes(20, 2))
      expect(tempFiles(dataDir)).toEqual([])
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })

  test('a download in progress keeps reading the version it opened', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'quarry-blob-'))
    try {
      const store = await createDiskBlobStore({ dataDir })
      const first = bytes(1024 * 1024, 1)
      await store.put('v', streamOf(first))
      const stream = await store.get('v')
      await store.put('v', streamOf(bytes(1000, 2)))
      expect(await read(stream)).toEqual(first)
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })

  test('map answers the whole blob (an empty one too); a missing one is not-found; a map keeps its version after a replace and a delete', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'quarry-blob-'))
    try {
      const store = await createDiskBlobStore({ dataDir })
      const contents = bytes(3 * 1024 * 1024 + 17, 5)
      await store.put('segments/m', streamOf(contents))
      await store.put('segments/empty', streamOf(new Uint8Array(0)))
      const mapped = await store.map!('segments/m')
      expect(Buffer.from(mapped).equals(Buffer.from(contents))).toBe(true)
      expect((await store.map!('segments/empty')).byteLength).toBe(0)
      expect(await rejection(store.map!('segments/none'))).toBeInstanceOf(BlobNotFoundError)
      await store.put('segments/m', streamOf(bytes(10, 6)))
      await store.delete('segments/m')
      expect(Buffer.from(mapped).equals(Buffer.from(contents))).toBe(true)
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})

// --- S3 -----------------------------------------------------------------------------------------------------------

// Left out of a run without the test servers (QUARRY_TEST_STORES=sqlite: test/services.ts).
const s3 = withServers ? testS3() : undefined

if (!withServers) {
  // the disk blob store above is the whole of this file's run
} else if (!s3) {
  // Deliberately a failure, not a skip: the S3 backend must be tested wherever the suite runs.
  test('BlobStore contract: s3 needs the test S3 server', () => {
    throw new Error(MISSING_S3)
  })
} else {
  const cfg = s3.config
  const { minio, incompleteUploads } = s3

  contract('s3', async () => {
    const prefix = `t-${crypto.randomUUID()}/` // each test sees only its own objects in the shared bucket
    const store = await createS3BlobStore({ ...cfg, prefix })
    return {
      store,
      strays: () => incompleteUploads(prefix),
      cleanup: async () => {
        for await (const e of store.list()) await store.delete(e.key)
      },
    }
  })

  describe('s3 blob store', () => {
    test('the bucket is created at start when missing', async () => {
      const bucket = `quarry-new-${crypto.randomUUID().slice(0, 8)}`
      const store = await createS3BlobStore({ ...cfg, bucket })
      await store.put('x', streamOf(bytes(3)))
      expect(await minio.bucketExists(bucket)).toBe(true)
      await store.delete('x')
      await minio.removeBucket(bucket)
    })

    test('a wrong secret key is refused by the server', async () => {
      const store = await createS3BlobStore({ ...cfg, secretKey: 'wrong-secret', createBucket: false })
      expect(await rejection(store.put('x', streamOf(bytes(3))))).toBeInstanceOf(Error)
    })
  })
}
