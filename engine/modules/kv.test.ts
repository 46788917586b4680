import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { entry, normal, refusedAt, values } from './extractions.testkit'
import { bytePlan, readPairs, readPairsBytes } from './kv'

describe('kv: arguments and normal form', () => {
  test.each([
    ['tag=x kv a', 'tag=x kv a'],
    ['tag=x kv -q devname level=="critical" logdesc msg', 'tag=x kv -q devname level == critical logdesc msg'],
    ['tag=x kv -sep EQUALS y', 'tag=x kv -sep EQUALS y'],
    ['tag=x kv -sep ":" -d "|" user as who', 'tag=x kv -sep : -d "|" user as who'],
    ['tag=x kv -d "\\t" a', 'tag=x kv -d \\t a'],
    ['tag=x kv -s -noclean -e msg a!=1', 'tag=x kv -s -noclean -e msg a != 1'],
    ['tag=x kv -dall ", " a b ~ x', 'tag=x kv -dall ", " a b ~ x'],
  ])('%s → %s, which is its own normal form', (q, expected) => {
    expect(normal(q)).toBe(expected)
    expect(normal(expected)).toBe(expected)
  })

  test.each([
    ['tag=x kv', 8],
    ['tag=x kv -x a', 9],
    ['tag=x kv -sep "" a', 14],
    ['tag=x kv -d "" a', 12],
    ['tag=x kv -d , -dall ; a', 20],
    ['tag=x kv a as', 13],
    ['tag=x kv -sep', 13],
  ])('%s is refused at %d', (q, pos) => {
    refusedAt(q, pos)
  })
})

const keyArb = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_.-]{0,7}$/)
/** Values without the delimiters, quotes or leading blanks the formats cannot carry unquoted. */
const plainValue = fc.stringMatching(/^[^\s"|,;]{1,10}$/)

describe('kv: pairs generated, joined and read back', () => {
  test.each([
    ['=', ' ', ''],
    [':', '|', '-sep : -d "|"'],
    [' EQUALS ', ' ', '-sep EQUALS'],
    ['=', ', ', '-dall ", "'],
    ['=', '\t', '-d "\\t"'],
  ])('separator %j, delimiter %j (%s)', (sep, delim, flags) => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.tuple(keyArb, plainValue), { minLength: 1, maxLength: 8, selector: ([k]) => k }), (pairs) => {
        if (sep.trim() !== '' && pairs.some(([k, v]) => k.includes(sep.trim()) || v.startsWith(sep.trim()))) return
        const line = pairs.map(([k, v]) => `${k}${sep}${v}`).join(delim)
        const q = `tag=x kv ${flags} ${pairs.map(([k], i) => `"${k}" as v${i}`).join(' ')}`
        const expected = Object.fromEntries(pairs.map(([, v], i) => [`v${i}`, v]))
        expect(values(q, [line])).toEqual([expected])
      }),
      { numRuns: 150 },
    )
  })

  test('-q reads quoted values that hold delimiters and escaped quotes', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.tuple(keyArb, fc.stringMatching(/^[^"\\]{0,12}$/)), { minLength: 1, maxLength: 6, selector: ([k]) => k }), (pairs) => {
        const line = pairs.map(([k, v]) => `${k}="${v}"`).join(' ')
        const q = `tag=x kv -q ${pairs.map(([k], i) => `"${k}" as v${i}`).join(' ')}`
        expect(values(q, [line])).toEqual([Object.fromEntries(pairs.map(([, v], i) => [`v${i}`, v]))])
      }),
      { numRuns: 150 },
    )
    expect(values('tag=x kv -q msg', ['msg="say \\"hi\\" now" x=1'])).toEqual([{ msg: 'say "hi" now' }])
  })

  test('the wiki samples: blanks around the separator, Fortigate, EQUALS, -noclean with a blank separator', () => {
    const messy = ['x= 1 y = 2 z=3 foo    =  bar', 'x=1 y=2 z=3 foo=bar']
    expect(values('tag=x kv x y z foo', messy)).toEqual([
      { x: '1', y: '2', z: '3', foo: 'bar' },
      { x: '1', y: '2', z: '3', foo: 'bar' },
    ])
    const forti =
      'date=2022-09-26 time=10:57:08 devname="fortigate" devid="FGT60EABCDEF012" eventtime=1664215028981468505 tz="-0700" logid="0100041001" type="event" subtype="system" level="critical" vd="root" logdesc="FortiGate update failed" status="update" msg="Fortigate scheduled update failed"'
    expect(values('tag=x kv -q devname level=="critical" logdesc msg time', [forti, forti.replace('critical', 'notice')])).toEqual([
      { devname: 'fortigate', level: 'critical', logdesc: 'FortiGate update failed', msg: 'Fortigate scheduled update failed', time: '10:57:08' },
    ])
    expect(values('tag=x kv -sep EQUALS y', ['x EQUALS 1 y EQUALS 2'])).toEqual([{ y: '2' }])
    expect(values('tag=x kv -sep ":" -d "|" y foo', ['x:1|y:2|z:3|foo:bar'])).toEqual([{ y: '2', foo: 'bar' }])
    expect(values('tag=x kv -noclean -sep " " -d ";" b', ['a 1;b 2'])).toEqual([{ b: '2' }])
    expect(values('tag=x kv -noclean x', ['x=   value'])).toEqual([{ x: '   value' }])
    expect(values('tag=x kv url', ['url=http://h/?a=b&c=d next=1'])).toEqual([{ url: 'http://h/?a=b&c=d' }])
  })

  test('missing keys: != keeps the entry, == drops it, -s drops it; -e reads a value', () => {
    const lines = ['a=1 b=2', 'a=3']
    expect(values('tag=x kv a b != 2', lines)).toEqual([{ a: '3' }])
    expect(values('tag=x kv a b == 2', lines)).toEqual([{ a: '1', b: '2' }])
    expect(values('tag=x kv -s a b', lines)).toEqual([{ a: '1', b: '2' }])
    expect(values('tag=x kv a > 1', lines)).toEqual([{ a: '3' }])
    expect(values('tag=x kv -e m k', [entry('k=data', { m: 'k=v' }), entry('k=data')])).toEqual([{ m: 'k=v', k: 'v' }, {}])
  })
})

