import { describe, expect, test } from 'bun:test'
import { QueryError, formatQuery, parseQuery } from './query'

describe('query language', () => {
  test.each([
    ['tag=syslog', 'tag=syslog'],
    ['  tag=a,b,a   grep   foo|limit 10 |count ', 'tag=a,b grep foo | limit 10 | count'],
    ['tag=a | grep foo', 'tag=a grep foo'],
    ['tag=* regex "^a b\\\\d"', 'tag=* regex "^a b\\\\d"'],
    ['tag=web grep "say \\"hi\\""', 'tag=web grep "say \\"hi\\""'],
    ['tag=web grep "plain"', 'tag=web grep plain'],
  ])('%j is normalised to %j, which parses to the same query', (input, normal) => {
    const q = parseQuery(input)
    expect(formatQuery(q)).toBe(normal)
    expect(parseQuery(normal)).toEqual(q)
  })

  test('stages and arguments come out as parsed', () => {
    expect(parseQuery('tag=a,b grep "x y" | regex a+ | limit 3 | count')).toEqual({
      tags: ['a', 'b'],
      stages: [{ op: 'grep', text: 'x y' }, { op: 'regex', pattern: 'a+' }, { op: 'limit', n: 3 }, { op: 'count' }],
    })
  })

  test.each([
    ['', 0],
    ['grep foo', 0],
    ['tag=', 4],
    ['tag=a,b c', 8],
    ['tag=a,b$ grep x', 6],
    ['tag=a,*', 4],
    ['tag=a frob x', 6],
    ['tag=a grep', 10],
    ['tag=a grep x y', 13],
    ['tag=a grep "open', 11],
    ['tag=a grep "bad \\n"', 16],
    ['tag=a limit 0', 12],
    ['tag=a limit ten', 12],
    ['tag=a regex (', 12],
    // RE2 syntax: no backreferences, no lookaround, repeat counts up to 1000
    ['tag=a regex "(a)\\\\1"', 12],
    ['tag=a grep x | regex (?=a)b', 21],
    ['tag=a regex (?<!a)b', 12],
    ['tag=a regex a{1001}', 12],
    ['tag=a count | limit 1', 14],
    ['tag=a count 3', 12],
    ['tag=a grep x |', 14],
    ['tag=a | | grep x', 8],
  ])('%j is refused at position %d', (input, position) => {
    let error: unknown
    try {
      parseQuery(input)
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(QueryError)
    expect((error as QueryError).position).toBe(position)
    expect((error as QueryError).message).toContain(`at position ${position}`)
  })
})
