// What the tests of the condensing and processing modules share (sort, unique, first/last, eval, lookup): a query's
// modules run over entries in memory and flushed to the end, and rows of small value sets, so that keys repeat,
// each value sometimes missing.
import fc from 'fast-check'
import type { Entry } from '../entry'
import type { RunEnv } from '../module'
import { runStages, testEnv } from '../testing'
import type { Value } from '../value'

export { refusedAt } from '../testing'

export const ENV: RunEnv = testEnv()
const encoder = new TextEncoder()

/** The entries that leave the modules of `tag=web <query>` (the renderer left out). */
export const run = (query: string, entries: Entry[], env = ENV): Entry[] => runStages(`tag=web ${query}`, entries, env)

/** Rows of small value sets (so that keys repeat), each value sometimes missing. */
export const rows = fc.array(
  fc.record({
    a: fc.option(fc.constantFrom<Value>('x', 'y', 1, 2, '1'), { nil: undefined }),
    b: fc.option(fc.constantFrom<Value>('p', 'q'), { nil: undefined }),
    data: fc.constantFrom('one', 'two', 'three'),
    ts: fc.integer({ min: 0, max: 10_000 }),
  }),
  { maxLength: 80 },
)

export function entriesOf(data: { a?: Value; b?: Value; data: string; ts: number }[]): Entry[] {
  return data
    .sort((x, y) => x.ts - y.ts)
    .map((r) => {
      const values = new Map<string, Value>()
      if (r.a !== undefined) values.set('a', r.a)
      if (r.b !== undefined) values.set('b', r.b)
      return { ts: r.ts, tag: 'web', src: '', data: encoder.encode(r.data), values }
    })
}
