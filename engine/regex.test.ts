// The regex prefilter (LazyRegex.mayMatch, requiredLiterals): it may only ever reject inputs the regex does not
// match. Checked against re2js itself on random patterns and inputs (fast-check), on bytes (valid and invalid UTF-8)
// and on strings, plus the literals it finds for patterns users write.
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { LazyRegex, compileRegex, fastExtractor, literalsMayMatch, longestRequired, prepareLiterals, requiredLiterals } from './regex'

const alphabet = ['a', 'b', 'c', 'é', '1', 'A', ' ', '\n']

/** RE2 patterns over a small alphabet: literals, classes, groups, repeats, alternation, anchors, case folding. */
const pattern: fc.Arbitrary<string> = fc.letrec<{ re: string; atom: string }>((tie) => ({
  atom: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('a', 'b', 'c', 'é', '1', 'ab', 'abc', 'ba', '\\.', '.', '[ab]', '[^a]', '\\d', '\\w', '\\s', '\\S', '[a-c]', '\\x41'),
    fc.constantFrom('^', '$', '\\b', '\\B', '(?s:.)', '\\pL'),
    tie('re').map((r) => `(${r})`),
    tie('re').map((r) => `(?:${r})`),
    tie('re').map((r) => `(?P<g>${r})`),
    tie('re').map((r) => `(?i:${r})`),
  ),
  re: fc
    .array(
      fc.tuple(tie('atom'), fc.constantFrom('', '', '', '*', '+', '?', '{2}', '{0,2}', '{1,3}', '*?', '+?')).map(([a, q]) => a + q),
      { minLength: 1, maxLength: 5 },
    )
    .chain((parts) => fc.constantFrom(parts.join(''), parts.join('|'), `${parts[0]}|${parts.slice(1).join('')}`)),
})).re

const text = fc.array(fc.constantFrom(...alphabet), { maxLength: 24 }).map((cs) => cs.join(''))

describe('regex prefilter', () => {
  test('never rejects a string the regex matches (bytes and strings)', () => {
    fc.assert(
      fc.property(pattern, fc.array(text, { minLength: 1, maxLength: 8 }), (p, inputs) => {
        let re
        try {
          re = compileRegex(p)
        } catch {
          return // a pattern RE2 refuses (e.g. an empty repeat) has no prefilter to check
        }
        const lazy = new LazyRegex(p, 0)
        for (const s of inputs) {
          const bytes = Buffer.from(s)
          if (re.test(bytes)) expect(lazy.mayMatch(bytes)).toBe(true)
          if (re.test(s)) expect(lazy.mayMatch(s)).toBe(true)
        }
      }),
      { numRuns: 3000 },
    )
  }, 120_000)

  test('never rejects bytes the regex matches, invalid UTF-8 included', () => {
    fc.assert(
      fc.property(pattern, fc.uint8Array({ maxLength: 24 }), text, (p, raw, s) => {
        let re
        try {
          re = compileRegex(p)
        } catch {
          return
        }
        const lazy = new LazyRegex(p, 0)
        for (const bytes of [Buffer.from(raw), Buffer.concat([Buffer.from(raw), Buffer.from(s)]), Buffer.concat([Buffer.from(s), Buffer.from(raw)])])
          if (re.test(bytes)) expect(lazy.mayMatch(bytes)).toBe(true)
      }),
      { numRuns: 2000 },
    )
  }, 120_000)

  test('rejects inputs that lack a required literal, and finds the literals users rely on', () => {
    const marker = new LazyRegex('marker[0-9a-f]{4}', 0)
    expect(marker.literals).toBe('marker')
    expect(marker.needle).toBe('marker')
    expect(marker.mayMatch(Buffer.from('no such thing'))).toBe(false)
    expect(marker.mayMatch(Buffer.from('a markerzzzz'))).toBe(true) // holds the literal, does not match: the regex decides
    const access = new LazyRegex('"(?P<method>[A-Z]+) (?P<path>\\S+) HTTP/[0-9.]+" (?P<status>\\d{3})', 0)
    expect(access.needle).toBe(' HTTP/')
    expect(access.mayMatch(Buffer.from('GET / HTTP/1.1 200'))).toBe(false) // no quote
    const either = new LazyRegex('error|warn', 0)
    expect(either.literals).toEqual({ or: ['error', 'warn'] })
    expect(either.needle).toBeNull()
    expect(either.mayMatch('a warning')).toBe(true)
    expect(either.mayMatch('all fine')).toBe(false)
    for (const p of ['(?i)error', 'a*', 'x?y?', '[ab]+', '\\d+ ms?'.slice(0, 3)]) expect(longestRequired(requiredLiterals(compileRegex(p)))).toBeNull()
    expect(new LazyRegex('(?i)error', 0).mayMatch('ERROR')).toBe(true)
  })

  test('the tree evaluates the same on bytes and on text', () => {
    const t = prepareLiterals({ and: ['ab', { or: ['é', 'zz'] }] })!
    for (const [s, want] of [
      ['xxabé', true],
      ['abzz', true],
      ['ab', false],
      ['é zz', false],
    ] as const) {
      expect(literalsMayMatch(t, s)).toBe(want)
      expect(literalsMayMatch(t, Buffer.from(s))).toBe(want)
      expect(literalsMayMatch(t, new Uint8Array(Buffer.from(s)))).toBe(want)
    }
  })
})

