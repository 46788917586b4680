// The pipeline's counters against a plain loop over the same generated entries: per module and per time window,
// the entries and bytes in and out are what filtering the entries by hand gives, whether the head runs in the pipeline
// or elsewhere (HeadStages there: how far each entry went is counted with countHead, what came out pushed).
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import type { Entry } from './entry'
import { HeadStages, Pipeline } from './pipeline'
import { MAX_BUCKETS, statsBucketMs } from './pipeline-stats'
import { compileQueryNow } from './query'

const T0 = Date.parse('2026-01-01T00:00:00Z')
const env = (start: number, end: number, renderer = 'text') => ({ resources: new Map(), extractors: new Map(), maxTracked: 1000, start, end, renderer })
const entry = (ts: number, text: string): Entry => ({ ts, tag: 'web', src: '', data: new TextEncoder().encode(text), values: new Map() })

const genEntries = fc.array(fc.record({ offset: fc.integer({ min: 0, max: 3_599_999 }), text: fc.stringMatching(/^[ab ]{0,12}$/) }), { maxLength: 300 })

describe('pipeline stats', () => {
  test('bucket width: whole seconds, the range in at most MAX_BUCKETS', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10 * 365 * 86_400_000 }), (span) => {
        const w = statsBucketMs(T0, T0 + span)
        expect(w % 1000).toBe(0)
        expect(w).toBeGreaterThanOrEqual(1000)
        expect(Math.ceil(span / w)).toBeLessThanOrEqual(MAX_BUCKETS)
      }),
    )
  })

  test('per module and per window, in and out are the plain loop’s counts, head filters matched here or elsewhere', () => {
    fc.assert(
      fc.property(genEntries, fc.integer({ min: 1, max: 50 }), fc.boolean(), (raw, windows, elsewhere) => {
        const list = raw.map((r) => entry(T0 + r.offset, r.text)).sort((x, y) => x.ts - y.ts)
        const q = compileQueryNow('tag=web grep a | grep b | limit 1000')
        const p = new Pipeline(q, env(T0, T0 + 3_600_000), () => undefined)
        expect(p.filterHead).toBe(2)
        for (const e of list) {
          if (!elsewhere) p.push(e)
          else {
            const out: Entry[] = []
            const head = new HeadStages(q, env(T0, T0 + 3_600_000), p.head, (x) => out.push(x))
            head.push({ ...e, values: new Map() })
            p.countHead([e], Uint16Array.of(head.reached))
            for (const x of out) p.push(x, true)
          }
        }
        p.flush()
        // the plain loop: which entries reach each boundary, per window of the answer
        const width = 3_600_000 / windows
        const expected: { TS: number; rows: number[][] }[] = []
        for (let w = 0; w < windows; w++) {
          const inWindow = list.filter((e) => Math.floor((e.ts - T0) / width) === w || (w === windows - 1 && e.ts - T0 >= width * windows))
          const a = inWindow.filter((e) => new TextDecoder().decode(e.data).includes('a'))
          const ab = a.filter((e) => new TextDecoder().decode(e.data).includes('b'))
          const size = (es: Entry[]) => es.reduce((n, e) => n + e.data.byteLength, 0)
          expected.push({
              TS: T0 + width * w,
              rows: [
                [inWindow.length, a.length, size(inWindow), size(a)],
                [a.length, ab.length, size(a), size(ab)],
                [ab.length, ab.length, size(ab), size(ab)],
              ],
            })
        }
        // windows aligned to whole buckets only: the answer is exact there
        if ((3_600_000 / windows) % p.stats.bucketMs !== 0) return
        const got = p.stats.sets(windows, T0, T0 + 3_600_000).map((s) => ({
          TS: s.TS,
          rows: s.Stats.map((r) => [r.InputCount, r.OutputCount, r.InputBytes, r.OutputBytes]),
        }))
        expect(got).toEqual(expected)
        expect(p.stats.sets(1, T0, T0 + 3_600_000)[0]?.Stats.map((r) => r.Name)).toEqual(['grep', 'grep', 'limit'])
      }),
      { numRuns: 150 },
    )
  })

  test('the zoom: an entry at SetEnd counts in the last window; windows outside the range are listed with zeros', () => {
    const p = new Pipeline(compileQueryNow('tag=web'), env(T0, T0 + 600_000), () => undefined)
    for (let m = 0; m < 10; m++) p.push(entry(T0 + m * 60_000, 'x'))
    p.flush()
    // no module: the renderer is the one row
    const zoom = p.stats.sets(3, T0, T0 + 6 * 60_000)
    expect(zoom.map((s) => [s.TS - T0, s.Stats.map((r) => [r.Name, r.InputCount, r.OutputCount])])).toEqual([
      [0, [['text', 2, 2]]],
      [120_000, [['text', 2, 2]]],
      [240_000, [['text', 3, 3]]],
    ])
    expect(p.stats.sets(5, T0 + 3_600_000, T0 + 7_200_000)).toEqual(
      Array.from({ length: 5 }, (_, w) => ({ TS: T0 + 3_600_000 + w * 720_000, Stats: [{ Name: 'text', Args: '', Duration: 0, InputCount: 0, OutputCount: 0, InputBytes: 0, OutputBytes: 0 }] })),
    )
    expect(p.stats.summary()).toEqual([{ Name: 'text', Args: '', Duration: 0, InputCount: 10, OutputCount: 10, InputBytes: 10, OutputBytes: 10 }])
    expect(p.stats.overview(2, T0, T0 + 600_000)).toEqual([
      { TS: T0, Count: 5, Bytes: 5 },
      { TS: T0 + 300_000, Count: 5, Bytes: 5 },
    ])
  })

  test('the counters keep the finest power-of-two width in seconds that holds the entries in MAX_BUCKETS buckets', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 5000 }), (stepS, n) => {
        const day = 86_400_000
        const p = new Pipeline(compileQueryNow('tag=web'), env(T0, T0 + day), () => undefined)
        const offsets = Array.from({ length: n }, (_, i) => (i * stepS * 1000) % day)
        for (const o of offsets) p.push(entry(T0 + o, 'xy'))
        p.flush()
        // the plain computation: the first width 1 s, 2 s, 4 s... at which the entries fall in at most MAX_BUCKETS buckets
        let width = 1000
        while (new Set(offsets.map((o) => Math.floor(o / width))).size > MAX_BUCKETS) width *= 2
        expect(p.stats.bucketMs).toBe(width)
        expect(p.stats.filled()).toBe(new Set(offsets.map((o) => Math.floor(o / width))).size)
        // windows of 64 widths: exact, and as many as asked
        const windows = Math.floor(day / (64 * width)) || 1
        const span = windows * 64 * width
        const sets = p.stats.sets(windows, T0, T0 + span - width)
        expect(sets.length).toBe(windows)
        for (let w = 0; w < windows; w++) {
          const expected = offsets.filter((o) => Math.floor(o / (64 * width)) === w).length
          expect(sets[w]!.Stats[0]!.OutputCount).toBe(expected)
        }
        expect(p.stats.summary()[0]!.InputCount).toBe(n)
        expect(p.stats.summary()[0]!.OutputBytes).toBe(2 * n)
      }),
      { numRuns: 40 },
    )
  })

  test('a condensing module: count takes every entry in and gives one out', () => {
    const p = new Pipeline(compileQueryNow('tag=web grep x | count'), env(T0, T0 + 60_000, 'table'), () => undefined)
    for (let s = 0; s < 30; s++) p.push(entry(T0 + s * 1000, s % 3 === 0 ? 'x' : 'y'))
    p.flush()
    const rows = p.stats.summary()
    expect(rows.map((r) => [r.Name, r.InputCount, r.OutputCount])).toEqual([
      ['grep', 30, 10],
      ['count', 10, 1],
    ])
  })
})
