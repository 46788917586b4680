import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { TimeValue } from '../value'
import { entry, normal, refusedAt, values } from './extractions.testkit'
import { formatTime, parseAuto, parseLayout, parseTime } from './timelayout'

const GO_PLAYGROUND = Date.parse('2009-11-10T23:00:00Z')
const fmt = (ms: number, layout: string, tz = 'UTC') => formatTime(ms, parseLayout(layout), tz)

describe('time: arguments and normal form', () => {
  test.each([
    ['tag=x time tsString extractedTS', 'tag=x time tsString extractedTS'],
    ['tag=x time -oformat "Mon Jan _2 15:04:05 2006 MST" -tz "America/Chicago" TIMESTAMP foo', 'tag=x time -oformat "Mon Jan _2 15:04:05 2006 MST" -tz "America/Chicago" TIMESTAMP foo'],
    ['tag=x time -tz UTC -iformat 2006 a', 'tag=x time -iformat "2006" -tz "UTC" a'],
  ])('%s → %s', (q, expected) => {
    expect(normal(q)).toBe(expected)
    expect(normal(expected)).toBe(expected)
  })
  test.each([
    ['tag=x time', 10],
    ['tag=x time -tz Mars/Olympus a b', 15],
    ['tag=x time a b c', 15],
    ['tag=x time -oformat "" a', 20],
    ['tag=x time -x a', 11],
  ])('%s is refused at %d', (q, pos) => refusedAt(q, pos))
})

describe('time: Go layouts', () => {
  test.each([
    ['Mon Jan _2 15:04:05 2006 MST', 'UTC', 'Tue Nov 10 23:00:00 2009 UTC'],
    ['Mon Jan _2 15:04:05 2006 MST', 'America/Chicago', 'Tue Nov 10 17:00:00 2009 CST'],
    ['2006-01-02T15:04:05.000Z07:00', 'UTC', '2009-11-10T23:00:00.000Z'],
    ['2006-01-02T15:04:05.999Z07:00', 'Asia/Kolkata', '2009-11-11T04:30:00+05:30'],
    ['Monday, 02-Jan-06 3:04PM -0700', 'America/Denver', 'Tuesday, 10-Nov-09 4:00PM -0700'],
    ['January 2, 2006 002 __2 3pm', 'UTC', 'November 10, 2009 314 314 11pm'],
    ['02/Jan/2006:15:04:05 -0700', 'Europe/Paris', '11/Nov/2009:00:00:00 +0100'],
    ['Mon 3:04PM', 'UTC', 'Tue 11:00PM'],
  ])('%s in %s', (layout, tz, expected) => {
    expect(fmt(GO_PLAYGROUND, layout, tz)).toBe(expected)
    // a layout with the date reads back the instant; one without it, that time of the year's first day
    const back = layout.includes('2') ? GO_PLAYGROUND : Date.parse('2009-01-01T23:00:00Z')
    expect(parseTime(expected, parseLayout(layout), tz, 2009)).toBe(back)
  })

  test('RFC 3339 in UTC is what toISOString writes; layouts with a zone read back the instant they wrote', () => {
    const zones = ['UTC', 'America/Chicago', 'Europe/Berlin', 'Asia/Kathmandu', 'Australia/Lord_Howe', 'America/St_Johns']
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_102_444_800_000 }), fc.constantFrom(...zones), (ms, tz) => {
        expect(fmt(ms, '2006-01-02T15:04:05.000Z07:00')).toBe(new Date(ms).toISOString())
        for (const layout of ['2006-01-02T15:04:05.000Z07:00', 'Mon, 02 Jan 2006 15:04:05.000 -0700', '02/Jan/2006:15:04:05.999 -07:00', 'January 2 2006 03:04:05.000 PM MST']) {
          expect({ layout, tz, back: parseTime(fmt(ms, layout, tz), parseLayout(layout), tz) }).toEqual({ layout, tz, back: ms })
        }
      }),
      { numRuns: 300 },
    )
  })

  test('text without a zone is read in the zone given', () => {
    expect(parseTime('2009-11-10 17:00:00', parseLayout('2006-01-02 15:04:05'), 'America/Chicago')).toBe(GO_PLAYGROUND)
    // daylight saving time: July in Chicago is UTC-5
    expect(parseTime('2009-07-10 18:00:00', parseLayout('2006-01-02 15:04:05'), 'America/Chicago')).toBe(Date.parse('2009-07-10T23:00:00Z'))
    expect(parseTime('2009-11-10 17:00:00 CST', parseLayout('2006-01-02 15:04:05 MST'), 'America/Chicago')).toBe(GO_PLAYGROUND)
    expect(parseTime('2009-11-10 23:00:00 UTC', parseLayout('2006-01-02 15:04:05 MST'), 'America/Chicago')).toBe(GO_PLAYGROUND)
    expect(parseTime('2009-02-30 10:00:00', parseLayout('2006-01-02 15:04:05'), 'UTC')).toBeNull()
    expect(parseTime('2009-11-10 17:00', parseLayout('2006-01-02 15:04:05'), 'UTC')).toBeNull()
  })

  test.each([
    '2009-11-10T23:00:00Z',
    '2009-11-10T23:00:00.000+00:00',
    '2009-11-11T00:00:00+01:00',
    '2009-11-10 23:00:00',
    'Tue, 10 Nov 2009 23:00:00 GMT',
    'Tue, 10 Nov 2009 23:00:00 +0000',
    'Tue Nov 10 23:00:00 2009',
    'Tue Nov 10 23:00:00 UTC 2009',
    '10/Nov/2009:16:00:00 -0700',
    '2009/11/10 23:00:00',
    '11/10/2009 23:00:00',
    'Nov 10 23:00:00',
    '1257894000',
    '1257894000000',
    '1257894000000000000',
  ])('%s is found without a layout', (s) => {
    expect(parseAuto(s, 'UTC', 2009)).toBe(GO_PLAYGROUND)
  })
})

describe('time: the module', () => {
  test('the time.md example: written in Chicago, read back, to the second', () => {
    const ts = GO_PLAYGROUND + 1234
    const got = values('tag=x time -oformat "Mon Jan _2 15:04:05 2006 MST" -tz "America/Chicago" TIMESTAMP foo | time -iformat "Mon Jan _2 15:04:05 2006 MST" -tz "America/Chicago" foo bar', [entry('d', {}, ts)])
    expect(got).toEqual([{ foo: 'Tue Nov 10 17:00:01 2009 CST', bar: new TimeValue(GO_PLAYGROUND + 1000) }])
  })

  test('text becomes a time; what does not read as one sets nothing; -oformat makes text', () => {
    expect(values('tag=x time s t', [entry('d', { s: '2009-11-10T23:00:00Z' }), entry('d', { s: 'soon' }), entry('d')])).toEqual([{ s: '2009-11-10T23:00:00Z', t: new TimeValue(GO_PLAYGROUND) }, { s: 'soon' }, {}])
    expect(values('tag=x time -oformat 2006 s', [entry('d', { s: '2009-11-10T23:00:00Z' })])).toEqual([{ s: '2009' }])
    expect(values('tag=x time s', [entry('d', { s: 1257894000 })])).toEqual([{ s: new TimeValue(GO_PLAYGROUND) }])
  })
})
