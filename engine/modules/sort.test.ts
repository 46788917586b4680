import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import type { Entry } from '../entry'
import { SearchLimitError } from '../errors'
import { FLUSH_SLICE } from '../module'
import { compileQueryNow } from '../query'
import { type Value, compareValues, parseIP } from '../value'
import { ENV, refusedAt, run } from './condensing.testkit'
import { MAX_SORT_ENTRIES, SORT_RUN, sortedInSlices } from './sort'

const EMPTY = new Uint8Array(0)

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
    expect(refusedAt(query, position)).toContain(reason)
  })

  test(`holding more than ${MAX_SORT_ENTRIES} entries ends the search with an error naming the bound`, () => {
    const values = new Map<string, Value>()
    const stage = compileQueryNow('tag=web sort by x').modules[0]!.stage(ENV)
    const drop = () => {}
    for (let i = 0; i < MAX_SORT_ENTRIES; i++) stage.push({ ts: i, tag: 'web', src: '', data: EMPTY, values }, drop)
    expect(() => stage.push({ ts: 0, tag: 'web', src: '', data: EMPTY, values }, drop)).toThrow(new SearchLimitError(`sort holds at most ${MAX_SORT_ENTRIES} entries and 512 MiB of their data: narrow the search, or condense it first (count by, stats, unique)`))
  })

  test('a large sort passes on what a plain stable sort gives, a bounded amount of work per flush step', () => {
    fc.assert(
      fc.property(
        fc.array(fc.option(fc.integer({ min: 0, max: 50 }), { nil: undefined }), { minLength: SORT_RUN * 2, maxLength: SORT_RUN * 5 }),
        fc.boolean(),
        (keys, desc) => {
          const entries = keys.map((k, i): Entry => ({ ts: i, tag: 'web', src: '', data: EMPTY, values: k === undefined ? new Map() : new Map([['x', k]]) }))
          const stage = compileQueryNow(`tag=web sort by x ${desc ? 'desc' : 'asc'}`).modules[0]!.stage(ENV)
          for (const e of entries) stage.push(e, () => {})
          const got: Entry[] = []
          const steps = stage.flush!((e) => got.push(e)) as Iterable<unknown>
          for (const _ of steps) expect(got.length % FLUSH_SLICE === 0 || got.length === 0).toBe(true)
          const present = entries.filter((e) => e.values.has('x'))
          const plain = present.sort((a, b) => (desc ? -1 : 1) * ((a.values.get('x') as number) - (b.values.get('x') as number)) || a.ts - b.ts)
          expect(got).toEqual([...plain, ...entries.filter((e) => !e.values.has('x'))])
        },
      ),
      // no shrinking: a failing case of thousands of entries would take minutes to shrink
      { numRuns: 20, endOnFailure: true },
    )
  })
})

describe('sortedInSlices', () => {
  test('orders as a stable Array.sort, and each step passes on at most FLUSH_SLICE items and compares a bounded number of times', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 30 }), { maxLength: SORT_RUN * 9, size: 'max' }), (keys) => {
        const items = keys.map((key, id) => ({ key, id }))
        let compares = 0
        const compare = (a: { key: number }, b: { key: number }) => {
          compares++
          return a.key - b.key
        }
        const got: typeof items = []
        const runs = Math.ceil(items.length / SORT_RUN)
        const perRun = SORT_RUN * Math.ceil(Math.log2(SORT_RUN) + 1)
        const perSlice = FLUSH_SLICE * (2 * Math.ceil(Math.log2(runs + 1)) + 2)
        const steps = sortedInSlices(items, compare, (item) => got.push(item))
        let step = 0
        for (;;) {
          const before = got.length
          compares = 0
          if (steps.next().done) break
          expect(got.length - before).toBeLessThanOrEqual(FLUSH_SLICE)
          expect(compares).toBeLessThanOrEqual(step < runs ? perRun : perSlice)
          step++
        }
        // A step per run, then one per slice; the last slice ends the generator instead of yielding (uncounted).
        expect(step).toBeGreaterThanOrEqual(runs + Math.ceil(items.length / FLUSH_SLICE) - 1)
        expect(got).toEqual([...items].sort((a, b) => a.key - b.key))
      }),
      { numRuns: 30, endOnFailure: true },
    )
  })
})

