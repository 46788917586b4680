import { flushAll } from '../module'
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import type { Entry } from '../entry'
import { SearchLimitError } from '../errors'
import { compileQueryNow } from '../query'
import type { RunEnv } from '../module'
import type { Value } from '../value'

const ENV: RunEnv = { resources: new Map(), extractors: new Map(), maxTracked: 1_000_000, start: 0, end: 0, renderer: 'text' }
const encoder = new TextEncoder()

function run(query: string, entries: Entry[], env = ENV): Entry[] {
  const q = compileQueryNow(`tag=web ${query}`)
  const stages = q.modules.map((m) => m.stage(env))
  const out: Entry[] = []
  const sinks: ((e: Entry) => void)[] = []
  sinks[stages.length] = (e) => out.push(e)
  for (let i = stages.length - 1; i >= 0; i--) sinks[i] = (e) => stages[i]!.push(e, sinks[i + 1]!)
  for (const e of entries) sinks[0]!(e)
  for (let i = 0; i < stages.length; i++) flushAll(stages[i]!, sinks[i + 1]!)
  return out
}

/** Rows of small value sets (so that keys repeat), each value sometimes missing. */
const rows = fc.array(
  fc.record({
    a: fc.option(fc.constantFrom<Value>('x', 'y', 1, 2, '1'), { nil: undefined }),
    b: fc.option(fc.constantFrom<Value>('p', 'q'), { nil: undefined }),
    data: fc.constantFrom('one', 'two', 'three'),
    ts: fc.integer({ min: 0, max: 10_000 }),
  }),
  { maxLength: 80 },
)

function entriesOf(data: { a?: Value; b?: Value; data: string; ts: number }[]): Entry[] {
  return data
    .sort((x, y) => x.ts - y.ts)
    .map((r) => {
      const values = new Map<string, Value>()
      if (r.a !== undefined) values.set('a', r.a)
      if (r.b !== undefined) values.set('b', r.b)
      return { ts: r.ts, tag: 'web', src: '', data: encoder.encode(r.data), values }
    })
}

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
