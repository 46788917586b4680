// A TCP listener over a sink the test controls: while a connection's batch is being stored its sender is not read (TCP
// back-pressure: the sender's bytes stay in its own buffers), another connection is served meanwhile, the sink's
// 'busy' refusals are waited out and the batch stored once, a refusal for good drops only its batch, and a stop stores
// what was read before the store closes.
import { afterEach, describe, expect, test } from 'bun:test'
import { type Socket, connect } from 'node:net'
import { ApiError } from '../../http/errors'
import { createLogger } from '../../runtime/log'
import type { NewEntry } from '../../search/entries'
import { IngestRefused, type IngestSource } from '../sink'
import { BATCH_BYTES, STORE_MAX_ENTRIES } from './batch'
import type { SyslogConfig } from './config'
import { listenDatagram } from './datagram'
import { type RunningListener, listenStream } from './stream'
import { parseZone } from './zone'

interface Stored {
  batch: NewEntry[]
  source: IngestSource
}

/** A sink that records what it stores; `hold(predicate)` holds the stores of matching batches until released. */
function recordingSink() {
  const stored: Stored[] = []
  const refusals: string[] = []
  let gate: { match: (b: NewEntry[]) => boolean; open: Promise<void>; release: () => void; reached: number; heldBytes: number } | undefined
  let refuse: ((b: NewEntry[]) => IngestRefused | undefined) | undefined
  return {
    stored,
    refusals,
    texts: () => stored.flatMap((s) => s.batch.map((e) => Buffer.from(e.data).toString())),
    hold(match: (b: NewEntry[]) => boolean) {
      const { promise, resolve } = Promise.withResolvers<void>()
      gate = { match, open: promise, release: resolve, reached: 0, heldBytes: 0 }
      return gate
    },
    refuseWith(f: typeof refuse) {
      refuse = f
    },
    sink: {
      async store(batch: NewEntry[], _owner: undefined, source: IngestSource) {
        const r = refuse?.(batch)
        if (r) {
          refusals.push(r.reason)
          throw r
        }
        if (gate?.match(batch)) {
          gate.reached++
          gate.heldBytes += batch.reduce((n, e) => n + e.data.byteLength, 0)
          await gate.open
        }
        stored.push({ batch, source })
        return {}
      },
      refused(_source: IngestSource, reason: string) {
        refusals.push(reason)
      },
    },
  }
}

const config: SyslogConfig = {
  listeners: [],
  maxMessageBytes: 65536,
  maxConnections: 10,
  frameTimeoutMs: 30_000,
  udpQueueBytes: 1 << 20,
  zone: parseZone('Z', 'UTC'),
}
const logs: string[] = []
const log = createLogger('debug', (l) => void logs.push(l))

let running: RunningListener[] = []
const clients: Socket[] = []
afterEach(async () => {
  for (const c of clients.splice(0)) c.destroy()
  await Promise.all(running.splice(0).map((r) => r.stop(100)))
})

function start(sink: ReturnType<typeof recordingSink>['sink']): RunningListener {
  const r = listenStream({ transport: 'tcp', host: '127.0.0.1', port: 0, tag: 't' }, config, { sink, log, clock: Date.now })
  running.push(r)
  return r
}

function client(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const c = connect(port, '127.0.0.1', () => resolve(c))
    c.on('error', reject)
    clients.push(c)
  })
}

async function until(condition: () => boolean, what: string) {
  const deadline = Date.now() + 20_000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(5)
  }
}

const line = (who: string, i: number) => `<13>1 - host ${who} - - - ${String(i).padStart(8, '0')} ${'x'.repeat(160)}\n`

