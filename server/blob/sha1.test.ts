// The SHA-1 that the blob stores compute on a worker thread while a put streams: same digest as a plain hash for
// every length around the 1 MiB batch size, in any chunking, with several hashes at once, after aborted ones.
import { describe, expect, test } from 'bun:test'
import { Sha1Stream } from './sha1'

const MiB = 1024 * 1024
const plain = (b: Uint8Array) => new Bun.CryptoHasher('sha1').update(b).digest('base64')
const bytes = (n: number, seed = 1) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed * 7 + (i >> 11)) & 255)

/** Feeds `data` in chunks of `size`, waiting when asked, and reuses (scribbles over) each chunk after the call. */
async function hashInChunks(data: Uint8Array, size: number, worker?: boolean): Promise<string> {
  const h = new Sha1Stream({ worker })
  const scratch = new Uint8Array(size)
  for (let at = 0; at < data.byteLength; at += size) {
    const chunk = scratch.subarray(0, Math.min(size, data.byteLength - at))
    chunk.set(data.subarray(at, at + chunk.byteLength))
    const wait = h.update(chunk)
    chunk.fill(0xee) // the caller may reuse its chunk at once
    if (wait) await wait
  }
  return h.digest()
}

// Both ways a hash runs: on the worker thread and on the calling one (QUARRY_UPLOAD_HASH picks; the worker by default).
describe.each([true, false])('Sha1Stream, worker %p', (worker) => {
  test('digests like a plain SHA-1 for lengths around the batch size, in any chunking', async () => {
    for (const n of [0, 1, 1000, MiB - 1, MiB, MiB + 1, 3 * MiB + 12345]) {
      const data = bytes(n)
      for (const size of [1000, 65536, 4 * MiB + 3]) expect(`${n}/${size}: ${await hashInChunks(data, size, worker)}`).toBe(`${n}/${size}: ${plain(data)}`)
    }
  })

  test('several hashes at once, and aborted ones in between, each get their own digest', async () => {
    const datas = [bytes(5 * MiB + 7, 1), bytes(2 * MiB, 2), bytes(9 * MiB + 1, 3)]
    const aborted = new Sha1Stream({ worker })
    await aborted.update(bytes(3 * MiB, 4))
    const digests = Promise.all(datas.map((d, i) => hashInChunks(d, 65536 + i * 1000, worker)))
    aborted.abort()
    aborted.abort() // idempotent
    expect(await digests).toEqual(datas.map(plain))
    expect(() => aborted.update(new Uint8Array(1))).toThrow()
    // a new hash after all that still works
    expect(await hashInChunks(datas[0]!, 300_000, worker)).toBe(plain(datas[0]!))
  })
})
