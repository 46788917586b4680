import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { QueryError } from './errors'
import { quote, tokenize } from './lex'

describe('tokens and the platform quoting', () => {
  test('double quotes: \\" and \\\\ are escapes, every other backslash stays as written', () => {
    expect(tokenize('"\\d+ ms"')).toEqual([{ kind: 'string', text: '\\d+ ms', pos: 0, end: 8 }])
    expect(tokenize('"a\\\\d"')[0]!.text).toBe('a\\d')
    expect(tokenize('"say \\"hi\\""')[0]!.text).toBe('say "hi"')
    expect(tokenize('"\\n\\x01"')[0]!.text).toBe('\\n\\x01')
  })

  test('backticks are raw: no escape at all', () => {
    expect(tokenize('`a\\"b`')[0]!.text).toBe('a\\"b')
    expect(tokenize('`x` y')).toEqual([
      { kind: 'string', text: 'x', pos: 0, end: 3 },
      { kind: 'word', text: 'y', pos: 4, end: 5 },
    ])
  })

  test('blanks and | separate words; a quote starts a new token', () => {
    expect(tokenize('a|b  c\t"d e"f').map((t) => [t.kind, t.text])).toEqual([
      ['word', 'a'],
      ['pipe', '|'],
      ['word', 'b'],
      ['word', 'c'],
      ['string', 'd e'],
      ['word', 'f'],
    ])
  })

  test('unterminated strings are refused where they start', () => {
    for (const [src, pos] of [
      ['a "b', 2],
      ['a `b', 2],
    ] as const) {
      expect(() => tokenize(src)).toThrow(QueryError)
      try {
        tokenize(src)
      } catch (e) {
        expect((e as QueryError).position).toBe(pos)
      }
    }
  })

  test('quote gives text that tokenizes back to the same one token, whatever the text', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', ' ', '"', '\\', '`', '|', 'é', '\t', 'x') }), (text) => {
        const tokens = tokenize(quote(text))
        expect(tokens).toHaveLength(1)
        expect(tokens[0]!.text).toBe(text)
      }),
      { numRuns: 2000 },
    )
  })
})
