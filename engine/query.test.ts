import { describe, expect, test } from 'bun:test'
import { compileQueryNow } from './query'
import { refusedAt } from './testing'

const normal = (q: string) => compileQueryNow(q).text

describe('query language: the normal form', () => {
  test.each([
    ['tag=syslog', 'tag=syslog'],
    ['  tag=a,b,a   grep   foo|limit 10 |count ', 'tag=a,b grep foo | limit 10 | count'],
    ['tag=a | grep foo', 'tag=a grep foo'],
    // the platform's quoting: \" and \\ are escapes in double quotes, every other backslash stays; backticks are raw
    ['tag=* regex "^a b\\d"', 'tag=* regex `^a b\\d`'],
    ['tag=* regex "^a b\\\\d"', 'tag=* regex `^a b\\d`'],
    ['tag=* regex `^a b\\d`', 'tag=* regex `^a b\\d`'],
    ['tag=web grep "say \\"hi\\""', 'tag=web grep "say \\"hi\\""'],
    ['tag=web grep "plain"', 'tag=web grep plain'],
    ['tag=web grep -v -i a b', 'tag=web grep -v -i a b'],
    ['tag=web regex "(?P<n>\\d+) ms" n > 5', 'tag=web regex `(?P<n>\\d+) ms` n > 5'],
    ['tag=web text', 'tag=web text'],
  ])('%j is normalised to %j, which compiles to the same normal form', (input, expected) => {
    expect(normal(input)).toBe(expected)
    expect(normal(expected)).toBe(expected)
  })

  test('the tags, the modules and the renderer come out as compiled', () => {
    const q = compileQueryNow('tag=a,b grep "x y" | regex a+ | limit 3 | count')
    expect(q.tags).toEqual(['a', 'b'])
    expect(q.modules.map((m) => m.name)).toEqual(['grep', 'regex', 'limit', 'count'])
    expect(q.renderer.name).toBe('table')
    expect(compileQueryNow('tag=a grep x').renderer.name).toBe('text')
    expect(compileQueryNow('tag=a grep x | raw').renderer.name).toBe('raw')
  })

  test.each([
    ['', 0, -1],
    ['grep foo', 0, -1],
    ['tag=', 4, -1],
    ['tag=a,b c', 8, 0],
    ['tag=a,b$ grep x', 6, -1],
    ['tag=a,*', 4, -1],
    ['tag=a frob x', 6, 0],
    ['tag=a grep', 10, 0],
    ['tag=a grep "open', 11, -1],
    ['tag=a grep `open', 11, -1],
    ['tag=a limit 0', 12, 0],
    ['tag=a limit ten', 12, 0],
    ['tag=a regex (', 12, 0],
    // RE2 syntax: no backreferences, no lookaround, repeat counts up to 1000
    ['tag=a regex "(a)\\1"', 12, 0],
    ['tag=a grep x | regex (?=a)b', 21, 1],
    ['tag=a regex (?<!a)b', 12, 0],
    ['tag=a regex a{1001}', 12, 0],
    ['tag=a count 3 4', 14, 0],
    ['tag=a grep x |', 14, 1],
    ['tag=a | | grep x', 8, 0],
    ['tag=a text | grep x', 13, 1],
    ['tag=a grep -q x', 11, 0],
    ['tag=a regex "(?P<a>x)" b==1', 23, 0],
  ])('%j is refused at position %d, module %d', (input, position, moduleIndex) => {
    refusedAt(input, position, moduleIndex)
    expect(() => compileQueryNow(input)).toThrow(`at position ${position}`)
  })
})
