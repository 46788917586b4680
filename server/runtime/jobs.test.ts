// The scheduler of the periodic jobs over real leases (SQLite store here; the PostgreSQL leases have the same
// contract in test/store-contract.test.ts, and test/cluster/jobs.test.ts runs it on three real replicas).
import { afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Jobs } from './jobs'
import { createLogger } from './log'
import { createSqliteStore } from '../repos'

const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

function store() {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-jobs-'))
  const s = createSqliteStore(join(dir, 'quarry.db'))
  cleanups.push(() => (s.close(), rmSync(dir, { recursive: true, force: true })))
  return s
}
const quiet = createLogger('error', () => {})
function jobs(s: ReturnType<typeof store>, holder: string, ttlMs = 1500) {
  const j = new Jobs({ leases: s.leases, holder, ttlMs, log: quiet })
  cleanups.push(() => j.stop(0))
  return j
}

describe('periodic jobs', () => {
  test('two schedulers on one store: only the lease holder runs the job; when it stops, the other takes over', async () => {
    const s = store()
    const ran: string[] = []
    const a = jobs(s, 'A')
    const b = jobs(s, 'B')
    a.start({ name: 'sweep', everyMs: 100, run: async () => void ran.push('A') })
    await Bun.sleep(20)
    b.start({ name: 'sweep', everyMs: 100, run: async () => void ran.push('B') })
    await Bun.sleep(700)
    expect(ran.length).toBeGreaterThanOrEqual(2)
    expect(new Set(ran)).toEqual(new Set(['A']))
    expect([a.holds('sweep'), b.holds('sweep')]).toEqual([true, false])
    await a.stop(0)
    ran.length = 0
    for (let i = 0; i < 100 && !ran.includes('B'); i++) await Bun.sleep(20)
    expect(new Set(ran)).toEqual(new Set(['B']))
  })

  test('a failed run waits for the next interval, like one that went well, and a thrown error does not escape', async () => {
    const s = store()
    let runs = 0
    jobs(s, 'A', 300).start({
      name: 'failing',
      everyMs: 60_000,
      run: () => {
        runs++
        throw new Error('the bucket is unreachable')
      },
    })
    // asked every 100 ms (a third of the lease): without the record of the failed run it would run at each ask
    await Bun.sleep(600)
    expect(runs).toBe(1) // a job never run is due at once; the failure is recorded as its run
  })
})
