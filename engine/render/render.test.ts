// Renderers: stored records in, the clients' shapes out, checked against plain loops over the same generated entries.
// The condensed entries are made here by a tiny condensing loop with count and sum aggregates of this test's own
// (the stats module's kinds are its own; any kind that follows the Aggregate contract re-buckets the same way).
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import type { Aggregate, AggregateKind } from '../aggregate'
import type { Entry } from '../entry'
import { QueryError } from '../errors'
import type { RunEnv } from '../module'
import { Pipeline } from '../pipeline'
import { compileQueryNow } from '../query'
import { bucketWindow } from './chart'
import { type RecordSource, type RenderRequest, registerAggregateKinds, registerAggregateLoader } from './records'
import type { CompiledRenderer } from './renderer'

class TestCount implements Aggregate {
  readonly op = 'test.count'
  constructor(public n = 0) {}
  add() {
    this.n++
  }
  merge(o: Aggregate) {
    this.n += (o as TestCount).n
  }
  result() {
    return this.n
  }
  save() {
    return this.n
  }
}
class TestSum implements Aggregate {
  readonly op = 'test.sum'
  constructor(
    public s = 0,
    public n = 0,
  ) {}
  add(v: unknown) {
    if (typeof v !== 'number') return
    this.s += v
    this.n++
  }
  merge(o: Aggregate) {
    this.s += (o as unknown as TestSum).s
    this.n += (o as unknown as { n: number }).n
  }
  result() {
    return this.s
  }
  save() {
    return [this.s, this.n]
  }
}
const kinds: AggregateKind[] = [
  { op: 'test.count', create: () => new TestCount(), load: (s) => new TestCount(s as number) },
  { op: 'test.sum', create: () => new TestSum(), load: (s) => new TestSum((s as number[])[0], (s as number[])[1]) },
]
registerAggregateKinds(kinds)

/** An aggregate that only a loader knows (its op is in its saved state, as the stats module's are). */
class TestMax implements Aggregate {
  readonly op = 'test.max'
  constructor(
    public m = Number.NEGATIVE_INFINITY,
    public n = 0,
  ) {}
  add(v: unknown) {
    if (typeof v !== 'number') return
    this.m = Math.max(this.m, v)
    this.n++
  }
  merge(o: Aggregate) {
    this.m = Math.max(this.m, (o as unknown as TestMax).m)
    this.n += (o as unknown as { n: number }).n
  }
  result() {
    return this.m
  }
  save() {
    return { op: this.op, m: this.m, n: this.n }
  }
}
registerAggregateLoader((saved) => {
  const s = saved as { op?: string; m?: number; n?: number }
  if (s?.op !== 'test.max') throw new Error('not mine')
  return new TestMax(s.m, s.n)
})

interface Raw {
  ts: number
  host: string
  bytes: number
}

const entryOf = (r: Raw): Entry => ({ ts: r.ts, tag: 'web', src: '10.0.0.1', data: new TextEncoder().encode(`${r.host} ${r.bytes}`), values: new Map<string, string | number>([['host', r.host], ['bytes', r.bytes]]) })

/** What stats count sum(bytes) by host [over span] emits: one condensed entry per window and host (span 0: one per host). */
function condense(raws: readonly Raw[], span: number, start: number, phase = 0): Entry[] {
  const groups = new Map<string, { start: number; host: string; count: TestCount; sum: TestSum }>()
  for (const r of raws) {
    const w = span > 0 ? Math.floor((r.ts - phase) / span) * span + phase : start
    const key = `${w}|${r.host}`
    let g = groups.get(key)
    if (!g) groups.set(key, (g = { start: w, host: r.host, count: new TestCount(), sum: new TestSum() }))
    g.count.add()
    g.sum.add(r.bytes)
  }
  return [...groups.values()]
    .sort((a, b) => a.start - b.start)
    .map((g) => ({
      ts: g.start,
      tag: 'web',
      src: '',
      data: new Uint8Array(0),
      values: new Map<string, string | number>([['host', g.host], ['count', g.count.n], ['sum', g.sum.s]]),
      condensed: { start: g.start, span, by: ['host'], aggregates: new Map<string, Aggregate>([['count', g.count], ['sum', g.sum]]) },
    }))
}

