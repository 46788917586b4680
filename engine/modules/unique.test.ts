import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import type { Entry } from '../entry'
import { SearchLimitError } from '../errors'
import type { RunEnv } from '../module'
import { compileQueryNow } from '../query'
import { ENV, entriesOf, refusedAt, rows, run } from './condensing.testkit'

describe('unique', () => {
  test('passes the first entry of each distinct combination, as a Set of keys does', () => {
    fc.assert(
      fc.property(rows, (data) => {
        const entries = entriesOf(data)
        const seen = new Set<string>()
        const want = entries.filter((e) => {
          if (!e.values.has('a') || !e.values.has('b')) return false
          const key = `${String(e.values.get('a'))}\u0000${String(e.values.get('b'))}`
          if (seen.has(key)) return false
          seen.add(key)
          return true
        })
        expect(run('unique a b', entries)).toEqual(want)
        const seenData = new Set<string>()
        expect(run('unique', entries)).toEqual(entries.filter((e) => !seenData.has(new TextDecoder().decode(e.data)) && seenData.add(new TextDecoder().decode(e.data))))
      }),
      { numRuns: 300 },
    )
  })

  test('over a window: keys are distinct per window of time', () => {
    fc.assert(
      fc.property(rows, (data) => {
        const entries = entriesOf(data)
        const seen = new Set<string>()
        const want = entries.filter((e) => {
          if (!e.values.has('a')) return false
          const key = `${Math.floor(e.ts / 1000)}/${String(e.values.get('a'))}`
          return !seen.has(key) && !!seen.add(key)
        })
        expect(run('unique a over 1s', entries)).toEqual(want)
      }),
      { numRuns: 200 },
    )
  })

  test('more keys than -maxtracked (or RunEnv.maxTracked) ends the search naming the bound', () => {
    const entries = Array.from({ length: 11 }, (_, i): Entry => ({ ts: i, tag: 'web', src: '', data: new Uint8Array(0), values: new Map([['a', i]]) }))
    expect(run('unique -maxtracked 11 a', entries)).toHaveLength(11)
    expect(() => run('unique -maxtracked 10 a', entries)).toThrow(SearchLimitError)
    expect(() => run('unique -maxtracked 10 a', entries)).toThrow('unique: more than 10 distinct keys (the bound -maxtracked sets)')
    expect(() => run('unique a', entries, { ...ENV, maxTracked: 5 })).toThrow('more than 5 distinct keys')
    expect(() => run('unique -maxsize 1 a', [{ ts: 0, tag: 'web', src: '', data: new Uint8Array(0), values: new Map([['a', 'x'.repeat(600_000)]]) }])).toThrow('more than 1 MB')
  })

  test('the normal form', () => {
    expect(compileQueryNow('tag=web unique  -maxtracked 5 a "b c" over 1h').text).toBe('tag=web unique -maxtracked 5 a "b c" over 1h')
    expect(compileQueryNow('tag=web unique').text).toBe('tag=web unique')
  })

  test.each([
    ['tag=web unique -maxtracked x a', 27, '-maxtracked needs a whole number'],
    ['tag=web unique -maxtracked 0 a', 27, '-maxtracked needs a whole number'],
    ['tag=web unique -q a', 15, 'unknown flag -q'],
    ['tag=web unique a over', 21, '"over" needs a duration'],
    ['tag=web unique a over soon', 22, '"over" needs a duration'],
    ['tag=web unique a over 1h b', 25, 'comes last'],
    ['tag=web unique a a', 17, 'named twice'],
  ])('%j is refused at %d', (query, position, reason) => {
    expect(refusedAt(query, position)).toContain(reason)
  })
})
