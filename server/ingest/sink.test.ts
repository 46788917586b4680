// The sink's bounds over a store whose writes the test holds open: the bytes being stored at once, the rate, and the
// counts per listener and protocol. The routes' own tests (plugins/ingest) cover the same through HTTP.
import { describe, expect, test } from 'bun:test'
import type { Config } from '../runtime/config'
import { FreeSpaceFloor } from '../runtime/disk-space'
import type { Quotas } from '../store/quota'
import type { EntriesRepo, Ingested, NewEntry } from '../search/entries'
import type { TagDirectory } from '../search/tags'
import type { UserRow } from '../../plugins/users/repo'
import { IngestRefused, IngestSink, type IngestSource } from './sink'

/** A store whose ingest calls wait until the test releases them, recording what each stored. */
function heldStore() {
  const stored: NewEntry[][] = []
  const waiting: (() => void)[] = []
  const entries = {
    async ingest(batch: NewEntry[]): Promise<Ingested> {
      await new Promise<void>((resolve) => waiting.push(resolve))
      stored.push(batch)
      return { tags: [], created: [] }
    },
  } as unknown as EntriesRepo
  return { entries, stored, releaseAll: () => waiting.splice(0).forEach((r) => r()), waitingCount: () => waiting.length }
}

function sinkOver(entries: EntriesRepo, config: Partial<Pick<Config, 'ingestRateBytes' | 'ingestMaxPendingBytes'>> = {}) {
  return new IngestSink({
    config: { maxTags: 100, ingestRateBytes: undefined, ingestMaxPendingBytes: 1000, ...config },
    entries,
    quotas: { limitFor: async () => undefined } as unknown as Quotas,
    tags: { stored() {} } as unknown as TagDirectory,
    space: new FreeSpaceFloor(undefined, 0),
  })
}

const SRC: IngestSource = { listener: 'test', protocol: 'lines' }
/** n entries of `bytes` data each; each counts bytes + 3 (tag 'web') + 16. */
const batchOf = (n: number, bytes: number): NewEntry[] => Array.from({ length: n }, (_, i) => ({ ts: i, tag: 'web', src: '', data: new Uint8Array(bytes) }))
const owner = { uid: 7, user: { uid: 7, admin: false } as UserRow }

async function refusal(p: Promise<unknown>): Promise<IngestRefused> {
  try {
    await p
  } catch (e) {
    if (e instanceof IngestRefused) return e
    throw e
  }
  throw new Error('expected a refusal')
}

describe('IngestSink', () => {
  test('a batch that would take the bytes being stored past the bound is refused busy; one alone always passes', async () => {
    const store = heldStore()
    const sink = sinkOver(store.entries, { ingestMaxPendingBytes: 1000 })
    // 2 x (381 + 19) = 800 bytes: admitted, held in the store
    const first = sink.store(batchOf(2, 381), owner, SRC)
    await Bun.sleep(0)
    expect(store.waitingCount()).toBe(1)
    // 800 + 2 x 119 > 1000: refused at once, before the store sees it
    const busy = await refusal(sink.store(batchOf(2, 100), owner, SRC))
    expect(busy.reason).toBe('busy')
    expect(busy.error.status).toBe(503)
    expect(busy.retryAfterMs).toBe(1000)
    // 800 + 200 = 1000: within the bound
    const second = sink.store(batchOf(1, 181), owner, SRC)
    await Bun.sleep(0)
    expect(store.waitingCount()).toBe(2)
    store.releaseAll()
    await Promise.all([first, second])
    // nothing pending: a batch larger than the bound alone is admitted (the body limit bounds it)
    const big = sink.store(batchOf(1, 5000), owner, SRC)
    await Bun.sleep(0)
    store.releaseAll()
    await big
    expect(store.stored.map((b) => b.length)).toEqual([2, 1, 1])
    const counts = sink.counts.get('test lines')!
    expect({ entries: counts.entries, bytes: counts.bytes, busy: counts.refusals.get('busy') }).toEqual({ entries: 4, bytes: 2 * 381 + 181 + 5000, busy: 1 })
  })

  test('the rate refuses with the time to wait and gives back what a failed store took', async () => {
    let fail = true
    const entries = {
      async ingest(): Promise<Ingested> {
        if (fail) throw new Error('store down')
        return { tags: [], created: [] }
      },
    } as unknown as EntriesRepo
    const sink = sinkOver(entries, { ingestRateBytes: 100, ingestMaxPendingBytes: 1 << 20 })
    // the store fails: the 219 bytes taken are given back, so the next batch is admitted
    await expect(sink.store(batchOf(1, 200), owner, SRC)).rejects.toThrow('store down')
    fail = false
    await sink.store(batchOf(1, 200), owner, SRC)
    // now in debt by 119 bytes at 100 bytes/s: refused with about 1.2 s to wait
    const rate = await refusal(sink.store(batchOf(1, 1), owner, SRC))
    expect(rate.reason).toBe('rate')
    expect(rate.error.status).toBe(429)
    expect(rate.retryAfterMs).toBeGreaterThan(1000)
    expect(rate.retryAfterMs).toBeLessThanOrEqual(1190)
    // no owner (a listener without a user): no rate applies
    await sink.store(batchOf(1, 1), undefined, SRC)
    expect(sink.counts.get('test lines')!.refusals.get('rate')).toBe(1)
  })
})
