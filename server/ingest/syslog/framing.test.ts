// The RFC 6587 deframer: both framings per message, any split of the stream into chunks, and its bounds (oversize
// messages dropped whole, at most one partial frame held), over examples and generated streams.
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { StreamDeframer, datagramMessage } from './framing'

function run(max: number, chunks: (string | Buffer)[]) {
  const d = new StreamDeframer(max)
  const messages: string[] = []
  const refusals: string[] = []
  for (const c of chunks) d.push(Buffer.isBuffer(c) ? c : Buffer.from(c, 'latin1'), (m) => messages.push(m.toString('latin1')), (r) => refusals.push(r))
  return { messages, refusals, partial: d.partial }
}

describe('syslog stream framing', () => {
  test('octet counting and LF lines, mixed on one stream and told apart per message', () => {
    const m1 = '<34>1 2026-01-02T03:04:05Z host app - - - first'
    const m2 = '<13>Jan  2 03:04:05 host app: second'
    const stream = `${m1.length} ${m1}${m2}\n${Buffer.byteLength('x y')} x yplain line 12\r\n`
    expect(run(1024, [stream])).toEqual({ messages: [m1, m2, 'x y', 'plain line 12'], refusals: [], partial: false })
  })

  test('a message with LF inside survives octet counting; a trailing LF counted in is dropped; empty lines are skipped', () => {
    const m = 'line one\nline two'
    expect(run(1024, [`\n\n${m.length} ${m}\n\nafter\n`]).messages).toEqual([m, 'after'])
    expect(run(1024, [`${m.length + 1} ${m}\n${m.length + 2} ${m}\r\n`]).messages).toEqual([m, m])
  })

  test('every split of the stream into two chunks gives the same messages', () => {
    const stream = '17 <13>1 - h a - - -5 hello\nplain\n3 abc'
    const want = run(1024, [stream])
    expect(want.messages).toEqual(['<13>1 - h a - - -', 'hello', 'plain', 'abc'])
    for (let i = 0; i <= stream.length; i++) expect(run(1024, [stream.slice(0, i), stream.slice(i)])).toEqual(want)
  })

  test('a line that starts with a number but no space after it is a line; a number and a space is a count', () => {
    expect(run(1024, ['2026-01-02 dpkg line\n']).messages).toEqual(['2026-01-02 dpkg line'])
    // as rsyslog and syslog-ng read it: `3 ` is a count of three bytes, and the rest is the next line
    expect(run(1024, ['3 apples\n']).messages).toEqual(['app', 'les'])
  })

  test('oversize messages are dropped whole, in either framing, and what follows is read', () => {
    const big = 'x'.repeat(2000)
    const r = run(1000, [`${big.length} ${big}`, `5 after`, `${big}\n`, 'next\n'])
    expect(r).toEqual({ messages: ['after', 'next'], refusals: ['too-large', 'too-large'], partial: false })
    // an oversize line is dropped as it comes: at most the limit is ever held
    const d = new StreamDeframer(1000)
    const seen: string[] = []
    for (let i = 0; i < 50; i++) d.push(Buffer.alloc(500, 0x61), (m) => seen.push(m.toString()), (x) => seen.push(x))
    d.push(Buffer.from('\nok\n'), (m) => seen.push(m.toString()), (x) => seen.push(x))
    expect(seen).toEqual(['too-large', 'ok'])
  })

  test('a count of 0 is refused; a partial frame is reported as held', () => {
    expect(run(100, ['0 5 hello'])).toEqual({ messages: ['hello'], refusals: ['invalid'], partial: false })
    expect(run(100, ['50 <13>short'])).toEqual({ messages: [], refusals: [], partial: true })
    expect(run(100, ['123'])).toEqual({ messages: [], refusals: [], partial: true })
    expect(run(100, ['no end yet'])).toEqual({ messages: [], refusals: [], partial: true })
  })

  test('generated streams: messages framed either way, split anywhere, come out whole and in order', () => {
    // a message of an LF frame has no LF and does not start with what reads as a count or an empty line
    const message = fc.uint8Array({ minLength: 1, maxLength: 300 }).map((a) => Buffer.from(a))
    fc.assert(
      fc.property(fc.array(fc.tuple(message, fc.boolean()), { maxLength: 30 }), fc.array(fc.nat(), { maxLength: 10 }), (list, cuts) => {
        const parts: Buffer[] = []
        const want: string[] = []
        for (const [m, counted] of list) {
          const lineSafe = !m.includes(0x0a) && !/^\d*( |$)/.test(m.toString('latin1')) && m[0] !== 0x0d && m.at(-1) !== 0x0d
          // a counted message's own trailing LF is dropped as framing: none is generated
          if (m.at(-1) === 0x0a) m[m.length - 1] = 0x61
          if (counted || !lineSafe) parts.push(Buffer.from(`${m.length} `), m)
          else parts.push(m, Buffer.from('\n'))
          want.push(m.toString('latin1'))
        }
        const stream = Buffer.concat(parts)
        const points = [...new Set(cuts.map((c) => c % (stream.length + 1)))].sort((a, b) => a - b)
        const chunks: Buffer[] = []
        let at = 0
        for (const p of [...points, stream.length]) {
          chunks.push(stream.subarray(at, p))
          at = p
        }
        expect(run(300, chunks)).toEqual({ messages: want, refusals: [], partial: false })
      }),
      { numRuns: 300, seed: 25 },
    )
  })

  test('generated garbage: no throw, every message within the limit, never more than a frame held', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 400 }), { maxLength: 20 }), (chunks) => {
        const d = new StreamDeframer(64)
        for (const c of chunks) {
          d.push(Buffer.from(c), (m) => expect(m.length).toBeLessThanOrEqual(64), () => {})
          const rest = (d as unknown as { rest?: Buffer }).rest
          expect(rest?.length ?? 0).toBeLessThanOrEqual(64 + 11)
        }
      }),
      { numRuns: 500, seed: 25 },
    )
  })
})

