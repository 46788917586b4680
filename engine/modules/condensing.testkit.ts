// The stage runner and generated rows the tests of first/last and unique share: a query's modules run over entries
// in memory and flushed to the end; rows of small value sets, so that keys repeat, each value sometimes missing.
import fc from 'fast-check'
import type { Entry } from '../entry'
import { type RunEnv, flushAll } from '../module'
import { compileQueryNow } from '../query'
import type { Value } from '../value'

export const ENV: RunEnv = { resources: new Map(), extractors: new Map(), maxTracked: 1_000_000, start: 0, end: 0, renderer: 'text' }
const encoder = new TextEncoder()

export function run(query: string, entries: Entry[], env = ENV): Entry[] {
  const q = compileQueryNow(`tag=web ${query}`)
  const stages = q.modules.map((m) => m.stage(env))
  const out: Entry[] = []
  const sinks: ((e: Entry) => void)[] = []
  sinks[stages.length] = (e) => out.push(e)
  for (let i = stages.length - 1; i >= 0; i--) sinks[i] = (e) => stages[i]!.push(e, sinks[i + 1]!)
  for (const e of entries) sinks[0]!(e)
  for (let i = 0; i < stages.length; i++) flushAll(stages[i]!, sinks[i + 1]!)
  return out
}

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