/** Anchored sequences of the fast extractor's items, and some beyond it (alternation, lazy, flags, \\b). */
const flatPattern: fc.Arbitrary<string> = fc
  .array(
    fc.tuple(
      fc.constantFrom('a', 'b', ' ', '1', '"', '\\.', '.', '[ab]', '[^a]', '[^ ]', '[a-c1]', '\\d', '\\w', '\\s', '\\S', '\\D', '\\W', '[\\d ]', '[^"]', 'é', '\\b'),
      fc.constantFrom('', '', '', '*', '+', '?', '{2}', '{0,2}', '{1,}', '*?'),
      fc.constantFrom('', '', '', '(', '(?:', '(?P<n>'),
    ),
    { minLength: 1, maxLength: 6 },
  )
  .map((parts) => {
    let src = ''
    let open = 0
    for (const [atom, q, group] of parts) {
      if (group) {
        src += group
        open++
      }
      src += atom + q
      if (open > 0 && atom.length % 2 === 0) {
        src += ')'
        open--
      }
    }
    return src + ')'.repeat(open)
  })
  .chain((body) => fc.constantFrom(`^${body}`, `^${body}$`, body, `^${body}|x`, `(?i)^${body}`))

const entryText = fc
  .array(fc.oneof(fc.constantFrom('a', 'b', ' ', '1', '"', '.', 'é', '\n', 'ab', '  ', '11'), fc.constant('\u{1F600}')), { maxLength: 16 })
  .map((cs) => cs.join(''))

describe('fast extraction (fastExtractor)', () => {
  test('finds the same match and captures as RE2 wherever it accepts a pattern', () => {
    let accepted = 0
    fc.assert(
      fc.property(flatPattern, fc.array(fc.oneof(entryText.map((s) => Buffer.from(s)), fc.uint8Array({ maxLength: 12 }).map((b) => Buffer.from(b))), { minLength: 1, maxLength: 10 }), (p, inputs) => {
        let re
        try {
          re = compileRegex(p)
        } catch {
          return
        }
        const fast = fastExtractor(p)
        if (fast === null) return
        accepted++
        for (const input of inputs) {
          const m = re.matcher(input)
          const want = m.find() ? Array.from({ length: m.groupCount() + 1 }, (_, g) => m.group(g) ?? undefined) : null
          expect(fast(input)).toEqual(want)
        }
      }),
      { numRuns: 4000 },
    )
    expect(accepted).toBeGreaterThan(100) // the property is not vacuous
  }, 120_000)

  test('refuses patterns a backtracking engine could take more than linear time on, or would read otherwise', () => {
    for (const p of [
      '^(a+)+$', '^(a|aa)+$', '^\\S+\\S+x', '^.*.*x', '^a*a*b', '^\\d+\\d', '^\\s*\\S*\\s*x', '^(?:a+)*', // ambiguous repeats
      'abc', 'x(?P<n>\\d+)', // unanchored: every start position
      '^a|b', '^a+?b', '(?i)^a', '^\\bx', '^\\pL+', '^é+', '^[[:alpha:]]', // outside the subset
      '^.', '^\\S{2}x', '^[^a]?b', // a non-ASCII character is several bytes: only unbounded runs are the same
    ])
      expect(fastExtractor(p)).toBeNull()
    const access = fastExtractor('^(?P<ip>\\S+) \\S+ \\S+ \\[(?P<time>[^\\]]+)\\] "(?P<method>[A-Z]+) (?P<path>\\S+) HTTP/[0-9.]+" (?P<status>\\d{3}) (?P<bytes>\\d+)')!
    expect(access(Buffer.from('10.0.0.1 - - [01/Jan/2026:00:00:00 +0000] "GET /é?x=1 HTTP/1.1" 200 5 "-"'))).toEqual([
      '10.0.0.1 - - [01/Jan/2026:00:00:00 +0000] "GET /é?x=1 HTTP/1.1" 200 5', '10.0.0.1', '01/Jan/2026:00:00:00 +0000', 'GET', '/é?x=1', '200', '5',
    ])
  })

  test('LazyRegex.exec answers as RE2 does, through the fast path or not', () => {
    for (const [p, input] of [
      ['^(?P<a>\\w+) (?P<b>\\d+)', 'word 42 rest'],
      ['(?P<a>\\w+) (?P<b>\\d+)', 'x: word 42 rest'],
      ['^(?P<a>[a-z]+)$', 'abc1'],
    ] as const) {
      const re = compileRegex(p)
      const m = re.matcher(input)
      const want = m.find() ? Array.from({ length: m.groupCount() + 1 }, (_, g) => m.group(g) ?? undefined) : null
      expect(new LazyRegex(p, 0).exec(Buffer.from(input))).toEqual(want)
      expect(new LazyRegex(p, 0).exec(input)).toEqual(want)
    }
  })
})
