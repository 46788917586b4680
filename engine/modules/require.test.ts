import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { entry, normal, refusedAt, values } from './extractions.testkit'

describe('require', () => {
  test.each([
    ['tag=x require  SrcPort', 'tag=x require SrcPort'],
    ['tag=x require -s SrcPort SrcIP', 'tag=x require -s SrcPort SrcIP'],
    ['tag=x require -v A', 'tag=x require -v A'],
  ])('%s → %s', (q, expected) => {
    expect(normal(q)).toBe(expected)
    expect(normal(expected)).toBe(expected)
  })
  test.each([
    ['tag=x require', 13],
    ['tag=x require -x a', 14],
    ['tag=x require -s', 16],
  ])('%s is refused at %d', (q, pos) => refusedAt(q, pos))

  test('any, all (-s) and none (-v) of the names, against a plain check on generated entries', () => {
    const names = ['a', 'b', 'c']
    fc.assert(
      fc.property(fc.array(fc.subarray(names), { maxLength: 20 }), fc.subarray(names, { minLength: 1 }), (present, wanted) => {
        const es = () => present.map((p, i) => entry(`e${i}`, Object.fromEntries(p.map((n) => [n, i]))))
        const ids = (q: string) => values(q, es()).map((v) => JSON.stringify(v))
        const expected = (test: (p: string[]) => boolean) => present.filter(test).map((p) => JSON.stringify(Object.fromEntries(p.map((n) => [n, present.indexOf(p)]))))
        const has = (p: string[], n: string) => p.includes(n)
        expect(ids(`tag=x require ${wanted.join(' ')}`)).toEqual(expected((p) => wanted.some((n) => has(p, n))))
        expect(ids(`tag=x require -s ${wanted.join(' ')}`)).toEqual(expected((p) => wanted.every((n) => has(p, n))))
        expect(ids(`tag=x require -v ${wanted.join(' ')}`)).toEqual(expected((p) => !wanted.some((n) => has(p, n))))
      }),
    )
    expect(values('tag=x require TAG', ['d']).length).toBe(1)
  })
})