const env = (start: number, end: number, renderer: string): RunEnv => ({ resources: new Map(), extractors: new Map(), maxTracked: 10_000, start, end, renderer })

/** The records a query's renderer stores for these entries (through the real pipeline's renderer stage). */
function recordsOf(query: string, entries: readonly Entry[], start: number, end: number): { renderer: CompiledRenderer; records: string[] } {
  const q = compileQueryNow(query)
  const records: string[] = []
  const p = new Pipeline(q, env(start, end, q.renderer.name), (r) => records.push(r))
  for (const e of entries) p.push(e)
  p.flush()
  return { renderer: q.renderer, records }
}

const source = (records: readonly string[]): RecordSource => ({ count: records.length, read: async (a, b) => records.slice(a, b) })

/** A source that also finds records by time, as the search's index does (records in time order). */
const indexedSource = (records: readonly string[]): RecordSource => ({
  ...source(records),
  async readWithin(from, to, first, last) {
    const inside = records.filter((r) => {
      const ts = Date.parse(JSON.parse(r).TS)
      return (!from || ts >= from) && (!to || ts < to)
    })
    return { lines: inside.slice(first, last), more: inside.length > last }
  },
})

const T0 = Date.parse('2026-01-01T00:00:00Z')
const MIN = 60_000
const request = (r: Partial<RenderRequest> & { start: number; end: number }): RenderRequest => ({ first: 0, last: 100, from: 0, to: 0, updated: r.end, ...r })

async function answer(query: string, entries: readonly Entry[], start: number, end: number, req: Partial<RenderRequest> = {}) {
  const { renderer, records } = recordsOf(query, entries, start, end)
  return { records, ...(await renderer.answer!(source(records), request({ start, end, ...req }))) }
}

const hosts = ['a', 'b', 'c', 'd']
const raws = (n: number, span = 10 * MIN): Raw[] =>
  Array.from({ length: n }, (_, i) => ({ ts: T0 + Math.floor((i * span) / n), host: hosts[(i * 7) % 3]!, bytes: (i * 37) % 101 }))

