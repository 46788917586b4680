import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { SCAN_BYTES, TIMESTAMP_FORMATS, TimestampFinder, type TimestampFormat, timestampFormat, zoneProblem } from './timestamps'

const at = (iso: string) => Date.parse(iso)
const RECEIVED = at('2026-11-27T12:00:00Z')
const utc = new TimestampFinder()

describe('TimestampFinder on real log lines', () => {
  const cases: [string, string, string][] = [
    ['nginx access', '93.184.216.34 - - [27/Nov/2026:10:15:32 +0100] "GET /index.html?id=42 HTTP/1.1" 200 612 "-" "curl/8.5.0"', '2026-11-27T09:15:32Z'],
    ['nginx error', '2026/11/27 10:15:32 [error] 1234#1234: *5 open() "/srv/www/favicon.ico" failed (2: No such file or directory)', '2026-11-27T10:15:32Z'],
    ['Apache access', '10.0.0.7 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326', '2000-10-10T20:55:36Z'],
    ['Apache error', '[Fri Nov 27 10:15:32.123456 2026] [core:error] [pid 1234:tid 5678] [client 10.0.0.7:51234] AH00126: Invalid URI', '2026-11-27T10:15:32.123Z'],
    ['syslog (RFC 3164 file)', 'Nov 27 10:15:32 web01 sshd[4242]: Accepted publickey for alice from 10.1.2.3 port 52114 ssh2', '2026-11-27T10:15:32Z'],
    ['syslog, day padded with a space', 'Nov  2 08:00:01 web01 CRON[99]: (root) CMD (run-parts /etc/cron.hourly)', '2026-11-02T08:00:01Z'],
    ['rsyslog file format', '2026-11-27T10:15:32.123456+01:00 web01 sshd[4242]: Disconnected from user alice 10.1.2.3 port 52114', '2026-11-27T09:15:32.123Z'],
    ['RFC 5424', '<165>1 2026-11-27T10:15:32.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3"] An application event', '2026-11-27T10:15:32.003Z'],
    ['dpkg', '2026-11-27 10:15:32 status installed libc6:amd64 2.36-9+deb12u4', '2026-11-27T10:15:32Z'],
    ['journald export', '__REALTIME_TIMESTAMP=1795774532123456', '2026-11-27T10:15:32.123Z'],
    [
      'journalctl -o json',
      '{"__CURSOR":"s=739ad463348b4ceca5a9e69c95a3c93f;i=4ece7;b=6c7c6013a8cb4f4f;m=1f8ab12d;t=5f1b2c3d4e5f6;x=bd5f","__REALTIME_TIMESTAMP":"1795774532123456","__MONOTONIC_TIMESTAMP":"529903405","MESSAGE":"Started Session 12 of user alice."}',
      '2026-11-27T10:15:32.123Z',
    ],
    ['JSON with a time field', '{"level":"info","time":"2026-11-27T10:15:32.5Z","msg":"user 42 logged in","took_ms":17}', '2026-11-27T10:15:32.500Z'],
    ['Python logging', '2026-11-27 10:15:32,481 INFO werkzeug: 127.0.0.1 - - "GET / HTTP/1.1" 200 -', '2026-11-27T10:15:32.481Z'],
    ['Go time.String()', 'started at 2026-11-27 10:15:32.123456789 +0100 CET m=+0.000071', '2026-11-27T09:15:32.123Z'],
    ['Go log with a zone', 'time=2026-11-27T10:15:32-05:00 level=warn msg="disk 91% full"', '2026-11-27T15:15:32Z'],
    ['ISO 8601 with a comma fraction and no zone', 'start 2026-11-27T10:15:32,75 done', '2026-11-27T10:15:32.750Z'],
    ['Unix date', 'Fri Nov 27 10:15:32 EST 2026 backup started', '2026-11-27T15:15:32Z'],
    ['Ruby', 'Fri Nov 27 10:15:32 +0900 2026 Rails request', '2026-11-27T01:15:32Z'],
    ['RFC 1123 (HTTP Date)', 'Date: Fri, 27 Nov 2026 10:15:32 GMT', '2026-11-27T10:15:32Z'],
    ['RFC 1123Z (mail)', 'Received: by mx; Fri, 27 Nov 2026 10:15:32 +0200', '2026-11-27T08:15:32Z'],
    ['RFC 822', 'sent 27 Nov 26 10:15 PST ok', '2026-11-27T18:15:00Z'],
    ['RFC 850', 'Friday, 27-Nov-26 10:15:32 UTC cookie expiry', '2026-11-27T10:15:32Z'],
    ['BIND query log', '27-Nov-2026 10:15:32.123 client @0x7f2a 10.0.0.9#53311 (example.com): query: example.com IN A +E(0)', '2026-11-27T10:15:32.123Z'],
    ['UK', 'job 27/11/2026 10:15:32,5 finished', '2026-11-27T10:15:32.500Z'],
    ['Gravwell', '11-27-2026 10:15:32.25 ingest', '2026-11-27T10:15:32.250Z'],
    ['DirectAdmin', '2026:11:27-10:15:32: Login from 10.0.0.2', '2026-11-27T10:15:32Z'],
    ['syslog variant', 'Nov 27 2026 10:15:32 ASA-6-302013: Built outbound TCP connection', '2026-11-27T10:15:32Z'],
    ['unpadded', '2026-1-2 3:04:05 something', '2026-01-02T03:04:05Z'],
    ['epoch seconds first', '1795774532 GET /health 200', '2026-11-27T10:15:32Z'],
    ['epoch with a fraction first', '1795774532.25 proxy accepted', '2026-11-27T10:15:32.250Z'],
    ['epoch milliseconds first', '  1795774532123 worker done', '2026-11-27T10:15:32.123Z'],
    ['epoch nanoseconds first', '1795774532123456789 span end', '2026-11-27T10:15:32.123Z'],
  ]
  for (const [name, line, iso] of cases) {
    test(name, () => {
      expect(new Date(utc.find(line, RECEIVED) ?? 0).toISOString()).toBe(new Date(at(iso)).toISOString())
      // the same from the raw bytes
      expect(utc.find(new TextEncoder().encode(line), RECEIVED)).toBe(at(iso))
    })
  }

  test('lines without a timestamp find nothing', () => {
    for (const line of [
      'hello world',
      'user 1795774532 logged in', // a number that is not the first word is no epoch
      'version 2.36-9+deb12u4 installed',
      'GET /api/v1/items/2026 200 612',
      'Janet said 10:15:32',
      '2026-02-30T10:00:00Z impossible date',
      '2026-11-27T25:00:00Z impossible hour',
      '',
    ])
      expect(utc.find(line, RECEIVED)).toBeUndefined()
  })

  test('the leftmost timestamp wins', () => {
    expect(utc.find('2026-11-27T10:00:00Z replayed event of 2025-01-01T00:00:00Z', RECEIVED)).toBe(at('2026-11-27T10:00:00Z'))
    expect(utc.find('[27/Nov/2026:10:15:32 +0000] Nov 1 00:00:00 x', RECEIVED)).toBe(at('2026-11-27T10:15:32Z'))
    // an impossible one is passed over
    expect(utc.find('2026-13-01 10:00:00 then 2026-11-27 10:00:00', RECEIVED)).toBe(at('2026-11-27T10:00:00Z'))
  })

  test('syslog takes the year that puts the time closest to receipt, across the new year', () => {
    expect(utc.find('Dec 31 23:59:58 host app: late', at('2027-01-01T00:00:05Z'))).toBe(at('2026-12-31T23:59:58Z'))
    expect(utc.find('Jan  1 00:00:01 host app: early', at('2026-12-31T23:59:59Z'))).toBe(at('2027-01-01T00:00:01Z'))
    expect(utc.find('Feb 29 12:00:00 host app: leap', at('2028-03-01T00:00:00Z'))).toBe(at('2028-02-29T12:00:00Z'))
  })

  test('the default zone applies to times written without one, and only to those', () => {
    const paris = new TimestampFinder({ zone: 'Europe/Paris' })
    expect(paris.find('2026-11-27 10:15:32 status installed x', RECEIVED)).toBe(at('2026-11-27T09:15:32Z'))
    expect(paris.find('2026-07-01 10:15:32 status installed x', RECEIVED)).toBe(at('2026-07-01T08:15:32Z'))
    expect(paris.find('2026-11-27T10:15:32Z explicit', RECEIVED)).toBe(at('2026-11-27T10:15:32Z'))
    expect(paris.find('1795774532 epoch', RECEIVED)).toBe(at('2026-11-27T10:15:32Z'))
    const offset = new TimestampFinder({ zone: '-0430' })
    expect(offset.find('2026/11/27 10:15:32 [error]', RECEIVED)).toBe(at('2026-11-27T14:45:32Z'))
  })

  test('ignoreZones reads every time in the default zone (assumelocaltimezone)', () => {
    const f = new TimestampFinder({ zone: 'UTC', ignoreZones: true })
    expect(f.find('[27/Nov/2026:10:15:32 +0100] GET /', RECEIVED)).toBe(at('2026-11-27T10:15:32Z'))
    expect(f.find('1795774532 epoch has no zone to ignore', RECEIVED)).toBe(at('2026-11-27T10:15:32Z'))
  })

  test('a pinned format finds only itself, at its leftmost place', () => {
    const line = 'Nov 27 10:15:32 host app: job of 2026-01-05T06:07:08Z done at 2026/11/27 11:00:00'
    expect(new TimestampFinder({ format: 'RFC3339' }).find(line, RECEIVED)).toBe(at('2026-01-05T06:07:08Z'))
    expect(new TimestampFinder({ format: 'nginxformat' }).find(line, RECEIVED)).toBe(at('2026-11-27T11:00:00Z'))
    expect(new TimestampFinder({ format: 'Syslog' }).find(line, RECEIVED)).toBe(at('2026-11-27T10:15:32Z'))
    // Syslog inside an AnsiC time, as the platform's Syslog pattern matches its prefix
    expect(new TimestampFinder({ format: 'Syslog' }).find('Nov 27 10:15:32 2020 x', RECEIVED)).toBe(at('2026-11-27T10:15:32Z'))
    expect(new TimestampFinder({ format: 'DPKG' }).find('1795774532 at 27/Nov/2026:10:15:32 +0000', RECEIVED)).toBeUndefined()
  })

  test('ignore finds nothing', () => {
    expect(new TimestampFinder({ ignore: true }).find('2026-11-27T10:15:32Z x', RECEIVED)).toBeUndefined()
  })

  test('only the first SCAN_BYTES of a line are searched', () => {
    const pad = 'x'.repeat(SCAN_BYTES - 10)
    expect(utc.find(`${pad} 2026-11-27T10:15:32Z`, RECEIVED)).toBeUndefined()
    expect(utc.find(`${'x'.repeat(SCAN_BYTES - 30)} 2026-11-27T10:15:32Z`, RECEIVED)).toBe(at('2026-11-27T10:15:32Z'))
    // adversarial text: every position starts a candidate
    expect(utc.find('1-'.repeat(1_000_000), RECEIVED)).toBeUndefined()
    expect(utc.find('Jan 1 '.repeat(100_000), RECEIVED)).toBeUndefined()
  })

  test('bad zones and formats are named', () => {
    expect(zoneProblem('Europe/Paris')).toBeUndefined()
    expect(zoneProblem('+05:30')).toBeUndefined()
    expect(zoneProblem('Mars/Olympus_Mons')).toContain('Mars/Olympus_Mons')
    expect(zoneProblem('+25:00')).toContain('+25:00')
    expect(() => new TimestampFinder({ format: 'Stardate' })).toThrow('"Stardate" is not a timestamp format')
    expect(timestampFormat('RFC3339NanoFormat')).toBe('RFC3339Nano')
  })
})

