// The aggregate kinds against plain loops over generated values, their merge (two halves merged equal the whole)
// and their save/load round trip, with fast-check; percentiles against exact sorted-array quantiles within the
// sketch's stated relative error.
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import type { Aggregate } from '../../aggregate'
import { SearchLimitError } from '../../errors'
import { DurationValue, IPValue, TimeValue, type Value, parseIP, valueText } from '../../value'
import { MAX_UNIQUE, RELATIVE_ACCURACY, UniqueCountAggregate, aggregateKinds, createAggregate, loadAggregate, percentileOf } from './aggregates'

const OPS = ['count', 'sum', 'total', 'mean', 'min', 'max', 'stddev', 'variance', 'unique_count', 'first', 'last', 'median', 'p90', 'p99.9']

/**
 * Floats whose magnitudes (zero aside) stay within a ratio the sketch holds without collapsing bins (aggregates.ts:
 * about 10^17): from 1e-6 to 1e9.
 */
const doubleArb = (min: number, max: number) => fc.double({ min, max, noNaN: true }).map((x) => (Math.abs(x) < 1e-6 ? 0 : x))

/** Values as modules give them: numbers, numeric text, text that is no number. */
const valueArb = fc.oneof(
  fc.integer({ min: -1_000_000, max: 1_000_000 }),
  doubleArb(-1e6, 1e6),
  fc.integer({ min: -500, max: 500 }).map(String),
  fc.constantFrom('abc', '', 'x y', '12ab'),
)
/** Entries: a value and a time, in time order. */
const seriesArb = fc.array(fc.tuple(valueArb, fc.integer({ min: 0, max: 1000 })), { maxLength: 200 }).map((xs) => {
  let t = 0
  return xs.map(([v, dt]) => ({ v: v as Value, ts: (t += dt) }))
})

function aggregate(op: string, xs: { v: Value; ts: number }[]): Aggregate {
  const a = createAggregate(op)!
  for (const x of xs) a.add(x.v, x.ts)
  return a
}

/** The number a value reads as, as a plain loop would find it. */
const num = (v: Value): number | null => {
  if (typeof v === 'number') return v
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return Number(v)
  return null
}

/** A result compared with a tolerance relative to the magnitudes that made it. */
function close(actual: number, expected: number, scale = Math.abs(expected)) {
  if (Number.isNaN(expected)) expect(actual).toBeNaN()
  else expect(Math.abs(actual - expected)).toBeLessThanOrEqual(1e-9 * Math.max(1, scale))
}

/** Results of two aggregates: exactly equal, or within float rounding for those that add floats. */
function sameResult(op: string, a: Aggregate, b: Aggregate, scale: number) {
  expect(a.n).toBe(b.n)
  const x = a.result()
  const y = b.result()
  if (typeof x === 'number' && typeof y === 'number' && ['sum', 'total', 'mean', 'stddev', 'variance'].includes(op)) close(x, y, scale)
  else expect(x).toEqual(y)
}

