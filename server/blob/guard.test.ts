// guardBlobStore (server/blob/guard.ts) over a real disk store: what waits on the store is bounded, what waits on the
// caller (a slow uploader) is not, and each outcome is reported to the dependency tracker.
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BlobNotFoundError, type BlobStore, BlobUnavailableError, createDiskBlobStore, guardBlobStore } from './index'

const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

async function disk(): Promise<BlobStore> {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-guard-'))
  dirs.push(dir)
  return createDiskBlobStore({ dataDir: dir })
}

function tracker() {
  const seen: string[] = []
  return { seen, ok: () => void seen.push('ok'), failed: () => void seen.push('failed') }
}

const TIMEOUT = 200

/** A stream of `chunks`, each given after `gapMs`. */
function trickle(chunks: string[], gapMs: number): ReadableStream<Uint8Array> {
  let i = 0
  return new ReadableStream({
    async pull(c) {
      await Bun.sleep(gapMs)
      if (i < chunks.length) c.enqueue(new TextEncoder().encode(chunks[i++]))
      else c.close()
    },
  })
}

describe('guardBlobStore', () => {
  test('a slow uploader is waited for: gaps longer than the bound between its chunks do not fail the put', async () => {
    const t = tracker()
    const blobs = guardBlobStore(await disk(), TIMEOUT, t)
    const put = await blobs.put('slow/one', trickle(['a', 'b', 'c'], TIMEOUT * 2))
    expect(put.size).toBe(3)
    expect(await new Response(await blobs.get('slow/one')).text()).toBe('abc')
    expect(t.seen).not.toContain('failed')
  })

  test('a store that stops taking a put fails it with BlobUnavailableError within the bound, and says so once', async () => {
    const t = tracker()
    const inner = await disk()
    let cancelled = false
    // takes the first chunk, then never reads again nor answers
    const stuck: BlobStore = {
      ...inner,
      put: async (_key, stream) => {
        await stream.getReader().read()
        return new Promise(() => {})
      },
    }
    const blobs = guardBlobStore(stuck, TIMEOUT, t)
    const input = new ReadableStream<Uint8Array>({
      pull: (c) => c.enqueue(new Uint8Array(10)),
      cancel: () => void (cancelled = true),
    })
    const started = performance.now()
    expect(await blobs.put('stuck/one', input).catch((e: unknown) => e)).toBeInstanceOf(BlobUnavailableError)
    expect(performance.now() - started).toBeLessThan(TIMEOUT * 10)
    expect(cancelled).toBe(true)
    expect(t.seen).toEqual(['failed'])
  })

  test('a putBytes the store never answers fails with BlobUnavailableError within the bound', async () => {
    const t = tracker()
    const inner = await disk()
    const frozen: BlobStore = { ...inner, putBytes: () => new Promise(() => {}) }
    const blobs = guardBlobStore(frozen, TIMEOUT, t)
    const started = performance.now()
    expect(await blobs.putBytes('frozen/one', new Uint8Array(10)).catch((e: unknown) => e)).toBeInstanceOf(BlobUnavailableError)
    expect(performance.now() - started).toBeLessThan(TIMEOUT * 10)
    expect(t.seen).toEqual(['failed'])
    await guardBlobStore(inner, TIMEOUT, t).putBytes('thawed/one', new Uint8Array([1, 2]))
    expect(await inner.stat('thawed/one')).toEqual({ size: 2 })
    expect(t.seen).toEqual(['failed', 'ok'])
  })

  test('a read that stops mid-way errors its stream within the bound; refusals of the store count as answers', async () => {
    const t = tracker()
    const inner = await disk()
    await inner.put('half/one', new Blob(['first']).stream())
    const halfway: BlobStore = {
      ...inner,
      get: async () => {
        let sent = false
        return new ReadableStream<Uint8Array>({
          async pull(c) {
            if (sent) return new Promise(() => {})
            sent = true
            c.enqueue(new TextEncoder().encode('first'))
          },
        })
      },
    }
    const blobs = guardBlobStore(halfway, TIMEOUT, t)
    const reader = (await blobs.get('half/one')).getReader()
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('first')
    expect(await reader.read().catch((e: unknown) => e)).toBeInstanceOf(BlobUnavailableError)
    expect(t.seen.at(-1)).toBe('failed')
    const plain = guardBlobStore(inner, TIMEOUT, t)
    expect(await plain.get('half/none').catch((e: unknown) => e)).toBeInstanceOf(BlobNotFoundError)
    expect(t.seen.at(-1)).toBe('ok')
  })
})
