import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { entry, normal, refusedAt, values } from './extractions.testkit'
import { parseCsv, parseIndex } from './fields'

describe('fields and csv: arguments and normal form', () => {
  test.each([
    ['tag=x fields [0]', 'tag=x fields [0]'],
    ['tag=x fields -d "\\t" [9] as url', 'tag=x fields -d \\t [9] as url'],
    ['tag=x fields -d "\\t" [9] ~ " " as url [2] as requester', 'tag=x fields -d \\t [9] ~ " " as url [2] as requester'],
    ['tag=x fields -clean -d "|" [3] [4] [5]', 'tag=x fields -clean -d "|" [3] [4] [5]'],
    ['tag=x fields -s -e Payload -d "\\xd8\\xff" [1]~"JFIF"  [2]~"JFIF"', 'tag=x fields -s -e Payload -d \\xd8\\xff [1] ~ JFIF [2] ~ JFIF'],
    ['tag=x csv [5]!=stuff [4] [3]~"things"', 'tag=x csv [5] != stuff [4] [3] ~ things'],
    ['tag=x csv [0] == "foo" [2] != "bar" [3] ~ baz as ID', 'tag=x csv [0] == foo [2] != bar [3] ~ baz as ID'],
    ['tag=x csv [0xA] [010] as nine', 'tag=x csv [0xA] [010] as nine'],
  ])('%s → %s, which is its own normal form', (q, expected) => {
    expect(normal(q)).toBe(expected)
    expect(normal(expected)).toBe(expected)
  })

  test.each([
    ['tag=x fields', 12],
    ['tag=x fields [0] 3', 17],
    ['tag=x fields [-1]', 13],
    ['tag=x csv [0] [x]', 14],
    ['tag=x csv [99999999]', 10],
    ['tag=x csv -d , [0]', 10],
    ['tag=x fields -d "" [0]', 16],
    ['tag=x fields -q -d "\\"" [0]', 19],
  ])('%s is refused at %d', (q, pos) => {
    refusedAt(q, pos)
  })

  test('indexes are read as Go reads integers; the value is named by the index as written', () => {
    expect([parseIndex('10'), parseIndex('010'), parseIndex('0xA'), parseIndex('0b11'), parseIndex('0o7'), parseIndex('08'), parseIndex('1e3')]).toEqual([10, 8, 10, 3, 7, null, null])
    const line = Array.from({ length: 12 }, (_, i) => `f${i}`).join(',')
    expect(values('tag=x csv [0xA] [010] [1] as one', [line])).toEqual([{ '0xA': 'f10', '010': 'f8', one: 'f1' }])
  })
})

const plain = fc.stringMatching(/^[^,"\t|\r\n\\]{0,8}$/)

describe('fields and csv: generated fields joined and read back', () => {
  test.each([
    [',', ''],
    ['\t', '-d "\\t"'],
    ['|', '-d "|"'],
    ['::', '-d "::"'],
  ])('fields with delimiter %j', (delim, flag) => {
    fc.assert(
      fc.property(fc.array(plain.filter((s) => !s.includes(':')), { minLength: 1, maxLength: 10 }), fc.nat(12), (fs, extra) => {
        const want = [...Array(fs.length + 1).keys(), fs.length + extra]
        const q = `tag=x fields ${flag} ${want.map((i) => `[${i}] as f${i}`).join(' ')}`
        const expected = Object.fromEntries(fs.map((f, i) => [`f${i}`, f]))
        expect(values(q, [fs.join(delim)])).toEqual([expected])
      }),
      { numRuns: 100 },
    )
  })

  test('csv reads what an RFC 4180 writer wrote (commas, quotes, line breaks), blanks around fields dropped', () => {
    const field = fc.oneof(plain, fc.string({ maxLength: 10 }).map((s) => s.trim()))
    const write = (f: string) => (/[",\r\n]/.test(f) || f !== f.trim() ? `"${f.replaceAll('"', '""')}"` : f)
    fc.assert(
      fc.property(fc.array(field, { minLength: 1, maxLength: 8 }), fc.boolean(), (fs, padded) => {
        const line = fs.map(write).join(padded ? ' ,  ' : ',')
        const q = `tag=x csv ${fs.map((_, i) => `[${i}] as c${i}`).join(' ')}`
        expect(values(q, [line])).toEqual([Object.fromEntries(fs.map((f, i) => [`c${i}`, f]))])
        // a document of such records reads back record by record
        expect(parseCsv([line, line].join('\r\n'))).toEqual([fs, fs].map((r) => (r.length === 1 && r[0] === '' ? null : r)).filter((r) => r !== null))
      }),
      { numRuns: 200 },
    )
  })

  test('the csv.md sample: quotes, commas and a line break inside a column', () => {
    const line = '2018-11-01T12:46:01.764386-06:00,daffodil, 15554,9870f7cd-b7d3-4bb6-8160-f5f146ebc764 , "OK, what sort of language would we have the world speak?\nIsabella", "CL", Lucien'
    expect(values('tag=x csv [2] [3] [4] [5] [6]', [line])).toEqual([
      { '2': '15554', '3': '9870f7cd-b7d3-4bb6-8160-f5f146ebc764', '4': 'OK, what sort of language would we have the world speak?\nIsabella', '5': 'CL', '6': 'Lucien' },
    ])
  })

  test('fields -q keeps delimiters inside quotes; -clean trims blanks and quotes', () => {
    const line = 'a "b c" d'
    expect(values('tag=x fields -d " " -q [0] [1] [2]', [line])).toEqual([{ '0': 'a', '1': '"b c"', '2': 'd' }])
    expect(values('tag=x fields -d " " -q -clean [1]', [line])).toEqual([{ '1': 'b c' }])
    expect(values('tag=x fields -d " " [1] [2]', [line])).toEqual([{ '1': '"b', '2': 'c"' }])
    expect(values('tag=x fields -clean -d "|" [3] [4]', ['a|b|c|  d  |\te '])).toEqual([{ '3': 'd', '4': 'e' }])
  })

  test('a binary delimiter splits bytes; text fields stay UTF-8', () => {
    const data = Buffer.concat([Buffer.from('héad'), Buffer.from([0xd8, 0xff]), Buffer.from('JFIF body'), Buffer.from([0xd8, 0xff]), Buffer.from('tail')])
    expect(values('tag=x fields -s -d "\\xd8\\xff" [0] [1]~"JFIF" [2]', [entry(new Uint8Array(data))])).toEqual([{ '0': 'héad', '1': 'JFIF body', '2': 'tail' }])
    expect(values('tag=x fields -d "\\xd8\\xff" [1]~"JPEG"', [entry(new Uint8Array(data))])).toEqual([])
  })

  test('missing fields: != keeps, == drops, -s drops; -e reads a value', () => {
    const lines = ['a,b,c', 'a']
    expect(values('tag=x fields [0] [2] != c', lines)).toEqual([{ '0': 'a' }])
    expect(values('tag=x csv [0] [2] == c', lines)).toEqual([{ '0': 'a', '2': 'c' }])
    expect(values('tag=x csv -s [0] [2]', lines)).toEqual([{ '0': 'a', '2': 'c' }])
    expect(values('tag=x csv [0] [2]', lines)).toEqual([{ '0': 'a', '2': 'c' }, { '0': 'a' }])
    expect(values('tag=x csv -e p [1]', [entry('x', { p: 'q,"r s"' }), entry('x,y')])).toEqual([{ p: 'q,"r s"', '1': 'r s' }, {}])
  })
})