describe('each kind against a plain loop', () => {
  test('count, sum, total, mean, min, max, stddev, variance, unique_count, first, last', () => {
    fc.assert(
      fc.property(seriesArb, (xs) => {
        const nums = xs.map((x) => num(x.v)).filter((n): n is number => n !== null)
        const scale = nums.reduce((s, n) => s + Math.abs(n), 0)
        const n = nums.length
        const sum = nums.reduce((s, x) => s + x, 0)
        const mean = sum / n
        // two passes: the mean, then the squared deviations
        const variance = nums.reduce((s, x) => s + (x - mean) ** 2, 0) / n
        expect(aggregate('count', xs).result()).toBe(xs.length)
        close(aggregate('sum', xs).result() as number, sum, scale)
        close(aggregate('total', xs).result() as number, sum, scale)
        if (n === 0) {
          for (const op of ['mean', 'min', 'max', 'stddev', 'variance']) {
            expect(aggregate(op, xs).n).toBe(0)
            expect(aggregate(op, xs).result()).toBeNaN()
          }
        } else {
          close(aggregate('mean', xs).result() as number, mean, scale / n)
          expect(aggregate('min', xs).result()).toBe(Math.min(...nums))
          expect(aggregate('max', xs).result()).toBe(Math.max(...nums))
          const sq = nums.reduce((s, x) => s + x * x, 0)
          close(aggregate('variance', xs).result() as number, variance, sq / n)
          close(aggregate('stddev', xs).result() as number, Math.sqrt(variance), Math.sqrt(sq / n))
        }
        expect(aggregate('unique_count', xs).result()).toBe(new Set(xs.map((x) => valueText(x.v))).size)
        if (xs.length > 0) {
          expect(aggregate('first', xs).result()).toEqual(xs[0]!.v)
          expect(aggregate('last', xs).result()).toEqual(xs.at(-1)!.v)
        }
      }),
      { numRuns: 300 },
    )
  })

  test('an entry without the value is counted by count and skipped by the others', () => {
    for (const op of OPS) {
      const a = createAggregate(op)!
      a.add(undefined, 1)
      expect(a.n).toBe(op === 'count' ? 1 : 0)
    }
  })

  test('min and max of times and durations stay times and durations; first and last keep any value', () => {
    const times = [new TimeValue(3000), new TimeValue(1000), new TimeValue(2000)]
    expect(aggregate('min', times.map((v, ts) => ({ v, ts }))).result()).toEqual(new TimeValue(1000))
    expect(aggregate('max', [new DurationValue(5), new DurationValue(9)].map((v, ts) => ({ v, ts }))).result()).toEqual(new DurationValue(9))
    const ip = parseIP('10.0.0.1')!
    expect(aggregate('first', [{ v: ip, ts: 5 }, { v: 'x', ts: 6 }]).result()).toEqual(ip)
  })

  test('first and last go by time, not by the order of addition', () => {
    expect(aggregate('first', [{ v: 'late', ts: 9 }, { v: 'early', ts: 1 }]).result()).toBe('early')
    expect(aggregate('last', [{ v: 'late', ts: 9 }, { v: 'early', ts: 1 }]).result()).toBe('late')
    // ties: the first added is first, the last added is last
    expect(aggregate('first', [{ v: 'a', ts: 1 }, { v: 'b', ts: 1 }]).result()).toBe('a')
    expect(aggregate('last', [{ v: 'a', ts: 1 }, { v: 'b', ts: 1 }]).result()).toBe('b')
  })

  test('unique_count tells values apart by their text; long ones by their hash', () => {
    const long = (c: string) => 'v'.repeat(100) + c
    const a = aggregate('unique_count', [1, '1', 'a', long('x'), long('y'), long('x')].map((v, ts) => ({ v, ts })))
    expect(a.result()).toBe(4)
  })
})

describe('percentiles (DDSketch)', () => {
  const exact = (sorted: number[], q: number) => sorted[Math.floor(q * (sorted.length - 1))]!
  const numbers = fc.oneof(
    fc.array(doubleArb(1e-3, 1e9), { minLength: 1, maxLength: 2000 }),
    fc.array(doubleArb(-1e6, 1e6), { minLength: 1, maxLength: 2000 }),
    fc.array(fc.integer({ min: -1000, max: 100_000 }), { minLength: 1, maxLength: 2000 }),
  )

  test(`pNN, median and percentile(x, q) are within ${RELATIVE_ACCURACY * 100} % of the exact quantile`, () => {
    fc.assert(
      fc.property(numbers, fc.double({ min: 0, max: 100, noNaN: true }), (xs, p) => {
        const sorted = [...xs].sort((a, b) => a - b)
        for (const [op, q, arg] of [
          ['p50', 0.5, undefined],
          ['p90', 0.9, undefined],
          ['p95', 0.95, undefined],
          ['p99', 0.99, undefined],
          ['p99.9', 0.999, undefined],
          ['median', 0.5, undefined],
          ['percentile', p / 100, p],
        ] as const) {
          const a = createAggregate(op, arg)!
          for (const x of xs) a.add(x)
          const want = exact(sorted, q)
          const got = a.result() as number
          expect(Math.abs(got - want)).toBeLessThanOrEqual(RELATIVE_ACCURACY * Math.abs(want) + 1e-12)
        }
      }),
      { numRuns: 150 },
    )
  })

  test('the 0th and 100th percentiles are the exact min and max; values that are not finite are skipped', () => {
    const lo = createAggregate('percentile', 0)!
    const hi = createAggregate('percentile', 100)!
    for (const x of [3.3, -7.25, 1e6 + 0.5, Number.POSITIVE_INFINITY, Number.NaN, 'x']) {
      lo.add(x)
      hi.add(x)
    }
    expect(lo.result()).toBe(-7.25)
    expect(hi.result()).toBe(1e6 + 0.5)
    expect(hi.n).toBe(3)
  })

  test('pNN ops are read from their name', () => {
    expect(percentileOf('p95')).toBe(0.95)
    expect(percentileOf('p99.9')).toBeCloseTo(0.999, 12)
    expect(percentileOf('p0')).toBeNull()
    expect(percentileOf('p100')).toBeNull()
    expect(percentileOf('pp')).toBeNull()
    expect(createAggregate('p101')).toBeUndefined()
  })
})

