// Generated bad input for the syslog listeners of the real server (the generated bad-input test of the HTTP routes,
// test/fuzz.ts, works through app.handle and has no place for a socket): rounds of random bytes in random chunks over
// TCP connections, cut off at random, and random datagrams over UDP, while a well-behaved sender sends numbered
// messages on a connection of its own. After every round: each good message is found exactly once, nothing stored
// is longer than QUARRY_SYSLOG_MAX_MESSAGE, every refusal has a known reason, and the HTTP port answers.
// QUARRY_FUZZ_SEED replays a run.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { connect } from 'node:net'
import { type SyslogServer, startSyslogServer } from './syslog'

const MAX = 1024
const seed = Number(process.env.QUARRY_FUZZ_SEED ?? 25)

let s: SyslogServer
beforeAll(async () => {
  s = await startSyslogServer({
    QUARRY_SYSLOG_TCP: '127.0.0.1:0',
    QUARRY_SYSLOG_UDP: '127.0.0.1:0',
    QUARRY_SYSLOG_MAX_MESSAGE: String(MAX),
    QUARRY_SYSLOG_FRAME_TIMEOUT: '200ms',
  })
}, 30_000)
afterAll(async () => {
  expect(await s.stop()).toBe(0)
})

/** Bytes that look like syslog framing often enough to reach every branch: counts, PRIs, LFs, long runs, invalid UTF-8. */
const piece = fc.oneof(
  fc.uint8Array({ maxLength: 64 }),
  fc.nat({ max: 3 * MAX }).map((n) => Buffer.from(`${n} `)),
  fc.constantFrom('<13>1 ', '<191>', '<999>', '\n', '\r\n', '0 ', '9999999999 ', '<13>Jan  1 00:00:00 h a: ', '\xff\xfe').map((t) => Buffer.from(t, 'latin1')),
  fc.nat({ max: 3 * MAX }).map((n) => Buffer.alloc(n, 0x41)),
)
const stream = fc.array(piece, { maxLength: 40 }).map((parts) => Buffer.concat(parts))
const round = fc.record({
  tcp: fc.array(fc.tuple(stream, fc.array(fc.nat(), { maxLength: 5 })), { maxLength: 4 }),
  udp: fc.array(fc.uint8Array({ maxLength: 2 * MAX }), { maxLength: 10 }),
})

function sendChunks(port: number, data: Buffer, cuts: number[]): Promise<void> {
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1', async () => {
      let at = 0
      for (const c of [...new Set(cuts.map((x) => x % (data.length + 1)))].sort((a, b) => a - b)) {
        sock.write(data.subarray(at, c))
        at = c
        await Bun.sleep(0)
      }
      sock.end(data.subarray(at))
    })
    sock.on('error', () => resolve())
    sock.on('close', () => resolve())
  })
}

describe('generated bad input: syslog listeners', () => {
  test(`rounds of random frames and datagrams (seed ${seed}): good messages found exactly, nothing over the limit, the server answers`, async () => {
    let n = 0
    await fc.assert(
      fc.asyncProperty(round, async ({ tcp, udp }) => {
        n++
        const good = Array.from({ length: 5 }, (_, i) => `<13>1 - fuzzhost good - - - round${n}x${i}`)
        const udpSocket = await Bun.udpSocket({})
        await Promise.all([
          ...tcp.map(([data, cuts]) => sendChunks(s.ports.tcp!, data, cuts)),
          sendChunks(s.ports.tcp!, Buffer.from(good.map((g) => `${g.length} ${g}`).join('')), [7, 50]),
          (async () => {
            for (const d of udp) udpSocket.send(d, s.ports.udp!, '127.0.0.1')
          })(),
        ])
        udpSocket.close()
        const found = await s.searchUntil(`tag=syslog grep round${n}x`, 5)
        expect(found.map((f) => f.text).sort()).toEqual(good)
        expect((await fetch(`${s.url}/api/version`)).status).toBe(200)
      }),
      { numRuns: Number(process.env.QUARRY_FUZZ_SOCKET_RUNS ?? 25), seed },
    )
    // over every round: nothing stored past the limit, and only the known refusal reasons
    const all = await s.search('tag=syslog')
    expect(all.length).toBeGreaterThan(0)
    expect(all.filter((f) => f.bytes.length > MAX)).toEqual([])
    const reasons = new Set([...(await s.metrics()).keys()].filter((k) => k.includes('refusals')).map((k) => /reason="([^"]+)"/.exec(k)![1]))
    for (const r of reasons) expect(['too-large', 'invalid', 'busy']).toContain(r!)
  }, 180_000)
})
