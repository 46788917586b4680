// quarry ingest against a server whose ingest rate it outruns (QUARRY_INGEST_RATE): a refused batch (429 with
// Retry-After) is sent again after the wait the server names, so the whole input is stored exactly once; with a short
// --retry-for it gives up instead, saying how much earlier batches stored (docs/cli.md, "Ingest").
// Found on a fast machine: bench/ingest.sh's `quarry ingest` of 1,000,000 lines stopped at 915,000 with the 429.
import { describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { retryAfterMs } from '../cli/client'
import { SLOW, cliHarness } from './cli'

/** 128 KiB per second: an input of a few hundred kB outruns it within a second. */
const RATE = 128 * 1024
const { tempDir, quarry, ok, adminHome } = cliHarness({ QUARRY_INGEST_RATE: String(RATE) })

async function countOf(home: string, tag: string): Promise<number> {
  const [record] = (await ok(home, ['search', 'run', `tag=${tag} | count`, '--json'])).json()
  return record?.Count ?? 0
}

/** A file of `n` distinct lines of about 150 bytes; answers its path and size. */
function linesFile(dir: string, name: string, n: number): { path: string; bytes: number } {
  const text = Array.from({ length: n }, (_, i) => `line ${i} ${'x'.repeat(140)}`).join('\n') + '\n'
  const path = join(dir, name)
  writeFileSync(path, text)
  return { path, bytes: text.length }
}

describe('quarry ingest past the server\'s ingest rate', () => {
  test('refused batches are sent again after the Retry-After: everything is stored once, with one note', async () => {
    const home = await adminHome()
    const file = linesFile(tempDir(), 'fast.log', 2400)
    expect(file.bytes).toBeGreaterThan(2.5 * RATE)
    const started = performance.now()
    const run = await ok(home, ['ingest', file.path, '--tag', 'rated', '--batch-size', '32kB', '--json'])
    const seconds = (performance.now() - started) / 1000
    expect(run.json()).toMatchObject({ Count: 2400, Tags: ['rated'] })
    // slowed to the rate: one second's worth is free, the rest waits for it
    expect(seconds).toBeGreaterThan(file.bytes / RATE - 1.5)
    const notes = run.stderr.split('\n').filter((l) => l.includes('slowing this ingest down'))
    expect(notes, run.stderr).toHaveLength(1)
    expect(notes[0]).toContain('ingest rate exceeded')
    expect(await countOf(home, 'rated')).toBe(2400)

    // NDJSON goes the same way
    const nd = join(tempDir(), 'fast.ndjson')
    writeFileSync(nd, Array.from({ length: 2000 }, (_, i) => JSON.stringify({ Tag: 'rated-nd', Data: `entry ${i} ${'y'.repeat(140)}` })).join('\n'))
    expect((await ok(home, ['ingest', nd, '--format', 'ndjson', '--batch-size', '32kB', '--json'])).json()).toMatchObject({ Count: 2000 })
    expect(await countOf(home, 'rated-nd')).toBe(2000)
  }, SLOW)

  test('with a --retry-for shorter than the wait it gives up, and what it says was stored is what is stored', async () => {
    const home = await adminHome()
    await Bun.sleep(1100) // the bucket full again, whatever ran before
    const file = linesFile(tempDir(), 'impatient.log', 2400)
    const run = await quarry(home, ['ingest', file.path, '--tag', 'impatient', '--batch-size', '32kB', '--retry-for', '1ms'])
    expect(run.code).toBe(1)
    const said = /ingest rate exceeded.*; the (\d+) entries of earlier batches are stored/.exec(run.stderr)
    expect(said).not.toBeNull()
    const stored = Number(said![1])
    expect(stored).toBeGreaterThan(0)
    expect(stored).toBeLessThan(2400)
    expect(await countOf(home, 'impatient')).toBe(stored)
    expect((await quarry(home, ['ingest', file.path, '--tag', 'x', '--retry-for', 'soon'])).stderr).toContain('--retry-for: "soon" is not a duration')
  }, SLOW)
})

describe('Retry-After', () => {
  test('delay-seconds and HTTP dates; nothing for anything else', () => {
    const now = Date.parse('2026-11-28T10:00:00Z')
    expect(retryAfterMs('3', now)).toBe(3000)
    expect(retryAfterMs(' 0 ', now)).toBe(0)
    expect(retryAfterMs('Sat, 28 Nov 2026 10:00:05 GMT', now)).toBe(5000)
    expect(retryAfterMs('Sat, 28 Nov 2026 09:59:00 GMT', now)).toBe(0)
    expect(retryAfterMs(null, now)).toBeUndefined()
    expect(retryAfterMs('soon', now)).toBeUndefined()
    expect(retryAfterMs('-1', now)).toBeUndefined()
  })
})
