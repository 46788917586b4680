// The count of a query that is only `count` (EntriesRepo.count, SearchManager's counting branch): the same number as
// a plain loop over the generated entries, and the same stored record as the pipeline's count over a walk, for
// random tags and ranges, over rows alone, over segments alone and over both (part compacted); on SQLite and PostgreSQL.
import { afterAll, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { createDiskBlobStore } from '../blob'
import { createLogger } from '../runtime/log'
import { openTestStore } from '../../test/helpers'
import type { EntriesRepo, NewEntry } from './entries'
import { SearchManager } from './manager'
import { countOnly, isOnlyCount } from './runner'
import { SegmentedEntries } from './segments'
import { compileQuery } from '../../engine/query'

const tmp = mkdtempSync(join(tmpdir(), 'quarry-count-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

const TAGS = ['web', 'db', 'auth']
const T0 = 1_767_225_600_000

/** Entries of random tags at times 0..999 ms after T0 (several per millisecond), in a random ingest order. */
function generate(seed: number, n: number): NewEntry[] {
  let x = seed
  const next = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0)
  return Array.from({ length: n }, (_, i) => ({ ts: T0 + (next() % 1000), tag: TAGS[next() % 3]!, src: '10.0.0.1', data: Buffer.from(`entry ${i}`) }))
}

/** Hides the store's count, so that the manager counts by walking the entries through the pipeline. */
function withoutCount(e: EntriesRepo): EntriesRepo {
  return {
    ingest: (b, r) => e.ingest(b, r),
    allTags: () => e.allTags(),
    tagsNamed: (n) => e.tagsNamed(n),
    tagsNumbered: (i) => e.tagsNumbered(i),
    tagsFrom: (i) => e.tagsFrom(i),
    scan: (...a) => e.scan(...a),
    ping: () => e.ping(),
  }
}

test('countOnly: a plain count, alone or after one plain grep', () => {
  expect(isOnlyCount(compileQuery('tag=web count'))).toBe(true)
  expect(countOnly(compileQuery('tag=web grep "a b" | count'))?.needle).toEqual(Buffer.from('a b'))
  for (const q of ['tag=web grep -v x | count', 'tag=web grep -i x | count', 'tag=web grep a* | count', 'tag=web grep x | grep y | count', 'tag=web grep x', 'tag=web limit 3 | count'])
    expect(countOnly(compileQuery(q))).toBeNull()
  expect(isOnlyCount(compileQuery('tag=web grep x | count'))).toBe(false)
  expect(isOnlyCount(compileQuery('tag=web'))).toBe(false)
})

test('a plain count equals a loop and the walked count, over rows, segments and both', async () => {
  let round = 0
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 2 ** 31 }),
      fc.integer({ min: 0, max: 600 }),
      fc.constantFrom(0, 0.5, 1),
      fc.array(
        fc.record({
          tags: fc.subarray([...TAGS, 'none'], { minLength: 1 }).map((t) => t.join(',')),
          // grep | count: a needle in some entries, one across the boundary of two (`y 1` + `2`), one in none.
          needle: fc.constantFrom(null, '1', 'ry 2', '7', '2entry', 'zz'),
          all: fc.boolean(),
          from: fc.integer({ min: -10, max: 1010 }),
          span: fc.integer({ min: 0, max: 1100 }),
        }),
        { minLength: 1, maxLength: 4 },
      ),
      async (seed, n, compacted, queries) => {
        const dir = join(tmp, `r${round++}`)
        // SQLite, or a fresh PostgreSQL database with QUARRY_TEST_STORE=pg (test/run.sh).
        mkdirSync(dir, { recursive: true })
        const { store } = await openTestStore(dir)
        const blobs = await createDiskBlobStore({ dataDir: dir })
        const entries = new SegmentedEntries(store.entries, store.segments, blobs, { targetBytes: 400, maxEntries: 37 })
        const all = generate(seed, n)
        const cut = Math.floor(all.length * compacted)
        await entries.ingest(all.slice(0, cut))
        while ((await entries.compact({ all: true })) > 0) {}
        if (cut < all.length) await entries.ingest(all.slice(cut))
        const log = createLogger('warn', () => {})
        const manager = (e: EntriesRepo, name: string) =>
          new SearchManager({ entries: e, searches: store.searches, blobs, log, clock: Date.now, dataDir: join(dir, name), graceMs: 60_000, maxPerUser: 1000 })
        const fast = manager(entries, 'fast')
        const slow = manager(withoutCount(entries), 'slow')
        const answer = async (m: SearchManager, q: string, start: number, end: number) => {
          const s = await m.launch({
            uid: 1, gid: 0, client: 'test', clientExpires: 0, clientKind: 'session', userQuery: q, query: compileQuery(q), start, end,
            background: true, noHistory: true, metadata: null,
          })
          await m.settled()
          expect(s.record.error).toBe('')
          return m.readRecords(s, 0, 10)
        }
        try {
          for (const c of queries) {
            const q = `tag=${c.all ? '*' : c.tags} ${c.needle === null ? '' : `grep ${JSON.stringify(c.needle)} | `}count`
            const start = T0 + c.from
            const end = start + c.span
            const wanted = c.all ? TAGS : c.tags.split(',')
            const expected = all.filter((e) => e.ts >= start && e.ts < end && wanted.includes(e.tag) && (c.needle === null || Buffer.from(e.data).includes(c.needle))).length
            const ids = c.all ? null : [...(await store.entries.tagsNamed(wanted))].map((t) => t.id)
            expect(await entries.count(ids, start, end, c.needle === null ? undefined : Buffer.from(c.needle))).toBe(expected)
            const records = await answer(fast, q, start, end)
            expect(records).toEqual([JSON.stringify({ Count: expected })])
            expect(await answer(slow, q, start, end)).toEqual(records)
          }
        } finally {
          await fast.close()
          await slow.close()
          await store.close()
        }
      },
    ),
    { numRuns: 25 },
  )
}, 120_000)