// Properties: a random time, written in each format and zone by independent code (Intl for the zone's wall time),
// embedded in random text without digits, is found back exactly to the format's precision.
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
const ZONES = ['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Kolkata', 'Australia/Sydney', 'America/St_Johns', 'Asia/Kathmandu', 'Pacific/Chatham', '+05:45', '-09:30']

interface Wall {
  Y: number
  M: number
  D: number
  h: number
  m: number
  s: number
  ms: number
}

function wallIn(t: number, zone: string): Wall {
  const off = /^[+-]/.test(zone) ? (zone[0] === '-' ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6))) : undefined
  if (off !== undefined || zone === 'UTC') {
    const d = new Date(t + (off ?? 0) * 60_000)
    return { Y: d.getUTCFullYear(), M: d.getUTCMonth() + 1, D: d.getUTCDate(), h: d.getUTCHours(), m: d.getUTCMinutes(), s: d.getUTCSeconds(), ms: d.getUTCMilliseconds() }
  }
  const p: Record<string, number> = {}
  const parts = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' }).formatToParts(t)
  for (const x of parts) if (x.type !== 'literal') p[x.type] = Number(x.value)
  return { Y: p.year!, M: p.month!, D: p.day!, h: p.hour!, m: p.minute!, s: p.second!, ms: ((t % 1000) + 1000) % 1000 }
}