describe('syslog TCP back-pressure', () => {
  test('a connection whose batch is being stored is not read; another connection is served meanwhile; nothing is lost', async () => {
    const r = recordingSink()
    const l = start(r.sink)
    // 64 MiB: more than the kernel's socket buffers on both sides (tcp_rmem and tcp_wmem at most 32 and 4 MiB here)
    const count = Math.ceil((64 << 20) / line('slow', 0).length)
    const gate = r.hold((b) => Buffer.from(b[0]!.data).includes('host slow'))
    const slow = await client(l.port)
    slow.write(Array.from({ length: count }, (_, i) => line('slow', i)).join(''))
    await until(() => gate.reached === 1, 'the first batch of the slow sender')
    // the other sender is served while the slow one's batch is held
    const other = await client(l.port)
    other.write(line('other', 1))
    await until(() => r.texts().some((t) => t.includes('host other')), 'the other sender stored')
    // the next batch fills while the first is stored, and then the connection is no longer read: at most two batches
    // (and the rest of the last chunk read) are held. The first is what had come when it was taken: a full batch,
    // or less when the linger timer took it between two reads.
    await until(() => l.held() >= gate.heldBytes + BATCH_BYTES, 'the second batch of the slow sender full')
    expect(l.held()).toBeLessThan(2 * BATCH_BYTES + (1 << 20))
    // the slow sender's batch is still held, no second one was taken, and most of its bytes wait on its side
    expect(gate.reached).toBe(1)
    expect(r.stored.filter((s) => Buffer.from(s.batch[0]!.data).includes('host slow'))).toHaveLength(0)
    expect(slow.writableLength).toBeGreaterThan(16 << 20)
    gate.release()
    await until(() => r.stored.reduce((n, s) => n + s.batch.length, 0) === count + 1, 'everything stored')
    const slowTexts = r.texts().filter((t) => t.includes('host slow'))
    expect(slowTexts).toEqual(Array.from({ length: count }, (_, i) => line('slow', i).slice(0, -1)))
    expect(Math.max(...r.stored.map((s) => s.batch.length))).toBeLessThanOrEqual(STORE_MAX_ENTRIES)
    expect(r.stored.every((s) => s.source.listener === 'syslog-tcp' && s.source.protocol === 'rfc5424')).toBe(true)
  }, 60_000)

  test('a stop waits for the batches of a connection that closed while one was being stored', async () => {
    const r = recordingSink()
    const l = start(r.sink)
    const gate = r.hold(() => true)
    const sender = await client(l.port)
    const closed = new Promise<void>((resolve) => sender.on('close', () => resolve()))
    // the first messages go to the store and are held there (a batch of whatever had come when it was taken: the
    // linger timer may take part of a write); then the rest, less than a batch (so the connection is never paused
    // and reads to the end), and the sender closes while the first batch is still held
    const first = 10
    const rest = 200
    sender.write(Array.from({ length: first }, (_, i) => line('closing', i)).join(''))
    await until(() => gate.reached === 1, 'the first batch held by the store')
    sender.end(Array.from({ length: rest }, (_, i) => line('closing', first + i)).join(''))
    // the server closed its side too (the sender's close follows it): the connection is gone, its batches are not
    await closed
    let storedAtStop = -1
    const stopped = l.stop(20_000).then(() => void (storedAtStop = r.stored.reduce((n, s) => n + s.batch.length, 0)))
    gate.release()
    await stopped
    expect(storedAtStop).toBe(first + rest)
    expect(r.texts()).toEqual(Array.from({ length: first + rest }, (_, i) => line('closing', i).slice(0, -1)))
  }, 60_000)

  test("the sink's 'busy' refusals are waited out and the batch stored once; a refusal for good drops only its batch", async () => {
    const r = recordingSink()
    const l = start(r.sink)
    let busy = 2
    r.refuseWith((b) => {
      const text = Buffer.from(b[0]!.data).toString()
      if (text.includes('first') && busy > 0) {
        busy--
        return new IngestRefused('busy', new ApiError(503, 'busy'), 10)
      }
      if (text.includes('doomed')) return new IngestRefused('tags', new ApiError(413, 'too many tags'))
      return undefined
    })
    const c = await client(l.port)
    c.write('<13>first one\n<13>first two\n')
    await until(() => r.stored.length === 1, 'the first batch stored')
    expect(r.refusals).toEqual(['busy', 'busy'])
    expect(r.texts()).toEqual(['<13>first one', '<13>first two'])
    c.write('<13>doomed\n')
    await until(() => r.refusals.length === 3, 'the refusal for good')
    c.write('<13>after\n')
    await until(() => r.stored.length === 2, 'the next batch stored')
    expect(r.texts()).toEqual(['<13>first one', '<13>first two', '<13>after'])
    expect(r.refusals).toEqual(['busy', 'busy', 'tags'])
    expect(logs.some((l) => l.includes('syslog messages refused by the store') && l.includes('"reason":"tags"'))).toBe(true)
  })

  test('a stop stores what was read before it, then closes the connections', async () => {
    const r = recordingSink()
    const l = start(r.sink)
    const gate = r.hold(() => true)
    const c = await client(l.port)
    const closed = new Promise<void>((resolve) => c.on('close', () => resolve()))
    c.write('<13>read before the stop\n')
    await until(() => gate.reached === 1, 'the batch being stored')
    const stopped = l.stop(10_000)
    running = running.filter((x) => x !== l)
    gate.release()
    await stopped
    await closed
    expect(r.texts()).toEqual(['<13>read before the stop'])
  })
})

