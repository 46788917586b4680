import { describe, expect, test } from 'bun:test'
import { FLUSH_SLICE } from './module'
import { HeadStages, Pipeline, unreadAfter } from './pipeline'
import { compileQueryNow } from './query'
import { entriesOf, runQuery, testEnv } from './testing'
import { TransferReader, TransferWriter, readEntryOut, writeEntryOut } from './transfer'

describe('the pipeline', () => {
  // What condensing stages hold comes out a slice at a time, so that a search gives the event loop a turn between
  // slices (the manager runs flushSteps with its step checks): no step passes on more than FLUSH_SLICE entries.
  test.each(['stats count by k', 'count by k', 'sort by k', 'last k', 'stats count by k | sort by count'])(
    '%s flushes in slices of at most FLUSH_SLICE entries',
    (modules) => {
      const keys = 5 * FLUSH_SLICE + 17
      const q = compileQueryNow(`tag=t kv k | ${modules}`)
      const records: string[] = []
      const p = new Pipeline(q, testEnv({ renderer: q.renderer.name }), (r) => records.push(r))
      for (const e of entriesOf(Array.from({ length: keys }, (_, i) => ({ data: `k=${i}` })))) p.push(e)
      expect(records).toHaveLength(0)
      const slices: number[] = []
      let before = 0
      for (const _ of p.flushSteps()) {
        slices.push(records.length - before)
        before = records.length
      }
      slices.push(records.length - before)
      expect(records).toHaveLength(keys)
      expect(Math.max(...slices)).toBeLessThanOrEqual(FLUSH_SLICE)
      expect(slices.length).toBeGreaterThan(keys / FLUSH_SLICE)
    },
  )
})

describe('the head run elsewhere sends back only the values the rest reads', () => {
  const lines = Array.from({ length: 500 }, (_, i) => ({
    data: `host=h${i % 7} ms=${(i * 37) % 101} path=/p${i % 3} user=u${i % 11}`,
  }))
  const records = (query: string, viaHead: boolean) => {
    const q = compileQueryNow(query)
    // A fixed range: entries a condensing stage makes carry its end as their time.
    const env = testEnv({ renderer: q.renderer.name, start: 1_700_000_000_000, end: 1_700_000_100_000 })
    const out: string[] = []
    const p = new Pipeline(q, env, (r) => out.push(r))
    const entries = entriesOf(lines)
    if (!viaHead) for (const e of entries) p.push(e)
    else {
      // As a worker does (server/search/match-worker.ts): the head's output encoded with `keep`, decoded here.
      const keep = p.headKeeps()
      const w = new TransferWriter()
      let at = 0
      const head = new HeadStages(q, env, p.head, (e) => writeEntryOut(w, at, e, entries[at]!, keep === null ? undefined : new Set(keep)))
      for (; at < entries.length; at++) head.push({ ...entries[at]!, values: new Map() })
      const r = new TransferReader(w.finish())
      while (r.more) p.push(readEntryOut(r, (i) => entries[i]!).entry, true)
    }
    for (const _ of p.flushSteps());
    return out
  }

  test.each([
    ['tag=t kv host ms path | count', []],
    ['tag=t kv host ms path user | stats count by host', ['host']],
    ['tag=t kv host ms path | stats p95(ms) mean(ms) by host path', ['ms', 'host', 'path']],
    ['tag=t kv host ms | sum ms by host', ['ms', 'host']],
    ['tag=t kv host ms path | stats count by host | table', ['host']],
  ])('%s keeps %j and answers as when every value came back', (query, keeps) => {
    const q = compileQueryNow(query)
    expect(new Pipeline(q, testEnv({ renderer: q.renderer.name }), () => undefined).headKeeps()?.toSorted()).toEqual(keeps.toSorted())
    const direct = records(query, false)
    expect(direct.length).toBeGreaterThan(0)
    expect(records(query, true)).toEqual(direct)
  })

  test.each(['tag=t kv host ms | table host ms', 'tag=t kv host ms | sort by ms | stats count by host', 'tag=t kv host ms'])(
    '%s keeps every value (what follows the head may read any)',
    (query) => {
      const q = compileQueryNow(query)
      expect(new Pipeline(q, testEnv({ renderer: q.renderer.name }), () => undefined).headKeeps()).toBeNull()
      expect(records(query, true)).toEqual(records(query, false))
    },
  )
})

describe('values nothing reads are not set', () => {
  const unreadOf = (query: string, i: number) => [...unreadAfter(compileQueryNow(query), i)].sort()
  test('known only up to a module that replaces every value, from what the modules between read', () => {
    expect(unreadOf('tag=t kv a b c | count', 0)).toEqual(['a', 'b', 'c'])
    expect(unreadOf('tag=t kv a b c | stats sum(b) by a', 0)).toEqual(['c'])
    expect(unreadOf('tag=t kv a b c | eval d = c + 1 | stats count by d', 0)).toEqual(['a', 'b'])
    expect(unreadOf('tag=t kv a b c | sort by a | stats count by b', 0)).toEqual(['c'])
    expect(unreadOf('tag=t kv a b c | stats count by a | table', 0)).toEqual(['b', 'c'])
    // Nothing replaces the values: the renderer shows them all.
    expect(unreadOf('tag=t kv a b c | table a', 0)).toEqual([])
    expect(unreadOf('tag=t kv a b c', 0)).toEqual([])
  })

  test('an inline filter on an unread value still applies, and the answer is the same', () => {
    const lines = Array.from({ length: 300 }, (_, i) => ({ data: `a=${i % 5} b=${i % 3} c=${i}` }))
    const q = 'tag=t kv a b==1 c | stats count by a'
    expect(unreadOf(q, 0)).toEqual(['b', 'c'])
    const { records } = runQuery(q, lines, { start: 1, end: 2 })
    // The same counts by a plain loop.
    const counts = new Map<string, number>()
    for (let i = 0; i < 300; i++) if (i % 3 === 1) counts.set(String(i % 5), (counts.get(String(i % 5)) ?? 0) + 1)
    const got = new Map(records.map((r) => JSON.parse(r)).map((r: { Enumerated: { Name: string; ValueStr: string }[] }) => [r.Enumerated.find((v) => v.Name === 'a')!.ValueStr, Number(r.Enumerated.find((v) => v.Name === 'count')!.ValueStr)]))
    expect(got).toEqual(counts)
  })
})