const p2 = (n: number) => String(n).padStart(2, '0')
const p3 = (n: number) => String(n).padStart(3, '0')
const sp2 = (n: number) => String(n).padStart(2, ' ')
const offsetText = (minutes: number, colon: boolean) => `${minutes < 0 ? '-' : '+'}${p2(Math.floor(Math.abs(minutes) / 60))}${colon ? ':' : ''}${p2(Math.abs(minutes) % 60)}`

interface Written {
  text: string
  /** The time the text holds, to its precision. */
  expected: number
  /** Written in the zone's wall time (without an offset): the expected time may differ by the DST hour when the wall time is ambiguous. */
  wall?: Wall
  /** The line must start with it (epochs). */
  first?: boolean
}

type Writer = (t: number, zone: string, offset: number) => Written

const trunc = (t: number, unit: number) => Math.floor(t / unit) * unit
const date = (w: Wall) => `${w.Y}-${p2(w.M)}-${p2(w.D)}`
const clock = (w: Wall) => `${p2(w.h)}:${p2(w.m)}:${p2(w.s)}`

/** Formats written with an explicit offset: the `offset` minutes given. */
const withOffset = (t: number, offset: number) => wallIn(t, offsetText(offset, true))

const WRITERS: Record<TimestampFormat, Writer> = {
  RFC3339: (t, _z, o) => {
    const w = withOffset(t, o)
    return { text: `${date(w)}T${clock(w)}${o === 0 ? 'Z' : offsetText(o, true)}`, expected: trunc(t, 1000) }
  },
  RFC3339Nano: (t, _z, o) => {
    const w = withOffset(t, o)
    return { text: `${date(w)}T${clock(w)}.${p3(w.ms)}417${offsetText(o, true)}`, expected: t }
  },
  SyslogFile: (t, _z, o) => {
    const w = withOffset(t, o)
    return { text: `${date(w)}T${clock(w)}.${p3(w.ms)}${offsetText(o, true)}`, expected: t }
  },
  SyslogFileTZ: (t, _z, o) => {
    const w = withOffset(t, o)
    return { text: `${date(w)}T${clock(w)}.${p3(w.ms)}${offsetText(o, false)}`, expected: t }
  },
  ZonelessRFC3339: (t, z) => {
    const w = wallIn(t, z)
    return { text: `${date(w)}T${clock(w)}.${p3(w.ms)}`, expected: t, wall: w }
  },
  Apache: (t, _z, o) => {
    const w = withOffset(t, o)
    return { text: `[${p2(w.D)}/${MONTHS[w.M - 1]}/${w.Y}:${clock(w)} ${offsetText(o, false)}]`, expected: trunc(t, 1000) }
  },
  ApacheNoTz: (t, z) => {
    const w = wallIn(t, z)
    return { text: `[${sp2(w.D).trim()}/${MONTHS[w.M - 1]}/${w.Y}:${clock(w)}]`, expected: trunc(t, 1000), wall: w }
  },
  NGINX: (t, z) => {
    const w = wallIn(t, z)
    return { text: `${w.Y}/${p2(w.M)}/${p2(w.D)} ${clock(w)}`, expected: trunc(t, 1000), wall: w }
  },
  Syslog: (t, z) => {
    const w = wallIn(t, z)
    return { text: `${MONTHS[w.M - 1]} ${sp2(w.D)} ${clock(w)}`, expected: trunc(t, 1000), wall: w }
  },
  DPKG: (t, z) => {
    const w = wallIn(t, z)
    return { text: `${date(w)} ${clock(w)}`, expected: trunc(t, 1000), wall: w }
  },
  SyslogVariant: (t, z) => {
    const w = wallIn(t, z)
    return { text: `${MONTHS[w.M - 1]} ${p2(w.D)} ${w.Y} ${clock(w)}`, expected: trunc(t, 1000), wall: w }
  },
  UnpaddedDateTime: (t, z) => {
    const w = wallIn(t, z)
    return { text: `${w.Y}-${w.M}-${w.D} ${clock(w)}`, expected: trunc(t, 1000), wall: w }
  },
  UnpaddedMilliDateTime: (t, z) => {
    const w = wallIn(t, z)
    return { text: `${w.Y}-${w.M}-${w.D} ${clock(w)}.${p3(w.ms)}9`, expected: t, wall: w }
  },
  AnsiC: (t, z) => {
    const w = wallIn(t, z)
    return { text: `${MONTHS[w.M - 1]} ${sp2(w.D)} ${clock(w)} ${w.Y}`, expected: trunc(t, 1000), wall: w }
  },
  Unix: (t) => {
    const w = wallIn(t, '-05:00')
    return { text: `${MONTHS[w.M - 1]} ${sp2(w.D)} ${clock(w)} EST ${w.Y}`, expected: trunc(t, 1000) }
  },
  Ruby: (t, _z, o) => {
    const w = withOffset(t, o)
    return { text: `${MONTHS[w.M - 1]} ${sp2(w.D)} ${clock(w)} ${offsetText(o, false)} ${w.Y}`, expected: trunc(t, 1000) }
  },
  RFC822: (t) => {
    const w = wallIn(t, '-07:00')
    return { text: `${p2(w.D)} ${MONTHS[w.M - 1]} ${p2(w.Y % 100)} ${p2(w.h)}:${p2(w.m)} MST`, expected: trunc(t, 60_000) }
  },
  RFC822Z: (t, _z, o) => {
    const w = withOffset(t, o)
    return { text: `${p2(w.D)} ${MONTHS[w.M - 1]} ${p2(w.Y % 100)} ${p2(w.h)}:${p2(w.m)} ${offsetText(o, false)}`, expected: trunc(t, 60_000) }
  },
  RFC850: (t) => {
    const w = wallIn(t, 'UTC')
    return { text: `${p2(w.D)}-${MONTHS[w.M - 1]}-${p2(w.Y % 100)} ${clock(w)} GMT`, expected: trunc(t, 1000) }
  },
  RFC1123: (t) => {
    const w = wallIn(t, '+02:00')
    return { text: `${p2(w.D)} ${MONTHS[w.M - 1]} ${w.Y} ${clock(w)} CEST`, expected: trunc(t, 1000) }
  },
  RFC1123Z: (t, _z, o) => {
    const w = withOffset(t, o)
    return { text: `${p2(w.D)} ${MONTHS[w.M - 1]} ${w.Y} ${clock(w)} ${offsetText(o, false)}`, expected: trunc(t, 1000) }
  },
  UK: (t, z) => {
    const w = wallIn(t, z)
    return { text: `${p2(w.D)}/${p2(w.M)}/${w.Y} ${clock(w)},${p3(w.ms)}44`, expected: t, wall: w }
  },
  Gravwell: (t, z) => {
    const w = wallIn(t, z)
    return { text: `${w.M}-${w.D}-${w.Y} ${clock(w)}.${p3(w.ms)}`, expected: t, wall: w }
  },
  Bind: (t, z) => {
    const w = wallIn(t, z)
    return { text: `${p2(w.D)}-${MONTHS[w.M - 1]}-${w.Y} ${clock(w)}.${p3(w.ms)}`, expected: t, wall: w }
  },
  DirectAdmin: (t, z) => {
    const w = wallIn(t, z)
    return { text: `${w.Y}:${p2(w.M)}:${p2(w.D)}-${clock(w)}`, expected: trunc(t, 1000), wall: w }
  },
  UnixSeconds: (t) => ({ text: String(Math.floor(t / 1000)), expected: trunc(t, 1000), first: true }),
  UnixMilli: (t) => ({ text: `${Math.floor(t / 1000)}.${p3(t % 1000)}`, expected: t, first: true }),
  UnixMs: (t) => ({ text: String(t), expected: t, first: true }),
  UnixNano: (t) => ({ text: `${t}123456`, expected: t, first: true }),
  LDAP: (t) => ({ text: String((BigInt(t) + 11_644_473_600_000n) * 10_000n + 4321n), expected: t, first: true }),
  Journald: (t) => ({ text: `__REALTIME_TIMESTAMP=${t}999`, expected: t }),
}

