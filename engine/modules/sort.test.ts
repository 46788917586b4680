import { flushAll } from '../module'
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import type { Entry } from '../entry'
import { QueryError, SearchLimitError } from '../errors'
import type { RunEnv } from '../module'
import { compileQueryNow } from '../query'
import { type Value, compareValues, parseIP } from '../value'
import { MAX_SORT_ENTRIES } from './sort'

const ENV: RunEnv = { resources: new Map(), extractors: new Map(), maxTracked: 1_000_000, start: 0, end: 0, renderer: 'text' }
const EMPTY = new Uint8Array(0)

function run(query: string, entries: Entry[]): Entry[] {
  const q = compileQueryNow(`tag=web ${query}`)
  const stages = q.modules.map((m) => m.stage(ENV))
  const out: Entry[] = []
  const sinks: ((e: Entry) => void)[] = []
  sinks[stages.length] = (e) => out.push(e)
  for (let i = stages.length - 1; i >= 0; i--) sinks[i] = (e) => stages[i]!.push(e, sinks[i + 1]!)
  for (const e of entries) sinks[0]!(e)
  for (let i = 0; i < stages.length; i++) flushAll(stages[i]!, sinks[i + 1]!)
  return out
}

/** Values of mixed kinds: integers, floats, numbers as text, IPs, words, or none. */
const value: fc.Arbitrary<Value | undefined> = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }),
  fc.double({ min: -1000, max: 1000, noNaN: true }),
  fc.integer({ min: -1000, max: 1000 }).map(String),
  fc.tuple(fc.nat(255), fc.nat(255)).map(([a, b]) => parseIP(`10.0.${a}.${b}`)!),
  fc.constantFrom('alpha', 'beta', 'Gamma', '', 'zeta'),
  fc.constant(undefined),
)

describe('sort', () => {
  test('by a value, ascending and descending, as Array.sort with compareValues orders them (stable, missing last)', () => {
    fc.assert(
      fc.property(
        fc.array(value, { maxLength: 60 }),
        fc.boolean(),
        // IPs and numbers together are not a total order under compareValues: one kind of value per run, or mixed non-IPs.
        fc.constantFrom('numbers', 'ips', 'mixed'),
        (raw, desc, kind) => {
          const vals = raw.filter((v) => (kind === 'ips' ? v === undefined || typeof v === 'object' : typeof v !== 'object'))
          const pool = kind === 'numbers' ? vals.filter((v) => v === undefined || typeof v === 'number') : vals
          const entries = pool.map((v, i): Entry => ({ ts: i, tag: 'web', src: '', data: EMPTY, values: v === undefined ? new Map() : new Map([['x', v]]) }))
          const got = run(`sort by x ${desc ? 'desc' : 'asc'}`, entries)
          const present = entries.filter((e) => e.values.has('x'))
          const expected = [...present].sort((a, b) => (desc ? -1 : 1) * compareValues(a.values.get('x'), b.values.get('x')) || a.ts - b.ts)
          expect(got).toEqual([...expected, ...entries.filter((e) => !e.values.has('x'))])
        },
      ),
      { numRuns: 300 },
    )
  })

  test('by time (the default: descending), tag and src', () => {
    const entries = ['b', 'a', 'c'].map((tag, i): Entry => ({ ts: i * 10, tag, src: `10.0.0.${3 - i}`, data: EMPTY, values: new Map() }))
    expect(run('sort', entries).map((e) => e.ts)).toEqual([20, 10, 0])
    expect(run('sort asc', entries).map((e) => e.ts)).toEqual([0, 10, 20])
    expect(run('sort by tag', entries).map((e) => e.tag)).toEqual(['a', 'b', 'c'])
    expect(run('sort by TAG desc', entries).map((e) => e.tag)).toEqual(['c', 'b', 'a'])
    expect(run('sort by src', entries).map((e) => e.src)).toEqual(['10.0.0.1', '10.0.0.2', '10.0.0.3'])
  })

  test('the normal form', () => {
    expect(compileQueryNow('tag=web sort').text).toBe('tag=web sort by time desc')
    expect(compileQueryNow('tag=web sort  by count').text).toBe('tag=web sort by count asc')
    expect(compileQueryNow('tag=web sort by "odd name" desc').text).toBe('tag=web sort by "odd name" desc')
  })

  test.each([
    ['tag=web sort by', 15, '"by" needs'],
    ['tag=web sort up', 13, 'expected "by <value>"'],
    ['tag=web sort by x sideways', 18, 'unexpected "sideways"'],
    ['tag=web sort by x asc desc', 22, 'unexpected "desc"'],
  ])('%j is refused at %d', (query, position, reason) => {
    let error: unknown
    try {
      compileQueryNow(query)
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(QueryError)
    expect((error as QueryError).position).toBe(position)
    expect((error as QueryError).reason).toContain(reason)
  })

  test(`holding more than ${MAX_SORT_ENTRIES} entries ends the search with an error naming the bound`, () => {
    const values = new Map<string, Value>()
    const stage = compileQueryNow('tag=web sort by x').modules[0]!.stage(ENV)
    const drop = () => {}
    for (let i = 0; i < MAX_SORT_ENTRIES; i++) stage.push({ ts: i, tag: 'web', src: '', data: EMPTY, values }, drop)
    expect(() => stage.push({ ts: 0, tag: 'web', src: '', data: EMPTY, values }, drop)).toThrow(new SearchLimitError(`sort holds at most ${MAX_SORT_ENTRIES} entries and 512 MiB of their data: narrow the search, or condense it first (count by, stats, unique)`))
  })
})
