// A syslog message's format and own time: RFC 5424 and RFC 3164 headers, the zone and year of RFC 3164 times,
// and receipt time for everything without a valid one; checked against times computed here independently.
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { readMessage } from './message'
import { parseZone } from './zone'

const UTC = parseZone('Z', 'UTC')
const RECEIVED = Date.UTC(2026, 5, 15, 12, 0, 0)
const read = (m: string, receivedAt = RECEIVED, zone = UTC) => readMessage(Buffer.from(m), receivedAt, zone)

describe('syslog message time and format', () => {
  test('RFC 5424: its RFC 3339 time, with fractions and offsets; `-` or a bad time gives the receipt', () => {
    expect(read('<34>1 2003-10-11T22:14:15.003Z mymachine su - ID47 - msg')).toEqual({ format: 'rfc5424', ts: Date.UTC(2003, 9, 11, 22, 14, 15, 3) })
    expect(read('<165>1 2003-08-24T05:14:15.000003-07:00 host app 8710 - - x')).toEqual({ format: 'rfc5424', ts: Date.UTC(2003, 7, 24, 12, 14, 15) })
    expect(read('<13>1 - host app - - - no time')).toEqual({ format: 'rfc5424', ts: RECEIVED })
    expect(read('<13>1 2003-13-11T22:14:15Z host app - - -')).toEqual({ format: 'rfc5424', ts: RECEIVED })
    expect(read('<13>1 yesterday host')).toEqual({ format: 'rfc5424', ts: RECEIVED })
    expect(read('<13>12 2003-10-11T22:14:15Z h a - - -')).toEqual({ format: 'rfc5424', ts: Date.UTC(2003, 9, 11, 22, 14, 15) })
  })

  test('RFC 3164: `Mmm dd hh:mm:ss` (space- or zero-padded day, optional fraction) or an RFC 3339 time', () => {
    expect(read('<13>Jun  2 03:04:05 host app: m')).toEqual({ format: 'rfc3164', ts: Date.UTC(2026, 5, 2, 3, 4, 5) })
    expect(read('<13>Jun 02 03:04:05 host app: m')).toEqual({ format: 'rfc3164', ts: Date.UTC(2026, 5, 2, 3, 4, 5) })
    expect(read('<13>Jun 12 03:04:05.123456 host app: m')).toEqual({ format: 'rfc3164', ts: Date.UTC(2026, 5, 12, 3, 4, 5, 123) })
    expect(read('<13>Jun 12 03:04:05')).toEqual({ format: 'rfc3164', ts: Date.UTC(2026, 5, 12, 3, 4, 5) })
    expect(read('<13>2026-06-01T10:00:00+02:00 host app: m')).toEqual({ format: 'rfc3164', ts: Date.UTC(2026, 5, 1, 8) })
    expect(read('<13>Jun 32 03:04:05 host')).toEqual({ format: 'rfc3164', ts: RECEIVED })
    expect(read('<13>Jun 12 03:04:05x host')).toEqual({ format: 'rfc3164', ts: RECEIVED })
    expect(read('<13>host app: no time')).toEqual({ format: 'rfc3164', ts: RECEIVED })
  })

  test('RFC 3164 years: the one nearest the receipt, across the new year both ways; Feb 29 only in leap years', () => {
    const newYear = Date.UTC(2027, 0, 1, 0, 0, 30)
    expect(read('<13>Dec 31 23:59:50 h a: late', newYear).ts).toBe(Date.UTC(2026, 11, 31, 23, 59, 50))
    const lastDay = Date.UTC(2026, 11, 31, 23, 59, 50)
    expect(read('<13>Jan  1 00:00:05 h a: early clock', lastDay).ts).toBe(Date.UTC(2027, 0, 1, 0, 0, 5))
    expect(read('<13>Feb 29 10:00:00 h a: m', Date.UTC(2028, 2, 1)).ts).toBe(Date.UTC(2028, 1, 29, 10))
    // 2027 has none: the nearest year with one is 2028 (more than 8 months away), still the nearest valid reading
    expect(read('<13>Feb 29 10:00:00 h a: m', Date.UTC(2027, 2, 1)).ts).toBe(Date.UTC(2028, 1, 29, 10))
  })

  test('RFC 3164 times in the configured zone: a fixed offset, and an IANA zone across daylight saving time', () => {
    expect(read('<13>Jun  2 03:04:05 h a: m', RECEIVED, parseZone('Z', '+05:30')).ts).toBe(Date.UTC(2026, 5, 1, 21, 34, 5))
    const paris = parseZone('Z', 'Europe/Paris')
    expect(read('<13>Jun  2 03:04:05 h a: m', RECEIVED, paris).ts).toBe(Date.UTC(2026, 5, 2, 1, 4, 5))
    expect(read('<13>Jan  2 03:04:05 h a: m', Date.UTC(2026, 0, 5), paris).ts).toBe(Date.UTC(2026, 0, 2, 2, 4, 5))
    // RFC 5424 times carry their own offset: the zone does not apply
    expect(read('<13>1 2026-06-02T03:04:05Z h a - - -', RECEIVED, paris).ts).toBe(Date.UTC(2026, 5, 2, 3, 4, 5))
  })

  test('generated: an RFC 3164 time written in a zone reads back to the instant, within a few months of the receipt', () => {
    const zones = ['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Kolkata', 'Australia/Sydney', '-03:00']
    const MONTH_NAMES = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2090, 0, 1) }),
        fc.integer({ min: -150 * 86_400_000, max: 150 * 86_400_000 }),
        fc.constantFrom(...zones),
        (instantRaw, skew, zoneName) => {
          const instant = Math.floor(instantRaw / 1000) * 1000
          // the wall clock of `instant` in the zone, written by Intl (independent of the code under test)
          const parts: Record<string, string> = {}
          const intlZone = zoneName === '-03:00' ? 'Etc/GMT+3' : zoneName
          for (const p of new Intl.DateTimeFormat('en-US', { timeZone: intlZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' }).formatToParts(instant))
            parts[p.type] = p.value
          const line = `<13>${MONTH_NAMES[Number(parts.month) - 1]} ${parts.day!.padStart(2, ' ')} ${parts.hour}:${parts.minute}:${parts.second} host app: m`
          const got = read(line, instant + skew, parseZone('Z', zoneName)).ts
          // a wall time repeated when clocks go back reads as either instant an hour apart
          expect([instant, instant - 3_600_000, instant + 3_600_000]).toContain(got)
          if (zoneName === 'UTC' || zoneName === '-03:00' || zoneName === 'Asia/Kolkata') expect(got).toBe(instant)
        },
      ),
      { numRuns: 500, seed: 25 },
    )
  })

  test('anything else is raw, kept whole with the receipt time unless it starts with a timestamp', () => {
    expect(read('plain text')).toEqual({ format: 'raw', ts: RECEIVED })
    expect(read('<192>1 2003-10-11T22:14:15Z h a - - -')).toEqual({ format: 'raw', ts: RECEIVED })
    expect(read('<ab>x')).toEqual({ format: 'raw', ts: RECEIVED })
    expect(read('Jun  2 03:04:05 host app: no PRI')).toEqual({ format: 'raw', ts: Date.UTC(2026, 5, 2, 3, 4, 5) })
    expect(read('\xff\xfe<13>1 x')).toEqual({ format: 'raw', ts: RECEIVED })
    expect(read('')).toEqual({ format: 'raw', ts: RECEIVED })
  })
})
