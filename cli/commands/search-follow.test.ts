// The pauses of `quarry search run` while it follows a search (followPauseMs): the end of a search is seen at most
// 10 % (and at least 2 ms, at most 250 ms) after it happened, with a bounded number of looks.
import { expect, test } from 'bun:test'
import fc from 'fast-check'
import { followPauseMs } from './search'

test('the first look after a search ends comes within 10 % of its time (2 ms to 250 ms)', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 3_600_000 }), (endMs) => {
      let t = 0
      let looks = 1
      while (t < endMs) {
        const pause = followPauseMs(t)
        expect(pause).toBeGreaterThanOrEqual(2)
        expect(pause).toBeLessThanOrEqual(250)
        t += pause
        looks++
      }
      expect(t - endMs).toBeLessThanOrEqual(Math.max(2, Math.min(250, Math.ceil(endMs * 0.1) + 1)))
      // About 40 looks in the first second, then 4 a second.
      expect(looks).toBeLessThanOrEqual(70 + (4 * endMs) / 1000)
    }),
  )
})
