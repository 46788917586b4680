import { describe, expect, test } from 'bun:test'
import { FLUSH_SLICE } from './module'
import { Pipeline } from './pipeline'
import { compileQueryNow } from './query'
import { entriesOf, testEnv } from './testing'

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
