import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { compileQueryNow } from '../query'
import { entry, normal, refusedAt, values } from './extractions.testkit'

describe('alias', () => {
  test.each([
    ['tag=x alias  foo bar X Y', 'tag=x alias foo bar X Y'],
    ['tag=x alias "a b" c', 'tag=x alias "a b" c'],
  ])('%s → %s', (q, expected) => {
    expect(normal(q)).toBe(expected)
    expect(normal(expected)).toBe(expected)
  })
  test.each([
    ['tag=x alias', 11],
    ['tag=x alias a b c', 17],
    ['tag=x alias a ""', 14],
  ])('%s is refused at %d', (q, pos) => refusedAt(q, pos))

  test('copies generated values, built-ins included; a missing source sets nothing', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom('a', 'b', 'c'), fc.oneof(fc.string(), fc.integer())), (vals) => {
        const [got] = values('tag=x alias a a2 b b2 c c2 TAG t', [entry('d', vals)])
        const expected: Record<string, unknown> = { ...vals, t: 'x' }
        for (const k of ['a', 'b', 'c']) if (k in vals) expected[`${k}2`] = vals[k]
        expect(got).toEqual(expected)
      }),
    )
  })

  test('the copy changes alone; hints name sources and destinations', () => {
    expect(values('tag=x alias v w | upper w', [entry('d', { v: 'abc' })])).toEqual([{ v: 'abc', w: 'ABC' }])
    const m = compileQueryNow('tag=x alias a b c d').modules[0]!
    expect([m.consumes, m.produces]).toEqual([['a', 'c'], ['b', 'd']])
  })
})
