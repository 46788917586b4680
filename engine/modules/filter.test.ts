import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import type { Token } from '../lex'
import { TimeValue, parseIP } from '../value'
import { entry } from './extractions.testkit'
import { type Extraction, applyExtractions, unescapeArg } from './extractions'
import { type FilterOp, splitFilter, valueTest } from './filter'

describe('inline filters', () => {
  test('ordering and equality of numbers (and text holding them), against plain comparisons', () => {
    const ops: [FilterOp, (a: number, b: number) => boolean][] = [
      ['==', (a, b) => a === b], ['!=', (a, b) => a !== b], ['<', (a, b) => a < b], ['>', (a, b) => a > b], ['<=', (a, b) => a <= b], ['>=', (a, b) => a >= b],
    ]
    fc.assert(
      fc.property(fc.integer({ min: -50, max: 50 }), fc.integer({ min: -50, max: 50 }), fc.boolean(), (a, b, asText) => {
        for (const [op, f] of ops) expect(valueTest(op, String(b))(asText ? String(a) : a)).toBe(f(a, b))
      }),
    )
  })

  test('~ and !~: text contains; an IP is inside a subnet, PRIVATE and MULTICAST included', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 8 }), fc.string({ maxLength: 3 }), (s, t) => {
        expect(valueTest('~', t)(s)).toBe(s.includes(t))
        expect(valueTest('!~', t)(s)).toBe(!s.includes(t))
      }),
    )
    expect(valueTest('~', '10.0.0.0/8')(parseIP('10.9.9.9')!)).toBe(true)
    expect(valueTest('~', '10.0.0.0/8')('11.0.0.1')).toBe(false)
    expect(valueTest('~', 'fd00::/8')('fd12::1')).toBe(true)
    expect(valueTest('~', 'PRIVATE')('172.16.4.4')).toBe(true)
    expect(valueTest('!~', 'PRIVATE')('8.8.8.8')).toBe(true)
    expect(valueTest('~', 'MULTICAST')(parseIP('ff02::1')!)).toBe(true)
    expect(valueTest('~', 'PRIVATE')('a PRIVATE note')).toBe(true)
  })

  test('times compare with an RFC 3339 operand', () => {
    const t = new TimeValue(Date.parse('2024-05-01T00:00:00Z'))
    expect(valueTest('>=', '2024-05-01T00:00:00Z')(t)).toBe(true)
    expect(valueTest('<', '2024-05-01T00:00:00Z')(t)).toBe(false)
    expect(valueTest('==', '2024-05-01T02:00:00+02:00')(t)).toBe(true)
  })

  test('a missing value fails every filter', () => {
    for (const op of ['==', '!=', '<', '>', '<=', '>=', '~', '!~'] as FilterOp[]) expect(valueTest(op, '1')(undefined)).toBe(false)
  })

  test('splitFilter finds the first operator, <= before <', () => {
    expect(splitFilter('a<=3')).toEqual({ name: 'a', op: '<=', rest: '3' })
    expect(splitFilter('[5]!=x')).toEqual({ name: '[5]', op: '!=', rest: 'x' })
    expect(splitFilter('a!~b')).toEqual({ name: 'a', op: '!~', rest: 'b' })
    expect(splitFilter('plain')).toBeNull()
  })
})

describe('applyExtractions: what a missing value does', () => {
  const tok: Token = { kind: 'word', text: 'x', pos: 0, end: 1 }
  const item = (op?: FilterOp): Extraction => ({ source: 'x', as: 'x', token: tok, filter: op ? { op, operand: 'v', test: valueTest(op, 'v') } : undefined })
  test.each([
    [undefined, undefined, true],
    ['==', undefined, false],
    ['!=', undefined, false],
    ['!=', 'lenient', true],
    ['!~', 'lenient', true],
    ['~', 'lenient', false],
  ] as const)('filter %s, rule %s: passes %p', (op, missing, passes) => {
    expect(applyExtractions(entry('d'), [item(op)], [undefined], missing ? { missing } : undefined)).toBe(passes)
  })
  test('strict drops any item that found nothing; found values are set', () => {
    expect(applyExtractions(entry('d'), [item()], [undefined], { strict: true })).toBe(false)
    const e = entry('d')
    expect(applyExtractions(e, [item('!=')], ['w'], { strict: true })).toBe(true)
    expect(e.values.get('x')).toBe('w')
  })
})

test('unescapeArg reads the escapes of delimiter arguments', () => {
  expect(unescapeArg('\\t|\\n|\\x41|\\q|\\\\')).toBe('\t|\n|A|\\q|\\')
})