describe('syslog datagrams', () => {
  test('one datagram is one message, without the LF, CR LF or NUL it may end with', () => {
    expect(datagramMessage(Buffer.from('<13>hello\r\n'))?.toString()).toBe('<13>hello')
    expect(datagramMessage(Buffer.from('<13>a\nb\0'))?.toString()).toBe('<13>a\nb')
    expect(datagramMessage(Buffer.from('\n\0'))).toBeUndefined()
  })
})

describe('messages stay valid', () => {
  test('messages kept as views are unchanged after later chunks; each chunk is read once, a cut frame joined', () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[a-z0-9 ]{1,300}$/), { minLength: 1, maxLength: 200 }), fc.array(fc.integer({ min: 1, max: 5000 }), { minLength: 1, maxLength: 50 }), (lines, cuts) => {
        const stream = Buffer.from(lines.map((l, i) => (i % 2 ? `${l.length} ${l}` : `<13>${l}\n`)).join(''), 'latin1')
        const d = new StreamDeframer(1024)
        const kept: Buffer[] = []
        // a buffer of its own for every chunk, as Bun gives each socket read (server/ingest/syslog/stream.test.ts)
        for (let at = 0, k = 0; at < stream.length; k++) {
          const n = Math.min(cuts[k % cuts.length]!, stream.length - at)
          d.push(Buffer.from(stream.subarray(at, at + n)), (m) => kept.push(m), () => {})
          at += n
        }
        const want = lines.map((l, i) => (i % 2 ? l : `<13>${l}`))
        // a line of digits and a space at its start is a count (see above); the generated ones start with <13>
        expect(kept.map((m) => m.toString('latin1'))).toEqual(want)
      }),
      { numRuns: 300 },
    )
  })
})