describe('records', () => {
  test('every record starts with its TS (the results index reads it there)', () => {
    const rs = raws(30)
    for (const q of ['tag=web table', 'tag=web table host bytes', 'tag=web chart bytes by host', 'tag=web gauge bytes', 'tag=web stackgraph host host bytes']) {
      const plain = recordsOf(q, rs.map(entryOf), T0, T0 + 10 * MIN).records
      const condensed = recordsOf(q.replace('bytes', 'sum'), condense(rs, MIN, T0), T0, T0 + 10 * MIN).records
      for (const r of [...plain, ...condensed]) expect(r).toMatch(/^\{"TS":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"/)
    }
  })
})

describe('table', () => {
  test('plain entries: named columns, cells as text, rows by position and by time', async () => {
    const rs = raws(20)
    const a = await answer('tag=web table host bytes', rs.map(entryOf), T0, T0 + 10 * MIN, { first: 2, last: 5 })
    expect(a.entries).toEqual({
      Columns: ['host', 'bytes'],
      Rows: rs.slice(2, 5).map((r) => ({ TS: new Date(r.ts).toISOString(), Row: [r.host, String(r.bytes)] })),
    })
    expect(a.more).toBe(true)
    const from = T0 + 3 * MIN
    const to = T0 + 5 * MIN
    const z = await answer('tag=web table host bytes', rs.map(entryOf), T0, T0 + 10 * MIN, { from, to })
    const inRange = rs.filter((r) => r.ts >= from && r.ts < to)
    const want = inRange.map((r) => ({ TS: new Date(r.ts).toISOString(), Row: [r.host, String(r.bytes)] }))
    expect((z.entries as { Rows: unknown[] }).Rows).toEqual(want)
    expect(z.more).toBe(false)
    // the same through the index of a search, a page of it
    const { renderer, records } = recordsOf('tag=web table host bytes', rs.map(entryOf), T0, T0 + 10 * MIN)
    const paged = await renderer.answer!(indexedSource(records), request({ start: T0, end: T0 + 10 * MIN, from, to, first: 1, last: 3 }))
    expect((paged.entries as { Rows: unknown[] }).Rows).toEqual(want.slice(1, 3))
    expect(paged.more).toBe(true)
  })

  test('without columns: every value, in the order they first appear', async () => {
    const a = await answer('tag=web table', raws(3).map(entryOf), T0, T0 + 10 * MIN)
    expect((a.entries as { Columns: string[] }).Columns).toEqual(['host', 'bytes'])
  })

  test('condensed rows: one per key, merged over the range asked (a zoom) as a plain loop counts', async () => {
    const rs = raws(500)
    const entries = condense(rs, MIN, T0)
    for (const [from, to] of [[0, 0], [T0 + 2 * MIN, T0 + 7 * MIN], [T0 + 9 * MIN, T0 + 20 * MIN]] as const) {
      const a = await answer('tag=web table host count sum', entries, T0, T0 + 10 * MIN, { from, to })
      const expected = new Map<string, [number, number]>()
      for (const r of rs) {
        if (from && (r.ts < from || r.ts >= to)) continue
        const c = expected.get(r.host) ?? [0, 0]
        expected.set(r.host, [c[0] + 1, c[1] + r.bytes])
      }
      const rows = (a.entries as { Rows: { Row: string[] }[] }).Rows.map((r) => r.Row)
      expect(new Map(rows.map(([h, c, s]) => [h!, [Number(c), Number(s)]]))).toEqual(expected)
    }
  })

  test('aggregates a registered loader knows merge too (the stats module registers its loadAggregate)', async () => {
    const rs = raws(200)
    const entries = rs.map((r) => {
      const max = new TestMax()
      max.add(r.bytes)
      const start = Math.floor(r.ts / MIN) * MIN
      return { ts: start, tag: '', src: '', data: new Uint8Array(0), values: new Map<string, string | number>([['host', r.host], ['max', r.bytes]]), condensed: { start, span: MIN, by: ['host'], aggregates: new Map<string, Aggregate>([['max', max]]) } }
    })
    const a = await answer('tag=web table host max', entries, T0, T0 + 10 * MIN)
    const want = new Map<string, number>()
    for (const r of rs) want.set(r.host, Math.max(want.get(r.host) ?? Number.NEGATIVE_INFINITY, r.bytes))
    expect(new Map((a.entries as { Rows: { Row: string[] }[] }).Rows.map((r) => [r.Row[0]!, Number(r.Row[1])]))).toEqual(want)
  })

  test('downloads: csv with a header and numbers unprefixed, json objects', async () => {
    const e = (host: string, n: number): Entry => ({ ts: T0, tag: 'web', src: '', data: new Uint8Array(0), values: new Map<string, string | number>([['host', host], ['n', n]]) })
    const { renderer, records } = recordsOf('tag=web table host n', [e('=cmd()', -5), e('b,c', 2.5), e('-1', 3)], T0, T0 + MIN)
    const text = async (format: string) => {
      let s = ''
      for await (const chunk of renderer.download!(source(records), format, { start: T0, end: T0 + MIN })!) s += chunk
      return s
    }
    expect(await text('csv')).toBe('host,n\r\n\'=cmd(),-5\r\n"b,c",2.5\r\n-1,3\r\n')
    expect(JSON.parse(await text('json'))).toEqual([{ host: '=cmd()', n: -5 }, { host: 'b,c', n: 2.5 }, { host: '-1', n: 3 }])
    expect(renderer.downloads).toEqual(['csv', 'json'])
  })

  test('refused arguments name the module and the position', () => {
    for (const [q, pos] of [['tag=a table -save x host', 12], ['tag=a table -q', 12]] as const) {
      try {
        compileQueryNow(q)
        throw new Error('compiled')
      } catch (e) {
        expect(e).toBeInstanceOf(QueryError)
        expect((e as QueryError).position).toBe(pos)
        expect((e as QueryError).module).toBe('table')
      }
    }
  })
})

/**
 * What a plain loop gives at window w over [from, to): count and sum per host per window aligned on multiples of w, of
 * the entries whose stored window (of `span`, starting at phase plus its multiples) overlaps the range; a stored window that straddles `from` counts in the
 * first point (it cannot be split).
 */
function direct(rs: readonly Raw[], span: number, w: number, from: number, to: number, phase: number) {
  const out = new Map<string, Map<number, [number, number]>>()
  for (const r of rs) {
    const s = Math.floor((r.ts - phase) / span) * span + phase
    if (s + span <= from || s >= to) continue
    const b = Math.max(Math.floor((r.ts - phase) / w), Math.floor((from - phase) / w)) * w + phase
    const h = out.get(r.host) ?? new Map<number, [number, number]>()
    out.set(r.host, h)
    const c = h.get(b) ?? [0, 0]
    h.set(b, [c[0] + 1, c[1] + r.bytes])
  }
  return out
}

interface ChartEntries {
  Names: string[]
  KeyComps: { Keys: string[] }[]
  Categories: string[]
  Values: { TS: string; Data: (number | null)[] }[]
}

describe('chart', () => {
  test('re-bucketing the stored windows equals condensing at the coarser window directly (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ t: fc.integer({ min: 0, max: 3_599_999 }), host: fc.constantFrom('a', 'b', 'c'), bytes: fc.integer({ min: 0, max: 1000 }) }), { maxLength: 300 }),
        fc.constantFrom(1, 10, 60, 300) /* stored window, seconds */,
        fc.integer({ min: 1, max: 200 }) /* points asked */,
        fc.integer({ min: 0, max: 3_000_000 }),
        fc.integer({ min: 1, max: 3_600_000 }),
        fc.integer({ min: 0, max: 299 }) /* where stored windows start, seconds (taken modulo the window) */,
        async (xs, spanSeconds, points, zoomFrom, zoomLength, phaseSeconds) => {
          const span = spanSeconds * 1000
          const phase = (phaseSeconds * 1000) % span
          const rs = xs.map((x) => ({ ts: T0 + x.t, host: x.host, bytes: x.bytes })).sort((a, b) => a.ts - b.ts)
          const from = T0 + zoomFrom
          const to = Math.min(T0 + 3_600_000, from + zoomLength)
          const a = await answer('tag=web chart count by host', condense(rs, span, T0, phase), T0, T0 + 3_600_000, { first: 0, last: points, from, to })
          const chart = a.entries as ChartEntries
          const w = bucketWindow(span, from, to, points, phase)
          expect(chart.Values.length).toBeLessThanOrEqual(points)
          expect(chart.Values.length).toBe(rs.length === 0 ? 0 : Math.floor((to - 1 - phase) / w) - Math.floor((from - phase) / w) + 1)
          const expected = direct(rs, span, w, from, to, phase)
          for (const [i, name] of chart.Names.entries()) {
            const per = expected.get(name) ?? new Map<number, [number, number]>()
            for (const v of chart.Values) expect(v.Data[i] ?? null).toBe(per.get(Date.parse(v.TS))?.[0] ?? null)
          }
          // every host that has entries in the range is a series
          expect([...chart.Names].sort()).toEqual([...expected.keys()].sort())
        },
      ),
      { numRuns: 150 },
    )
  })

  test('one point per window, null where a series has none, keys and categories', async () => {
    const rs: Raw[] = [
      { ts: T0, host: 'a', bytes: 1 },
      { ts: T0 + 30_000, host: 'a', bytes: 2 },
      { ts: T0 + MIN, host: 'b', bytes: 5 },
      { ts: T0 + 2 * MIN + 1, host: 'a', bytes: 7 },
    ]
    const a = await answer('tag=web chart count sum by host', condense(rs, MIN, T0), T0, T0 + 3 * MIN, { last: 10 })
    expect(a.entries).toEqual({
      Names: ['count a', 'count b', 'sum a', 'sum b'],
      KeyComps: [{ Keys: ['a'] }, { Keys: ['b'] }, { Keys: ['a'] }, { Keys: ['b'] }],
      Categories: ['count', 'sum'],
      Values: [
        { TS: new Date(T0).toISOString(), Data: [2, null, 3, null] },
        { TS: new Date(T0 + MIN).toISOString(), Data: [null, 1, null, 5] },
        { TS: new Date(T0 + 2 * MIN).toISOString(), Data: [1, null, 7, null] },
      ],
    })
    // two points asked: windows of 2 minutes, aligned
    const two = (await answer('tag=web chart count by host', condense(rs, MIN, T0), T0, T0 + 3 * MIN, { last: 2 })).entries as ChartEntries
    expect(two.Values).toEqual([
      { TS: new Date(T0).toISOString(), Data: [2, 1] },
      { TS: new Date(T0 + 2 * MIN).toISOString(), Data: [1, null] },
    ])
  })

  test('limit n keeps the n-1 largest series and merges the rest into other, with the same math', async () => {
    const rs: Raw[] = []
    const sizes: Record<string, number> = { a: 9, b: 7, c: 5, d: 3, e: 2, f: 1 }
    for (const [h, n] of Object.entries(sizes)) for (let i = 0; i < n; i++) rs.push({ ts: T0 + i * 1000, host: h, bytes: 1 })
    rs.sort((x, y) => x.ts - y.ts)
    const c = (await answer('tag=web chart count by host limit 3', condense(rs, MIN, T0), T0, T0 + MIN, { last: 1 })).entries as ChartEntries
    expect(c.Names).toEqual(['a', 'b', 'other'])
    expect(c.Values).toEqual([{ TS: new Date(T0).toISOString(), Data: [9, 7, 5 + 3 + 2 + 1] }])
  })

  test('plain entries are condensed by the chart itself: mean of a value, count without one', async () => {
    const rs = raws(120, 2 * MIN)
    const start = T0
    const end = T0 + 2 * MIN
    const c = (await answer('tag=web chart', rs.map(entryOf), start, end, { last: 2 })).entries as ChartEntries
    expect(c.Names).toEqual(['count'])
    expect(c.Values.map((v) => v.Data[0])).toEqual([60, 60])
    const m = (await answer('tag=web chart bytes by host', rs.map(entryOf), start, end, { last: 1 })).entries as ChartEntries
    for (const [i, h] of m.Names.entries()) {
      const mine = rs.filter((r) => r.host === h)
      expect(m.Values[0]!.Data[i]).toBeCloseTo(mine.reduce((s, r) => s + r.bytes, 0) / mine.length, 9)
    }
  })

  test('downloads: csv of the stored windows, json objects', async () => {
    const rs: Raw[] = [
      { ts: T0, host: 'a', bytes: 1 },
      { ts: T0 + MIN, host: 'b', bytes: -5 },
    ]
    const { renderer, records } = recordsOf('tag=web chart sum by host', condense(rs, MIN, T0), T0, T0 + 2 * MIN)
    let csv = ''
    for await (const chunk of renderer.download!(source(records), 'csv', { start: T0, end: T0 + 2 * MIN })!) csv += chunk
    expect(csv).toBe(`TS,a,b\r\n${new Date(T0).toISOString()},1,\r\n${new Date(T0 + MIN).toISOString()},,-5\r\n`)
    let json = ''
    for await (const chunk of renderer.download!(source(records), 'json', { start: T0, end: T0 + 2 * MIN })!) json += chunk
    expect(JSON.parse(json)).toEqual([
      { TS: new Date(T0).toISOString(), a: 1, b: null },
      { TS: new Date(T0 + MIN).toISOString(), a: null, b: -5 },
    ])
  })
})

