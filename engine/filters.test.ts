// applyFilters against queries built another way: for generated filters, the result is the query with each
// filter written into its module (or a new first module), and it compiles to the same normal form as that query.
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { QueryError } from './errors'
import { applyFilters, filterError } from './filters'
import { FILTER_OPS } from './modules/filter'
import { compileQueryNow } from './query'

const name = fc.stringMatching(/^[a-z][a-z0-9]{0,6}$/)
const operand = fc.oneof(fc.stringMatching(/^[a-z0-9.]{1,8}$/), fc.constant('a b'), fc.integer({ min: -99, max: 999 }).map(String))

describe('applyFilters', () => {
  test('a filter on a module of the query joins its arguments; the query compiles as if written so', () => {
    fc.assert(
      fc.property(name, fc.constantFrom(...FILTER_OPS), operand, fc.boolean(), (capture, op, value, tail) => {
        const head = `tag=web regex "x(?P<${capture}>[0-9]+)"`
        const src = tail ? `${head} | count` : head
        const out = applyFilters(src, [{ Module: 'regex', Path: capture, Op: op, Value: value }])
        const quoted = /^[a-z0-9.]+$|^-?[0-9]+$/.test(value) ? value : `"${value}"`
        const expected = `${head} ${capture} ${op} ${quoted}${tail ? ' | count' : ''}`
        expect(out).toBe(expected)
        expect(compileQueryNow(out).text).toBe(compileQueryNow(expected).text)
      }),
      { numRuns: 200 },
    )
  })

  test('a filter on a module the query lacks adds it first, with its Args; an extraction without Op adds the name alone', () => {
    expect(applyFilters('tag=web grep a | count', [{ Module: 'regex', Args: '"(?P<n>.)"', Path: 'n', Op: '==', Value: '1' }])).toBe(
      'tag=web regex "(?P<n>.)" n == 1 | grep a | count',
    )
    expect(applyFilters('tag=web  ', [{ Module: 'regex', Args: '"(?P<n>.)"', Path: 'n' }])).toBe('tag=web regex "(?P<n>.)" n')
    // two filters on one module: both join it, in order
    const two = applyFilters('tag=web regex "(?P<a>.)(?P<b>.)"', [
      { Module: 'regex', Path: 'a', Op: '!=', Value: 'x' },
      { Module: 'regex', Path: 'b', Op: '~', Value: 'y' },
    ])
    expect(two).toBe('tag=web regex "(?P<a>.)(?P<b>.)" a != x b ~ y')
    compileQueryNow(two)
  })

  test('bad filters are QueryErrors naming the module; the platform wording', () => {
    const fail = (f: Parameters<typeof applyFilters>[1]) => {
      try {
        applyFilters('tag=web grep a | regex "(?P<n>.)"', f)
      } catch (e) {
        expect(e).toBeInstanceOf(QueryError)
        return filterError(e as QueryError)
      }
      throw new Error('no error')
    }
    expect(fail([{ Module: 'regex', Path: 'n', Op: '===', Value: '1' }])).toStartWith('regex (module idx 1) error: unknown filter operator')
    expect(fail([{ Module: 'regex', Path: '', Op: '==', Value: '1' }])).toBe('regex (module idx 1) error: the filter names no value (Path)')
    expect(fail([{ Module: 'a b', Path: 'x' }])).toStartWith('a b (module idx 0) error: invalid module name')
    expect(fail(Array.from({ length: 65 }, () => ({ Module: 'regex', Path: 'n' })))).toBe('at most 64 filters may be applied at once')
  })
})
