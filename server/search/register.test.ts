// Registering a segment deletes exactly the rows it holds, or nothing (SegmentsRepo.register), whether their ids fill
// a range (deleted as one range) or not (one by one); and ingest numbers rows in batch order, INSERT_ROWS at a time
// or one by one. Through the real store of the run (SQLite, or PostgreSQL in the pg pass).
import { afterAll, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openTestStore } from '../../test/helpers'
import { fillsRange } from './segments'

const tmp = mkdtempSync(join(tmpdir(), 'quarry-register-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

const T0 = 1_767_225_600_000
const meta = (key: string, ids: number[]) => ({
  key,
  count: ids.length,
  bytes: 1,
  min: { ts: T0, tagId: 1, id: Math.min(...ids) },
  max: { ts: T0, tagId: 1, id: Math.max(...ids) },
})

test('fillsRange: every integer of the range, each once', () => {
  expect(fillsRange([3, 1, 2], 1, 3)).toBe(true)
  expect(fillsRange([5], 5, 5)).toBe(true)
  expect(fillsRange([1, 3], 1, 3)).toBe(false)
  expect(fillsRange([1, 1, 3], 1, 3)).toBe(false)
  expect(fillsRange([], Number.POSITIVE_INFINITY, 0)).toBe(false)
})

test('a batch is numbered in its order across whole statements and the rest; a registration deletes exactly its rows or none', async () => {
  const dir = join(tmp, 'store')
  mkdirSync(dir, { recursive: true })
  const { store, rows } = await openTestStore(dir)
  try {
    // 150 entries: two statements of 64 rows, then 22 one by one.
    const n = 150
    await store.entries.ingest(Array.from({ length: n }, (_, i) => ({ ts: T0 + i, tag: 'web', src: i % 2 ? '10.0.0.1' : '', data: Buffer.from(`entry ${i}`) })))
    const stored = (await rows('SELECT id, ts, src, data FROM entries ORDER BY id')) as { id: number; ts: number; src: string; data: Uint8Array }[]
    expect(stored.length).toBe(n)
    const first = Number(stored[0]!.id)
    stored.forEach((r, i) => {
      expect(Number(r.id)).toBe(first + i)
      expect(Number(r.ts)).toBe(T0 + i)
      expect(r.src).toBe(i % 2 ? '10.0.0.1' : '')
      expect(Buffer.from(r.data).toString()).toBe(`entry ${i}`)
    })
    const left = async () => ((await rows('SELECT id FROM entries ORDER BY id')) as { id: number }[]).map((r) => Number(r.id))
    const segments = async () => Number(((await rows('SELECT count(*) AS n FROM entry_segments')) as { n: number }[])[0]!.n)
    const id = (i: number) => first + i

    // A range whose middle row is gone: refused, nothing deleted, nothing registered.
    expect(await store.segments.register(meta('segments/a', [id(10)]), [id(10)], Date.now())).toBe(true)
    const range = Array.from({ length: 21 }, (_, k) => id(k))
    expect(await store.segments.register(meta('segments/b', range), range, Date.now())).toBe(false)
    expect(await left()).toEqual(Array.from({ length: n - 1 }, (_, k) => id(k < 10 ? k : k + 1)))
    expect(await segments()).toBe(1)

    // The same range without the gone row (not a range any more): its rows one by one.
    const gapped = range.filter((x) => x !== id(10))
    expect(await store.segments.register(meta('segments/c', gapped), gapped, Date.now())).toBe(true)
    // A whole range: exactly its rows, the rows around it stay.
    const whole = Array.from({ length: 50 }, (_, k) => id(30 + k))
    expect(await store.segments.register(meta('segments/d', whole.toReversed()), whole.toReversed(), Date.now())).toBe(true)
    expect(await left()).toEqual([...Array.from({ length: 9 }, (_, k) => id(21 + k)), ...Array.from({ length: n - 80 }, (_, k) => id(80 + k))])
    expect(await segments()).toBe(3)
  } finally {
    await store.close()
  }
})