describe('gauge and numbercard', () => {
  test('values with Name, Magnitude, Min, Max; labels, bounds by constant and by value; keyed gauges', async () => {
    const rs = raws(50)
    const entries = condense(rs, 0, T0)
    const count = (h: string) => rs.filter((r) => r.host === h).length
    const sum = (h: string) => rs.filter((r) => r.host === h).reduce((s, r) => s + r.bytes, 0)
    const g = (await answer('tag=web numbercard count', entries, T0, T0 + 10 * MIN)).entries
    expect(g).toEqual(['a', 'b', 'c'].filter((h) => count(h) > 0).map((h) => ({ Name: h, Magnitude: count(h), Min: 0, Max: 0 })))
    const l = (await answer('tag=web gauge (sum 0 count "Bytes")', entries, T0, T0 + 10 * MIN)).entries as { Name: string; Magnitude: number; Min: number; Max: number }[]
    expect(l[0]).toEqual({ Name: `${l[0]!.Name.split(' ')[0]} Bytes`, Magnitude: sum(l[0]!.Name.split(' ')[0]!), Min: 0, Max: count(l[0]!.Name.split(' ')[0]!) })
    // a single total (no key)
    const total: Entry = { ts: T0, tag: '', src: '', data: new Uint8Array(0), values: new Map([['count', 42]]) }
    expect((await answer('tag=web gauge count', [total], T0, T0 + MIN)).entries).toEqual([{ Name: 'count', Magnitude: 42, Min: 0, Max: 0 }])
    expect((await answer('tag=web gauge (count 1 100)', [total], T0, T0 + MIN)).entries).toEqual([{ Name: 'count', Magnitude: 42, Min: 1, Max: 100 }])
  })

  test('bad items are refused at their position', () => {
    for (const [q, pos] of [['tag=a gauge', 11], ['tag=a gauge (x', 12], ['tag=a gauge (x 1)', 15], ['tag=a gauge x)', 12]] as const) {
      expect(() => compileQueryNow(q)).toThrow(QueryError)
      try {
        compileQueryNow(q)
      } catch (e) {
        expect((e as QueryError).position).toBe(pos)
      }
    }
  })
})