describe('merge and save/load', () => {
  const opArb = fc.constantFrom(...OPS)

  test('aggregating two halves and merging them equals aggregating all (percentiles: the same bins, so the same answer)', () => {
    fc.assert(
      fc.property(opArb, seriesArb, fc.nat(), (op, xs, cut) => {
        const k = xs.length === 0 ? 0 : cut % (xs.length + 1)
        const all = aggregate(op, xs)
        const merged = aggregate(op, xs.slice(0, k))
        merged.merge(aggregate(op, xs.slice(k)))
        const scale = xs.reduce((s, x) => s + Math.abs(num(x.v) ?? 0) ** (op === 'variance' || op === 'stddev' ? 2 : 1), 0)
        sameResult(op, merged, all, op === 'stddev' ? Math.sqrt(scale) : scale)
      }),
      { numRuns: 1000 },
    )
  })

  test('negative values survive a merge of sketches (the library merge drops them: DataDog/sketches-js#22)', () => {
    const a = createAggregate('p50')!
    const b = createAggregate('p50')!
    for (const x of [5, 6, 7]) a.add(x)
    for (const x of [-10, -20, -30, -40, -50]) b.add(x)
    a.merge(b)
    // sorted: -50 -40 -30 -20 -10 5 6 7; rank floor(0.5 * 7) = 3: -20
    expect(Math.abs((a.result() as number) + 20)).toBeLessThanOrEqual(20 * RELATIVE_ACCURACY)
  })

  test('save() is JSON and load gives back an equal aggregate, which merges on', () => {
    fc.assert(
      fc.property(opArb, seriesArb, seriesArb, (op, xs, ys) => {
        const a = aggregate(op, xs)
        const json = JSON.parse(JSON.stringify(a.save()))
        const back = loadAggregate(json)
        expect(back.op).toBe(a.op)
        expect(back.save()).toEqual(json)
        sameResult(op, back, a, 1)
        back.merge(aggregate(op, ys))
        a.merge(aggregate(op, ys))
        sameResult(op, back, a, 1)
      }),
      { numRuns: 500 },
    )
  })

  test('every value type survives save/load in first and last', () => {
    const values: Value[] = ['t', 1.5, -3, true, parseIP('2001:db8::1')!, parseIP('10.1.2.3')!, new TimeValue(1234), new DurationValue(5e9), Uint8Array.of(0, 255, 7)]
    for (const v of values) {
      const a = createAggregate('last')!
      a.add(v, 1)
      const back = loadAggregate(JSON.parse(JSON.stringify(a.save())))
      expect(back.result()).toEqual(v)
      if (v instanceof IPValue) expect((back.result() as IPValue).bytes).toEqual(v.bytes)
    }
  })

  test('total keeps the running total of the earlier window when merged', () => {
    const kind = aggregateKinds.get('total')!
    const first = kind.load({ op: 'total', n: 2, sum: 5, prior: 10, since: 1000 })
    const second = kind.load({ op: 'total', n: 1, sum: 4, prior: 15, since: 2000 })
    first.merge(second)
    expect(first.result()).toBe(19)
    const reversed = kind.load({ op: 'total', n: 1, sum: 4, prior: 15, since: 2000 })
    reversed.merge(kind.load({ op: 'total', n: 2, sum: 5, prior: 10, since: 1000 }))
    expect(reversed.result()).toBe(19)
  })

  test('a saved aggregate that is none is refused', () => {
    for (const bad of [null, 3, {}, { op: 'nosuch' }, { op: 'count' }, { op: 'count', n: 'x' }, { op: 'p50', q: 2 }, { op: 'unique_count', n: 1, seen: [1] }])
      expect(() => loadAggregate(bad)).toThrow()
    const p = createAggregate('p50')!
    p.add(3)
    const saved = p.save() as Record<string, unknown>
    expect(() => loadAggregate({ ...saved, count: 5 })).toThrow('does not add up')
  })

  test(`a merge of unique_counts past their limit (${MAX_UNIQUE} unless told) is a SearchLimitError`, () => {
    const a = new UniqueCountAggregate(5)
    for (const v of ['a', 'b', 'c', 'd', 'e']) a.add(v)
    const b = createAggregate('unique_count')!
    b.add('a')
    a.merge(b)
    expect(a.result()).toBe(5)
    b.add('new')
    expect(() => a.merge(b)).toThrow(SearchLimitError)
    expect((createAggregate('unique_count') as UniqueCountAggregate).limit).toBe(MAX_UNIQUE)
    expect(() => loadAggregate({ op: 'unique_count', n: 1, seen: Array.from({ length: MAX_UNIQUE + 1 }, () => '=x') })).toThrow()
  })

  test('aggregates of different kinds do not merge', () => {
    expect(() => createAggregate('sum')!.merge(createAggregate('mean')!)).toThrow()
    expect(() => createAggregate('p50')!.merge(createAggregate('p90')!)).toThrow()
  })
})
