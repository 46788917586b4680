// `quarry entries ...` against a live server (test/cli.ts): a deletion of a tag's range answers how many entries went
// and a search afterwards finds exactly the others; the retention rules are stored and shown; bad usage is refused
// before anything is sent.
import { describe, expect, test } from 'bun:test'
import { SLOW, cliHarness, expectFailure } from './cli'

const server = cliHarness()
const { quarry, ok, adminHome, savedJwt, api } = server

const T0 = Date.parse('2026-02-01T00:00:00Z')
const HOUR = 3_600_000

describe('quarry entries', () => {
  test('delete: the entries of the tag in [start, end) go, with their count; the rest stay', async () => {
    const home = await adminHome()
    const jwt = savedJwt(home)
    const entries = Array.from({ length: 240 }, (_, i) => ({
      TS: new Date(T0 + i * 0.5 * HOUR).toISOString(),
      Tag: i % 3 === 0 ? 'clidel' : 'clikeep',
      Data: Buffer.from(`line ${i}`).toString('base64'),
    }))
    await api(jwt, 'POST', '/api/ingest/json', entries)
    const start = new Date(T0 + 24 * HOUR).toISOString()
    const end = new Date(T0 + 72 * HOUR).toISOString()
    const inRange = (e: (typeof entries)[number]) => e.Tag === 'clidel' && e.TS >= start && e.TS < end
    const expected = entries.filter(inRange).length
    expect(expected).toBe(32)
    const r = await ok(home, ['entries', 'delete', '--tag', 'clidel', '--start', start, '--end', end, '--yes'])
    expect(r.stdout).toBe(`Deleted ${expected} entries of clidel from ${start} to ${end}\n`)
    const left = (await ok(home, ['search', 'run', 'tag=clidel', '--start', '2026-01-01', '--end', '2026-03-01', '--json'])).json()
    expect(left.map((e: { Data: string }) => Buffer.from(e.Data, 'base64').toString()).sort()).toEqual(
      entries.filter((e) => e.Tag === 'clidel' && !inRange(e)).map((e) => Buffer.from(e.Data, 'base64').toString()).sort(),
    )
    const keep = (await ok(home, ['search', 'run', 'tag=clikeep | count', '--start', '2026-01-01', '--end', '2026-03-01', '--json'])).json()
    expect(keep[0].Count).toBe(160)
    const listed = (await ok(home, ['entries', 'deletions', '--json'])).json()
    expect(listed[0]).toMatchObject({ Tag: 'clidel', Start: start, End: end, Deleted: expected })
    // Without a terminal and without --yes, nothing is deleted.
    expectFailure(await quarry(home, ['entries', 'delete', '--tag', 'clikeep', '--start', start, '--end', end]), 2, 'refusing to delete the entries of clikeep')
    expect((await ok(home, ['search', 'run', 'tag=clikeep | count', '--start', '2026-01-01', '--end', '2026-03-01', '--json'])).json()[0].Count).toBe(160)
    // --start after --end: refused before anything is sent.
    expectFailure(await quarry(home, ['entries', 'delete', '--tag', 'clikeep', '--start', end, '--end', start, '--yes']), 2, '--start must be before --end')
  }, SLOW)

  test('retention-set stores a rule that wins over the variables; retention shows it', async () => {
    const home = await adminHome()
    await ok(home, ['entries', 'retention-set', 'web', '--max-age', '30d'])
    await ok(home, ['entries', 'retention-set', 'web', '--max-size', '2GiB'])
    await ok(home, ['entries', 'retention-set', '--all', '--max-age', '90d'])
    const state = (await ok(home, ['entries', 'retention', '--json'])).json()
    expect(state.Stored).toEqual([
      { Tag: '', MaxAgeMs: 90 * 24 * HOUR, MaxBytes: null },
      { Tag: 'web', MaxAgeMs: 30 * 24 * HOUR, MaxBytes: 2 * 1024 ** 3 },
    ])
    expect(state.Effective).toEqual([
      { Tag: '', MaxAgeMs: 90 * 24 * HOUR, MaxBytes: null },
      { Tag: 'web', MaxAgeMs: 30 * 24 * HOUR, MaxBytes: 2 * 1024 ** 3 },
    ])
    const shown = (await ok(home, ['entries', 'retention'])).stdout
    expect(shown).toContain('30d')
    await ok(home, ['entries', 'retention-set', 'web', '--clear'])
    expect((await ok(home, ['entries', 'retention', '--json'])).json().Stored).toEqual([{ Tag: '', MaxAgeMs: 90 * 24 * HOUR, MaxBytes: null }])
    expectFailure(await quarry(home, ['entries', 'retention-set', '--all', '--max-size', '1GiB']), 2, '--max-size is per tag')
    expectFailure(await quarry(home, ['entries', 'retention-set', 'web']), 2, 'nothing to set')
  }, SLOW)
})
