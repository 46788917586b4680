import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { QueryError } from '../errors'
import { compileQueryNow } from '../query'
import { entry, normal, refusedAt, values } from './extractions.testkit'

describe('enrich: arguments and normal form', () => {
  test.each([
    ['tag=x enrich foo bar', 'tag=x enrich foo bar'],
    ['tag=x enrich foo "my data" bar "my other data"', 'tag=x enrich foo "my data" bar "my other data"'],
    ['tag=x enrich -r data foo as bar baz', 'tag=x enrich -r data foo as bar baz'],
    ['tag=x enrich -o -r data', 'tag=x enrich -o -r data'],
  ])('%s → %s', (q, expected) => {
    expect(normal(q)).toBe(expected)
    expect(normal(expected)).toBe(expected)
  })
  test.each([
    ['tag=x enrich', 12],
    ['tag=x enrich a b c', 18],
    ['tag=x enrich "" b', 13],
    ['tag=x enrich -r data a as', 25],
    ['tag=x enrich -r', 15],
  ])('%s is refused at %d', (q, pos) => refusedAt(q, pos))

  test('a resource is named in the needs; constants are produced', () => {
    const m = compileQueryNow('tag=x enrich -r data foo as bar').modules[0]!
    expect([m.needs, m.produces]).toEqual([{ resources: ['data'] }, ['bar']])
    expect(compileQueryNow('tag=x enrich a 1 b 2').modules[0]!.produces).toEqual(['a', 'b'])
  })
})

describe('enrich: values set', () => {
  test('generated constants are set on every entry; values there are kept unless -o', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.tuple(fc.stringMatching(/^[a-z]{1,5}$/), fc.string({ maxLength: 6 })), { minLength: 1, maxLength: 4, selector: ([k]) => k }), (pairs) => {
        const args = pairs.map(([k, v]) => `${k} "${v.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`).join(' ')
        const existing = pairs[0]![0]
        expect(values(`tag=x enrich ${args}`, [entry('d'), entry('d', { [existing]: 7 })])).toEqual([Object.fromEntries(pairs), { ...Object.fromEntries(pairs), [existing]: 7 }])
        expect(values(`tag=x enrich -o ${args}`, [entry('d', { [existing]: 7 })])).toEqual([Object.fromEntries(pairs)])
      }),
    )
  })

  const csv = 'foo,bar,"b,az"\r\n1,"two, too",3\r\n4,5,6\r\n'
  test('a resource: the first row, all columns or the named ones, renamed with as', () => {
    expect(values('tag=x enrich -r data', ['d'], { data: csv })).toEqual([{ foo: '1', bar: 'two, too', 'b,az': '3' }])
    expect(values('tag=x enrich -r data foo as f "b,az"', [entry('d', { f: 'kept' })], { data: csv })).toEqual([{ f: 'kept', 'b,az': '3' }])
    expect(values('tag=x enrich -o -r data foo as f', [entry('d', { f: 'kept' })], { data: csv })).toEqual([{ f: '1' }])
  })

  test.each([
    ['tag=x enrich -r nope', 16, {}],
    ['tag=x enrich -r data nope', 21, { data: 'a,b\n1,2' }],
    ['tag=x enrich -r data a', 16, { data: 'a,b\n' }],
  ])('%s stops at %d when the search starts', (q, pos, resources) => {
    let error: unknown
    try {
      values(q, ['d'], resources as Record<string, string>)
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(QueryError)
    expect((error as QueryError).position).toBe(pos)
  })
})
