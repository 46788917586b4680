// Reading stored results by record (records.ts) against a plain computation over the records written: any slice of
// them, and any slice of those within a time range, read from working files and from blobs alike; a search's own
// results (in TS order, a summary without TS last) by binary search, an imported search's (any order, any member
// order, some without TS) by a scan.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { createDiskBlobStore } from '../blob'
import { type StoredResults, anyTsOf, readRecords, readRecordsWithin, readRecordsWithinFromEnd, resultSource, tsOf } from './records'
import { searchBlobKeys } from './repo'
import { ResultWriter, resultBytes, workFiles } from './results'

const tmp = mkdtempSync(join(tmpdir(), 'quarry-records-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))
const blobs = await createDiskBlobStore({ dataDir: join(tmp, 'blobs') })

const T0 = 1_767_225_600_000
let stored = 0

/** Writes the records as a search does; answers them read from working files and from blobs. */
async function store(lines: string[], imported: boolean): Promise<StoredResults[]> {
  const name = `r${stored++}`
  const files = workFiles(join(tmp, 'work'), name)
  const writer = new ResultWriter(files)
  for (const l of lines) writer.add(l)
  await writer.close()
  const record = { itemCount: writer.count, storeSize: writer.storeSize, import: imported ? { time: T0, batchName: '', batchInfo: '' } : null }
  const blob = searchBlobKeys(name)
  await blobs.put(blob.results, Bun.file(files.results).stream())
  await blobs.put(blob.index, Bun.file(files.index).stream())
  return [
    { record, work: files, blob: null },
    { record, work: null, blob },
  ]
}

const clamp = (x: number, n: number) => Math.max(0, Math.min(x, n))

/** Entry records at random times (several per millisecond), text with any characters. */
const entries = fc.array(fc.record({ at: fc.integer({ min: 0, max: 12 }), text: fc.string({ unit: 'grapheme', maxLength: 12 }) }), { maxLength: 40 })
/** A slice of records by position: readRecords takes any, readRecordsWithin positions from 0 (its callers check). */
const slice = fc.tuple(fc.integer({ min: -3, max: 45 }), fc.integer({ min: -3, max: 45 }))
const within = fc.tuple(fc.nat(20), fc.nat(45))
/** A time bound: 0 (unbounded) or a time around the records'. */
const bound = fc.oneof(fc.constant(0), fc.integer({ min: -1, max: 13 }).map((d) => T0 + d))

test('tsOf reads the TS a record begins with; anyTsOf also one elsewhere in it; neither invents one', () => {
  expect(tsOf('{"TS":"2026-01-01T00:00:00.001Z","Data":"x"}')).toBe(T0 + 1)
  expect(tsOf('{"Data":"x","TS":"2026-01-01T00:00:00Z"}')).toBeNull()
  expect(anyTsOf('{"Data":"x","TS":"2026-01-01T00:00:00Z"}')).toBe(T0)
  expect(anyTsOf('{"Count":3}')).toBeNull()
  expect(anyTsOf('{"TS":"not a time"}')).toBeNull()
  expect(anyTsOf('{"TS":5}')).toBeNull()
  expect(anyTsOf('not json')).toBeNull()
})

test("a search's own results: readRecords, readRecordsWithin and readRecordsWithinFromEnd equal slices of a plain filter", async () => {
  await fc.assert(
    fc.asyncProperty(entries, fc.boolean(), slice, within, bound, bound, async (es, summary, [first, last], [wFirst, wLast], from, to) => {
      const sorted = es.map((e) => ({ ts: T0 + e.at, text: e.text })).sort((a, b) => a.ts - b.ts)
      const lines = sorted.map((e) => JSON.stringify({ TS: new Date(e.ts).toISOString(), Data: e.text }))
      const times: (number | null)[] = sorted.map((e) => e.ts)
      if (summary) {
        lines.push(JSON.stringify({ Count: sorted.length }))
        times.push(null)
      }
      // The subset: from the first record at or after `from` to the first at or after `to`, a record without TS
      // counting as after every time (a bound of 0 is no bound).
      const at = (t: number) => (t === 0 ? -1 : times.findIndex((ts) => ts === null || ts >= t))
      const lo = from === 0 ? 0 : at(from) < 0 ? lines.length : at(from)
      const hi = to === 0 ? lines.length : at(to) < 0 ? lines.length : at(to)
      const subset = from !== 0 && to !== 0 && from >= to ? [] : lines.slice(lo, Math.max(lo, hi))
      for (const s of await store(lines, false)) {
        expect(await readRecords(blobs, s, first, last)).toEqual(lines.slice(clamp(first, lines.length), clamp(last, lines.length)))
        const got = await readRecordsWithin(blobs, s, from, to, wFirst, wLast)
        const want = subset.slice(wFirst, Math.max(wFirst, wLast))
        expect(got.lines).toEqual(want)
        expect(got.more).toBe(wFirst < wLast && wFirst + want.length < subset.length)
        // counted from the newest: the same positions over the reversed subset
        const back = await readRecordsWithinFromEnd(blobs, s, from, to, wFirst, wLast)
        const wantBack = [...subset].reverse().slice(wFirst, Math.max(wFirst, wLast))
        expect(back.lines).toEqual(wantBack)
        expect(back.more).toBe(wFirst < wLast && wFirst + wantBack.length < subset.length)
        expect(await new Response(await resultBytes(blobs, resultSource(s))).text()).toBe(lines.map((l) => `${l}\n`).join(''))
      }
    }),
    { numRuns: 100 },
  )
})

test("an imported search's results in any order: readRecordsWithin (and FromEnd, reversed) equal slices of a plain filter of those with a TS", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.record({ at: fc.option(fc.integer({ min: 0, max: 12 })), text: fc.string({ maxLength: 8 }), tsFirst: fc.boolean() }), { maxLength: 40 }),
      within,
      bound,
      bound,
      async (es, [first, last], from, to) => {
        const lines = es.map((e) => {
          const ts = e.at === null ? {} : { TS: new Date(T0 + e.at).toISOString() }
          return JSON.stringify(e.tsFirst ? { ...ts, Data: e.text } : { Data: e.text, ...ts })
        })
        const subset = lines.filter((_, i) => {
          const at = es[i]!.at
          return at !== null && (from === 0 || T0 + at >= from) && (to === 0 || T0 + at < to)
        })
        for (const s of await store(lines, true)) {
          const got = await readRecordsWithin(blobs, s, from, to, first, last)
          const want = subset.slice(first, Math.max(first, last))
          expect(got.lines).toEqual(want)
          expect(got.more).toBe(first < last && first + want.length < subset.length)
          const back = await readRecordsWithinFromEnd(blobs, s, from, to, first, last)
          const wantBack = [...subset].reverse().slice(first, Math.max(first, last))
          expect(back.lines).toEqual(wantBack)
          expect(back.more).toBe(first < last && first + wantBack.length < subset.length)
        }
      },
    ),
    { numRuns: 100 },
  )
})

test('a search whose results were lost has none to read', async () => {
  const s: StoredResults = { record: { itemCount: 0, storeSize: 0, import: null }, work: null, blob: null }
  expect(resultSource(s)).toEqual({ kind: 'none', size: 0 })
  expect(await new Response(await resultBytes(blobs, resultSource(s))).text()).toBe('')
  expect(await readRecords(blobs, s, 0, 10)).toEqual([])
})
