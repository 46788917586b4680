// Crash safety, short loop (bench/README.md, "Robustness"): see test/crash.ts. QUARRY_CRASH_ROUNDS sets the number of
// rounds (default 3), QUARRY_CRASH_SEED the first seed; test/crash-long.sh is the 50-round run.
import { describe, expect, test } from 'bun:test'
import { crashRound, crashSeeds } from './crash'

const rounds = Number(process.env.QUARRY_CRASH_ROUNDS ?? 3)

describe('SIGKILL under 100 concurrent writers', () => {
  for (const seed of crashSeeds(rounds)) {
    test(`seed ${seed}: acknowledged writes kept, store intact, blobs consistent after the sweep`, async () => {
      const result = await crashRound(seed)
      console.log(`crash: ${JSON.stringify(result)}`)
      // the round really wrote before the kill and really cut writes off
      expect(result.answered).toBeGreaterThan(0)
      expect(result.tracked).toBeGreaterThanOrEqual(10)
    }, 60_000)
  }
})
