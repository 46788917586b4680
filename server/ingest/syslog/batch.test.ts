// How a Batcher cuts what it holds into stores: a batch that outgrew its bounds while the one before it was stored (a
// TCP connection is paused only after the chunk that filled it) is stored whole, and a queue of many batches (UDP) in
// even parts; never a full part and a small rest, which the store would take through its slower row path
// (SEALED_INGEST_BYTES).
import { describe, expect, test } from 'bun:test'
import { createLogger } from '../../runtime/log'
import type { NewEntry } from '../../search/entries'
import { BATCH_ENTRIES, Batcher, STORE_MAX_ENTRIES } from './batch'
import { parseZone } from './zone'

function setup() {
  const sizes: number[] = []
  let release: (() => void) | undefined
  let held = Promise.withResolvers<void>()
  let pauses = 0
  const batcher = new Batcher({
    sink: {
      async store(batch: NewEntry[]) {
        sizes.push(batch.length)
        if (release === undefined) {
          release = held.resolve
          await held.promise
        }
        return {}
      },
      refused() {},
    },
    listener: 'syslog-tcp',
    tag: 't',
    zone: parseZone('Z', 'UTC'),
    log: createLogger('error', () => {}),
    pause: () => void pauses++,
  })
  const add = (n: number) => {
    for (let i = 0; i < n; i++) batcher.add(Buffer.from(`<13>1 - h a - - - m${i}`), '127.0.0.1', 0)
  }
  return { batcher, sizes, add, release: () => release!(), pauses: () => pauses }
}

describe('syslog batches', () => {
  test('a batch that outgrew its bound while the last one was stored is stored whole', async () => {
    const b = setup()
    b.add(BATCH_ENTRIES) // full: its store starts, and is held
    expect(b.sizes).toEqual([BATCH_ENTRIES])
    // the next batch fills, pauses its owner, and the rest of the chunk that filled it is added still
    b.add(BATCH_ENTRIES + 600)
    expect(b.pauses()).toBe(1)
    b.release()
    await b.batcher.flush()
    expect(b.sizes).toEqual([BATCH_ENTRIES, BATCH_ENTRIES + 600])
  })

  test('a queue of many batches is stored in even parts of at most STORE_MAX_ENTRIES', async () => {
    const b = setup()
    b.add(BATCH_ENTRIES)
    const queued = 2 * STORE_MAX_ENTRIES + 3
    b.add(queued)
    b.release()
    await b.batcher.flush()
    expect(b.sizes.slice(1)).toEqual([Math.ceil(queued / 3), Math.ceil(queued / 3), queued - 2 * Math.ceil(queued / 3)])
    expect(b.sizes.reduce((n, s) => n + s, 0)).toBe(BATCH_ENTRIES + queued)
  })
})
