import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import type { Entry } from '../entry'
import { SearchLimitError } from '../errors'
import { compileQueryNow } from '../query'
import { entriesOf, rows, run } from './condensing.testkit'

/** The key a plain loop gives an entry: its values of a and b, or none when one is missing. */
const keyOf = (e: Entry) => (e.values.has('a') && e.values.has('b') ? `${String(e.values.get('a'))}\u0000${String(e.values.get('b'))}` : null)

describe('first and last', () => {
  test('first: the first entry of each key, as a Map of the first seen gives', () => {
    fc.assert(
      fc.property(rows, (data) => {
        const entries = entriesOf(data)
        const firsts = new Map<string, Entry>()
        for (const e of entries) {
          const k = keyOf(e)
          if (k !== null && !firsts.has(k)) firsts.set(k, e)
        }
        expect(run('first a b', entries)).toEqual([...firsts.values()])
        expect(run('first', entries)).toEqual(entries.slice(0, 1))
      }),
      { numRuns: 300 },
    )
  })

  test('last: the last entry of each key, in the order of those last entries', () => {
    fc.assert(
      fc.property(rows, (data) => {
        const entries = entriesOf(data)
        const lasts: Entry[] = []
        for (let i = entries.length - 1; i >= 0; i--) {
          const k = keyOf(entries[i]!)
          if (k !== null && !lasts.some((e) => keyOf(e) === k)) lasts.unshift(entries[i]!)
        }
        expect(run('last a b', entries)).toEqual(lasts)
        expect(run('last', entries)).toEqual(entries.slice(-1))
      }),
      { numRuns: 300 },
    )
  })

  test('first without keys ends the scan after one entry', () => {
    const stage = compileQueryNow('tag=web first').modules[0]!.stage({ resources: new Map(), extractors: new Map(), maxTracked: 10, start: 0, end: 0, renderer: 'text' })
    expect(stage.done?.()).toBe(false)
    stage.push({ ts: 0, tag: 'web', src: '', data: new Uint8Array(0), values: new Map() }, () => {})
    expect(stage.done?.()).toBe(true)
  })

  test('more keys than -maxtracked ends the search naming the bound', () => {
    const entries = Array.from({ length: 4 }, (_, i): Entry => ({ ts: i, tag: 'web', src: '', data: new Uint8Array(0), values: new Map([['a', i]]) }))
    expect(() => run('first -maxtracked 3 a', entries)).toThrow(new SearchLimitError('first: more than 3 distinct keys (the bound -maxtracked sets): raise -maxtracked, or narrow the search'))
    expect(() => run('last -maxtracked 3 a', entries)).toThrow(new SearchLimitError('last: more than 3 distinct keys (the bound -maxtracked sets): raise -maxtracked, or narrow the search'))
    expect(run('last -maxtracked 4 a', entries)).toHaveLength(4)
  })

  test('the normal form', () => {
    expect(compileQueryNow('tag=web first  host').text).toBe('tag=web first host')
    expect(compileQueryNow('tag=web last -maxtracked 9 a b').text).toBe('tag=web last -maxtracked 9 a b')
  })
})