describe('syslog UDP queue', () => {
  test('while the store is held, datagrams past QUARRY_SYSLOG_UDP_QUEUE are dropped and counted; the rest are stored once it frees', async () => {
    const r = recordingSink()
    const queue = 64 * 1024
    const l = await listenDatagram({ transport: 'udp', host: '127.0.0.1', port: 0, tag: 'u' }, { ...config, udpQueueBytes: queue }, { sink: r.sink, log, clock: Date.now })
    running.push(l)
    const gate = r.hold(() => true)
    const udp = await Bun.udpSocket({})
    const message = (i: number) => `<13>1 - h app - - - ${String(i).padStart(6, '0')} ${'y'.repeat(1000)}`
    // the first one starts a batch being stored (held); then 200 of about 1 KiB each: about 64 fit the queue
    udp.send(message(0), l.port, '127.0.0.1')
    await until(() => gate.reached === 1, 'the first datagram being stored')
    // one at a time, each taken (held or refused) before the next: the kernel's own buffer never fills
    for (let i = 1; i <= 200; i++) {
      const [held, refused] = [l.held(), r.refusals.length]
      udp.send(message(i), l.port, '127.0.0.1')
      await until(() => l.held() > held || r.refusals.length > refused, `datagram ${i} taken`)
    }
    const fits = Math.floor((queue - message(0).length) / message(0).length)
    expect(l.held()).toBe((1 + fits) * message(0).length)
    expect(r.refusals).toEqual(Array.from({ length: 200 - fits }, () => 'busy'))
    gate.release()
    await until(() => r.stored.reduce((n, s) => n + s.batch.length, 0) === 1 + fits, 'the queue stored')
    expect(r.texts()).toEqual(Array.from({ length: 1 + fits }, (_, i) => message(i)))
    udp.close()
  })
})

describe('what the deframer relies on', () => {
  test('Bun gives each socket read a buffer of its own, never changed by later reads', async () => {
    const chunks: { chunk: Buffer; copy: Buffer }[] = []
    const { promise: closed, resolve } = Promise.withResolvers<void>()
    const server = Bun.listen({
      hostname: '127.0.0.1',
      port: 0,
      socket: {
        data(_s, chunk: Buffer) {
          chunks.push({ chunk, copy: Buffer.from(chunk) })
        },
        close: () => resolve(),
      },
    })
    try {
      const data = Buffer.alloc(16 << 20)
      for (let i = 0; i < data.length; i++) data[i] = i % 251
      const c = await client(server.port)
      c.end(data)
      await closed
      expect(chunks.length).toBeGreaterThan(1)
      expect(Buffer.concat(chunks.map((k) => k.chunk))).toEqual(data)
      expect(chunks.filter((k) => !k.chunk.equals(k.copy))).toHaveLength(0)
      expect(new Set(chunks.map((k) => k.chunk.buffer)).size).toBe(chunks.length)
    } finally {
      server.stop(true)
    }
  })
})