describe('kv: keys that look like flags, keywords or filters', () => {
  test.each([
    ['tag=x kv "-x"', '-x=1 b=2', { '-x': '1' }],
    ['tag=x kv "as" as k', 'as=1', { k: '1' }],
    ['tag=x kv "a<b"', 'a<b=3', { 'a<b': '3' }],
  ])('%s keeps its key in the normal form', (q, line, expected) => {
    expect(normal(normal(q))).toBe(normal(q))
    expect(values(normal(q), [line])).toEqual([expected])
  })
})

describe('kv over bytes', () => {
  // The stage reads DATA as bytes (readPairsBytes) when the delimiters and the separator are ASCII: its answer must be
  // readPairs' over the decoded text, for any bytes (invalid UTF-8, non-ASCII keys and blanks, quotes, escapes).
  const piece = fc.oneof(
    fc.constantFrom('=', ' ', '\t', '"', '\\"', '\\', ':', '|', ',', 'k', 'key', 'ké', ' = ', '\u00a0', '\v', '\n', 'EQ'),
    fc.stringMatching(/^[a-z0-9]{1,4}$/),
    fc.uint8Array({ minLength: 1, maxLength: 3 }).map((b) => Buffer.from(b).toString('latin1')),
  )
  const bytesArb = fc.array(fc.oneof(piece.map((p) => Buffer.from(p)), fc.uint8Array({ minLength: 1, maxLength: 2 }).map((b) => Buffer.from(b))), { maxLength: 30 }).map((parts) => Buffer.concat(parts))
  const optionsArb = fc.record({
    separator: fc.constantFrom('=', ':', 'EQ', ' = ', '=='),
    delimiters: fc.constantFrom({ chars: ' \t' }, { chars: '|' }, { chars: ', ' }, { chars: '\n' }),
    quoted: fc.boolean(),
    clean: fc.boolean(),
  })
  const wantedArb = fc.uniqueArray(fc.constantFrom('k', 'key', 'ké', 'a', 'b0', ' k', ''), { minLength: 1, maxLength: 4 }).map((w) => new Set(w))

  test('readPairsBytes answers as readPairs over the decoded text', () => {
    fc.assert(
      fc.property(bytesArb, optionsArb, wantedArb, (data, o, wanted) => {
        const plan = bytePlan(wanted, o)!
        expect(plan).not.toBeNull()
        expect(readPairsBytes(data, wanted, o, plan)).toEqual(readPairs(data.toString('utf8'), wanted, o))
      }),
      { numRuns: 3000 },
    )
  })

  test('non-ASCII delimiters or separators read the decoded text', () => {
    expect(bytePlan(new Set(['k']), { separator: '=', delimiters: { chars: '\u00d8' }, quoted: false, clean: true })).toBeNull()
    expect(bytePlan(new Set(['k']), { separator: '→', delimiters: { chars: ' ' }, quoted: false, clean: true })).toBeNull()
    expect(bytePlan(new Set(['k']), { separator: '=', delimiters: { text: '||' }, quoted: false, clean: true })).toBeNull()
    expect(values('tag=t kv -d "\\xd8" k', ['k=1\u00d8k=2'])).toEqual([{ k: '1' }])
  })
})