describe('stackgraph', () => {
  test('bars of parts with their magnitudes', async () => {
    const rs = raws(60)
    const entries = condense(rs, 0, T0)
    const s = (await answer('tag=web stackgraph host host count', entries, T0, T0 + 10 * MIN)).entries as { Key: string; Values: { Label: string; Value: number }[] }[]
    expect(s.map((x) => x.Key).sort()).toEqual(['a', 'b', 'c'])
    for (const bar of s) expect(bar.Values).toEqual([{ Label: bar.Key, Value: rs.filter((r) => r.host === bar.Key).length }])
    expect(() => compileQueryNow('tag=a stackgraph a b')).toThrow(QueryError)
  })
})

describe('the renderer of a query', () => {
  test.each([
    ['tag=a grep x', 'text'],
    ['tag=a count', 'table'],
    ['tag=a hex', 'hex'],
    ['tag=a pcap', 'pcap'],
    ['tag=a table host', 'table'],
    ['tag=a chart', 'chart'],
    ['tag=a numbercard count', 'numbercard'],
  ])('%j renders as %s', (q, name) => {
    expect(compileQueryNow(q).renderer.name).toBe(name)
  })

  test('normal forms', () => {
    expect(compileQueryNow('tag=a chart  count  by host,port limit 5').text).toBe('tag=a chart count by host port limit 5')
    expect(compileQueryNow('tag=a gauge (mean 0 100 "Avg x") count').text).toBe('tag=a gauge (mean 0 100 "Avg x") count')
    expect(compileQueryNow('tag=a table -nt host count').text).toBe('tag=a table -nt host count')
    // a label stays a quoted string, whatever it holds
    for (const q of ['tag=a gauge (mean "x")', 'tag=a gauge (mean "a \\"b\\" c\\\\d")']) expect(compileQueryNow(compileQueryNow(q).text).text).toBe(compileQueryNow(q).text)
    expect(compileQueryNow('tag=a gauge (mean "x")').text).toBe('tag=a gauge (mean "x")')
  })
})
