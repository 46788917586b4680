import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { documentTime, rfc3339 } from './elastic'

const p2 = (n: number) => String(n).padStart(2, '0')

describe('@timestamp as RFC 3339', () => {
  test('read as Date.parse reads it, over generated times, fractions and offsets', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 9999 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 31 }),
        fc.tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 59 })),
        fc.option(fc.stringMatching(/^[0-9]{1,9}$/)),
        fc.option(fc.tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))),
        (year, month, day, [h, mi, s], frac, zone) => {
          const text = `${String(year).padStart(4, '0')}-${p2(month)}-${p2(day)}T${p2(h)}:${p2(mi)}:${p2(s)}${frac === null ? '' : `.${frac}`}${zone === null ? 'Z' : `${zone[0]}${p2(zone[1])}:${p2(zone[2])}`}`
          const last = new Date(0)
          last.setUTCFullYear(year, month, 0)
          // a day past the month's end is refused (Date.parse would roll it over)
          const expected = day <= last.getUTCDate() ? Date.parse(text) : undefined
          expect(Number.isNaN(expected)).toBe(false)
          expect(rfc3339(text)).toBe(expected)
          if (expected !== undefined) expect(documentTime(JSON.stringify({ '@timestamp': text }))).toBe(expected)
        },
      ),
      { numRuns: 5000 },
    )
  })

  test('fields out of range are refused, not rolled over', () => {
    for (const bad of ['2026-02-29T00:00:00Z', '2026-02-30T00:00:00Z', '2026-04-31T00:00:00Z', '2026-13-01T00:00:00Z', '2026-00-10T00:00:00Z', '2026-01-00T00:00:00Z', '2026-01-01T24:00:00Z', '2026-01-01T00:60:00Z', '2026-01-01T00:00:60Z', '2026-01-01T00:00:00+24:00', '2026-01-01T00:00:00+23:60'])
      expect(rfc3339(bad)).toBeUndefined()
    expect(rfc3339('2028-02-29T12:00:00.5+01:00')).toBe(Date.parse('2028-02-29T11:00:00.500Z'))
    expect(rfc3339('0050-03-01T00:00:00Z')).toBe(Date.parse('0050-03-01T00:00:00Z'))
    // year 0 is a leap year (Date.UTC would read it as 1900, which is not)
    expect(rfc3339('0000-02-29T00:00:00Z')).toBe(Date.parse('0000-02-29T00:00:00Z'))
  })
})
