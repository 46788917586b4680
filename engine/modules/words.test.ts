import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { entry, normal, refusedAt, values } from './extractions.testkit'

describe('words: arguments and normal form', () => {
  test.each([
    ['tag=x words Mozilla  Firefox', 'tag=x words Mozilla Firefox'],
    ['tag=x words -e Payload -v HTTP 1.1', 'tag=x words -e Payload -v HTTP 1.1'],
    ['tag=x words -or Gravwell gravwell', 'tag=x words -or Gravwell gravwell'],
    ['tag=x words done. :foo', 'tag=x words done foo'],
  ])('%s → %s, which is its own normal form', (q, expected) => {
    expect(normal(q)).toBe(expected)
    expect(normal(expected)).toBe(expected)
  })

  test.each([
    ['tag=x words', 11],
    ['tag=x words ok "8.74.(Windows"', 15],
    ['tag=x words "Version/11.00"', 12],
    ['tag=x words Ver*', 12],
    ['tag=x words ...', 12],
    ['tag=x words -w a', 12],
  ])('%s is refused at %d', (q, pos) => {
    refusedAt(q, pos)
  })
})

describe('words: matching whole words', () => {
  const line =
    '16.246.30.72 - - [08/May/2017:15:20:35 -0600] "DELETE /search/tag/list HTTP/1.0" 200 5032 "http://nguyen.biz/category/tags/tag/home.htm" "Opera/8.74.(Windows 98; Win 9x 4.90; it-IT) Presto/2.9.173 Version/11.00"'
  test.each([
    ['Ver', false],
    ['16.246.30.72', true],
    ['8.74', true],
    ['Version', true],
    ['11.00', true],
    ['Windows', true],
    ['windows', false],
    ['it-IT', true],
    ['HTTP', true],
    ['1.0', true],
  ])('the words.md table: %s matches: %p', (w, expected) => {
    expect(values(`tag=x words ${w}`, [line]).length).toBe(expected ? 1 : 0)
  })

  test('the accelerators.md example: the words it lists are found, parts of them are not', () => {
    const l = 'user@example.com 192.168.1.100:8080 GET /api/v2 id=4a2f -- done.'
    for (const w of ['user@example.com', '192.168.1.100:8080', 'GET', 'api', 'v2', 'id', '4a2f', 'done']) expect(values(`tag=x words ${w}`, [l]).length).toBe(1)
    for (const w of ['192.168.1.100', 'user', 'example.com', 'done.x']) expect(values(`tag=x words "${w}"`, [l]).length).toBe(0)
  })

  // An independent cutter: a regular expression of the split characters, then the trims.
  const SPLIT = /[\u0000-\u0020!"#$%&'()*+,/;<=>?[\\\]^`{|}~\u007f\u00a0\u00d7\u0085\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/u
  const cut = (s: string) => new Set(s.split(SPLIT).map((w) => w.replace(/^[.:;\u00ad]+/, '').replace(/[.:;\-\u00ad]+$/, '')).filter(Boolean))
  const piece = fc.constantFrom('a', 'b', 'ab', 'x.y', 'c-d', 'e_f', 'g@h', '1.0', 'é', '.', ':', '-', ' ', '/', '(', ',', '\u00a0', '\u2003', '\t', ';')

  test('-v and -or, on generated text, against the sets of words an independent cutter finds', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), fc.uniqueArray(fc.constantFrom('a', 'b', 'ab', 'x.y', 'c-d', 'e_f', 'g@h', '1.0', 'é'), { minLength: 1, maxLength: 3 }), (parts, ws) => {
        const text = parts.join('')
        const have = cut(text)
        const n = ws.filter((w) => have.has(w)).length
        const passes = (flags: string) => values(`tag=x words ${flags} ${ws.join(' ')}`, [text]).length === 1
        expect(passes('')).toBe(n === ws.length)
        expect(passes('-or')).toBe(n > 0)
        expect(passes('-v')).toBe(n === 0)
        expect(passes('-v -or')).toBe(n < ws.length)
      }),
      { numRuns: 500 },
    )
  })

  test('-e reads a value; an entry without it holds no word', () => {
    expect(values('tag=x words -e Body gravwell', [entry('gravwell', { Body: 'I like gravwell.' }), entry('gravwell', { Body: 'nope' }), entry('gravwell')])).toEqual([{ Body: 'I like gravwell.' }])
    expect(values('tag=x words -v -e Body gravwell', [entry('gravwell')])).toEqual([{}])
  })
})