/** Text without digits (and without a character that could continue the timestamp before or after it). */
const noDigits = fc.string({ unit: fc.constantFrom(...'abcxyz QRST-_:/[]{}"=,;é→'.split('')), maxLength: 40 })

describe('TimestampFinder properties', () => {
  test('every format is written by the property', () => {
    expect(Object.keys(WRITERS).sort()).toEqual([...TIMESTAMP_FORMATS].sort())
  })
  for (const format of TIMESTAMP_FORMATS) {
    test(`${format}: a random time in a random zone is found back`, () => {
      const finders = new Map<string, TimestampFinder[]>()
      fc.assert(
        fc.property(
          // 2001-09-10 (ten-digit epochs) to 2068 (two-digit years)
          fc.integer({ min: 1_000_166_400_000, max: 3_124_137_600_000 }),
          fc.constantFrom(...ZONES),
          fc.integer({ min: -48, max: 56 }).map((q) => q * 15),
          noDigits,
          noDigits,
          fc.integer({ min: -90, max: 90 }),
          (t, zone, offset, before, after, receiptDays) => {
            const w = WRITERS[format](t, zone, offset)
            const line = w.first ? `${w.text} ${after}` : `${before} ${w.text} ${after}`
            if (!finders.has(zone)) finders.set(zone, [new TimestampFinder({ zone }), new TimestampFinder({ zone, format })])
            for (const finder of finders.get(zone)!) {
              const found = finder.find(line, t + receiptDays * 86_400_000)
              if (found === w.expected) continue
              // a wall time the zone's clocks show twice (DST ends): either instant is right if it shows the same wall time
              expect(found).toBeDefined()
              expect(w.wall).toBeDefined()
              expect(Math.abs(found! - w.expected)).toBeLessThanOrEqual(3_600_000)
              const back = wallIn(found!, zone)
              expect({ ...back, ms: 0 }).toEqual({ ...w.wall!, ms: 0 })
            }
          },
        ),
        { numRuns: 300 },
      )
    })
  }
})
