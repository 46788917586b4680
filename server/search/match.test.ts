// The matching worker with the regex prefilter (FilterStage.literals): the same verdicts as RE2 alone, on entries
// with and without the pattern's required literals.
import { afterAll, expect, test } from 'bun:test'
import { LazyRegex, compileRegex } from '../../engine/regex'
import { MatchPool } from './match'

const pool = new MatchPool(1, 60_000)
afterAll(() => pool.close())

test('a regex stage with its literals passes exactly the entries RE2 matches', async () => {
  const entries: Buffer[] = []
  for (let i = 0; i < 2000; i++) {
    const hex = ((i * 2654435761) >>> 0).toString(16).padStart(8, '0')
    entries.push(Buffer.from(i % 7 === 0 ? `x marker${hex.slice(0, 4)} y` : i % 5 === 0 ? `marker-${hex}` : `plain ${hex} é`))
  }
  for (const pattern of ['marker[0-9a-f]{4}', 'é$|^x', '(?i)MARKER-', 'plain [0-9]+']) {
    const re = compileRegex(pattern)
    const want = entries.map((e) => (re.test(e) ? 1 : 0))
    const literals = new LazyRegex(pattern, 0).literals
    const got = await pool.run([{ op: 'regex', pattern, literals }], entries)
    expect([...got]).toEqual(want)
    // And behind a grep: the count of stages passed in order.
    const both = await pool.run([{ op: 'grep', text: 'marker' }, { op: 'regex', pattern, literals }], entries)
    expect([...both]).toEqual(entries.map((e, i) => (e.includes('marker') ? 1 + want[i]! : 0)))
  }
  expect(new LazyRegex('marker[0-9a-f]{4}', 0).literals).toBe('marker')
})
