// An entry's time, found in its own text, as the platform's timegrinder finds it (docs/shippers.md "Timestamps"):
// the leftmost timestamp of any known format in the first SCAN_BYTES of the line, read in the configured zone when
// the format carries none; undefined when there is none (the caller then stamps the time of receipt).
//
// Cost is bounded per line whatever it holds: one left-to-right pass over at most SCAN_BYTES characters, where each
// position is looked at only when it could start a timestamp (a digit after a non-alphanumeric, a capitalised month
// name, `__REALTIME_TIMESTAMP`), and each such look reads a fixed number of characters. No regular expression.
//
// Formats, by the platform's names (QUARRY_TIMESTAMP_FORMAT pins one; matching is case-insensitive):
//   AnsiC `Jan _2 15:04:05 2006` · Unix `Jan _2 15:04:05 MST 2006` · Ruby `Jan _2 15:04:05 -0700 2006`
//   RFC822 `02 Jan 06 15:04 MST` · RFC822Z `02 Jan 06 15:04 -0700` · RFC850 `02-Jan-06 15:04:05 MST`
//   RFC1123 `02 Jan 2006 15:04:05 MST` · RFC1123Z `02 Jan 2006 15:04:05 -0700`
//   RFC3339 `2006-01-02T15:04:05Z07:00` · RFC3339Nano (with a fraction) · ZonelessRFC3339 `2006-01-02T15:04:05.999`
//   SyslogFile `2006-01-02T15:04:05.999-07:00` · SyslogFileTZ `2006-01-02T15:04:05.999-0700`
//   Apache `_2/Jan/2006:15:04:05 -0700` · ApacheNoTz `_2/Jan/2006:15:04:05` · NGINX `2006/01/02 15:04:05`
//   Syslog `Jan _2 15:04:05` (the year is the one that puts it closest to the time of receipt: a December line
//   received in January is of the year before) · SyslogVariant `Jan 02 2006 15:04:05`
//   DPKG `2006-01-02 15:04:05` · UnpaddedDateTime `2006-1-2 15:04:05` · UnpaddedMilliDateTime `2006-1-2 15:04:05.999`
//   UnixSeconds `1234567890` · UnixMilli `1136473445.99` · UnixMs `1136473445000` · UnixNano `1136473445000000000`
//   LDAP `123456789012345678` (100 ns since 1601) — these five only as the line's first word, as the platform does
//   (any number elsewhere in a line would otherwise be read as a time)
//   UK `02/01/2006 15:04:05,99999` · Gravwell `1-2-2006 15:04:05.99999` · Bind `02-Jan-2006 15:04:05.999`
//   DirectAdmin `2006:01:02-15:04:05` · Journald `__REALTIME_TIMESTAMP=1136214245000000` (microseconds; journalctl's
//   export format, and its JSON `"__REALTIME_TIMESTAMP":"..."`)
// The ISO 8601 variants are read by the same code: `T` or a space between date and time, a fraction after `.` or
// `,` of any length (kept to the millisecond, truncated), a zone as `Z`, `±hh:mm`, `±hhmm` or `±hh` (after a space
// too when the date and time are separated by one, as Go's time.String() writes them); zone
// abbreviations (`MST`, `UTC`...) by a fixed table, unknown ones as UTC (as Go's time.Parse does).

/** How much of a line is searched for its timestamp. */
export const SCAN_BYTES = 4096

/** The formats by the platform's names, as QUARRY_TIMESTAMP_FORMAT and the CLI's --timestamp-format accept them. */
export const TIMESTAMP_FORMATS = [
  'AnsiC', 'Unix', 'Ruby', 'RFC822', 'RFC822Z', 'RFC850', 'RFC1123', 'RFC1123Z', 'RFC3339', 'RFC3339Nano',
  'ZonelessRFC3339', 'Apache', 'ApacheNoTz', 'NGINX', 'Syslog', 'SyslogFile', 'SyslogFileTZ', 'DPKG', 'SyslogVariant',
  'UnpaddedDateTime', 'UnpaddedMilliDateTime', 'UnixSeconds', 'UnixMilli', 'UnixMs', 'UnixNano', 'LDAP', 'UK',
  'Gravwell', 'Bind', 'DirectAdmin', 'Journald',
] as const
export type TimestampFormat = (typeof TIMESTAMP_FORMATS)[number]

/**
 * What a pinned format admits besides itself: the readings the platform's own parser of that format also takes
 * (Go's RFC3339 layout reads a fraction; the unpadded layouts read padded dates).
 */
const ALSO_ADMITS: Partial<Record<TimestampFormat, TimestampFormat[]>> = {
  RFC3339: ['RFC3339Nano'],
  RFC3339Nano: ['RFC3339'],
  SyslogFile: ['RFC3339', 'RFC3339Nano'],
  UnpaddedDateTime: ['DPKG'],
  UnpaddedMilliDateTime: ['DPKG', 'UnpaddedDateTime'],
  RFC822: ['RFC822Z'],
  RFC1123: ['RFC1123Z'],
}

/** The format named `name` (case-insensitive, an optional `Format` suffix as the platform's constants have it). */
export function timestampFormat(name: string): TimestampFormat | undefined {
  const key = name.trim().toLowerCase().replace(/format$/, '')
  return TIMESTAMP_FORMATS.find((f) => f.toLowerCase() === key)
}

/** Checks a zone as QUARRY_TIMESTAMP_ZONE takes it (an IANA name, `UTC`, or an offset `+02:00`, `-0700`); an error message or undefined. */
export function zoneProblem(zone: string): string | undefined {
  try {
    zoneOf(zone)
    return undefined
  } catch (e) {
    return (e as Error).message
  }
}

export interface Zone {
  /** Milliseconds since the epoch of a wall-clock time (itself counted as if it were UTC) in this zone. */
  toUtc(wallMs: number): number
}

const UTC_ZONE: Zone = { toUtc: (wall) => wall }

function fixedZone(offsetMinutes: number): Zone {
  return { toUtc: (wall) => wall - offsetMinutes * 60_000 }
}

/** An IANA zone: offsets from Intl, cached per quarter hour (every zone's offset changes on a quarter hour). */
function ianaZone(name: string): Zone {
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone: name,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  })
  // Bounded: log lines come in runs of nearby times, so a small cache answers nearly every line.
  const cache = new Map<number, number>()
  const offsetAt = (utcMs: number): number => {
    const slot = Math.floor(utcMs / 900_000)
    let offset = cache.get(slot)
    if (offset === undefined) {
      const at = slot * 900_000
      const p: Record<string, number> = {}
      for (const part of format.formatToParts(at)) if (part.type !== 'literal') p[part.type] = Number(part.value)
      const wall = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!)
      offset = wall - at
      if (cache.size >= 4096) cache.clear()
      cache.set(slot, offset)
    }
    return offset
  }
  return {
    toUtc(wall) {
      // Two rounds settle the offset on either side of a change; a wall time that a change skips reads as after it.
      const first = wall - offsetAt(wall)
      return wall - offsetAt(first)
    },
  }
}

/**
 * The zone a time without one is read in: UTC, a fixed offset (`+02:00`, `-0700`) or an IANA name (`Europe/Paris`),
 * whose offset follows daylight saving time. Throws an Error naming the problem.
 */
export function zoneOf(zone: string): Zone {
  const z = zone.trim()
  if (z === '' || /^(utc|gmt|z|etc\/utc)$/i.test(z)) return UTC_ZONE
  const m = /^([+-])(\d{2}):?(\d{2})?$/.exec(z)
  if (m) {
    const hours = Number(m[2])
    const minutes = Number(m[3] ?? 0)
    if (hours > 23 || minutes > 59) throw new Error(`"${zone}" is not a UTC offset (examples: +02:00, -0700)`)
    return fixedZone((m[1] === '-' ? -1 : 1) * (hours * 60 + minutes))
  }
  try {
    return ianaZone(z)
  } catch {
    throw new Error(`"${zone}" is neither an IANA time zone (example: Europe/Paris) nor a UTC offset (example: +02:00)`)
  }
}

/** Zone abbreviations Go's time.Parse resolves in the usual US/European setups; others read as UTC, as Go does. */
const ABBREVIATIONS: Record<string, number> = {
  UTC: 0, GMT: 0, UT: 0, Z: 0, WET: 0, WEST: 60, CET: 60, CEST: 120, BST: 60, EET: 120, EEST: 180, MSK: 180,
  EST: -300, EDT: -240, CST: -360, CDT: -300, MST: -420, MDT: -360, PST: -480, PDT: -420, AKST: -540, AKDT: -480,
  HST: -600, JST: 540, KST: 540, AEST: 600, AEDT: 660, NZST: 720, NZDT: 780,
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
/** Month number (1-12) by the three letters' codes packed in one integer. */
const MONTH_BY_KEY = new Map(MONTHS.map((m, i) => [m.charCodeAt(0) * 65536 + m.charCodeAt(1) * 256 + m.charCodeAt(2), i + 1]))

const isDigit = (c: number) => c >= 48 && c <= 57
const isUpper = (c: number) => c >= 65 && c <= 90
const isLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122)

/** A match at one position: the format, the wall time or instant, and the zone when the text gives one. */
interface Reading {
  format: TimestampFormat
  /** Milliseconds: the wall time counted as UTC when `offset` is undefined and `instant` is false. */
  ms: number
  /** Zone offset in minutes written in the text. */
  offset?: number
  /** An epoch: no zone applies. */
  instant?: boolean
  /** Syslog's yearless reading: `ms` is of year 2000 (a leap year, so Feb 29 stays); the year comes from receipt. */
  yearless?: boolean
  /** A shorter reading at the same position, of another format (Syslog inside AnsiC...), for a pinned format. */
  shorter?: Reading
}

function daysIn(year: number, month: number): number {
  return month === 2 ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28) : [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!
}

/** Wall time as UTC milliseconds, or NaN when a field is out of range. */
function wall(year: number, month: number, day: number, hour: number, minute: number, second: number, ms: number): number {
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || second > 59) return Number.NaN
  // Date.UTC reads years 0-99 as 1900-1999; those go the slower way
  if (year >= 100) return Date.UTC(year, month - 1, day, hour, minute, second, ms)
  const d = new Date(0)
  d.setUTCFullYear(year, month - 1, day)
  d.setUTCHours(hour, minute, second, ms)
  return d.getTime()
}

/**
 * A cursor over the scanned bytes (`b` up to `end`): each read advances `pos` and answers -1 (or undefined) when the
 * text does not fit. Bytes, not a string: a line that arrives as bytes is scanned where it lies, without a string made
 * of it (every character a timestamp is made of is ASCII; any other byte is neither digit nor letter).
 */
class Cursor {
  pos = 0
  b: Uint8Array = EMPTY
  end = 0
  /** Scans `b`'s first `end` bytes from the start. */
  reset(b: Uint8Array, end: number): this {
    this.b = b
    this.end = end
    this.pos = 0
    return this
  }
  at(i = this.pos): number {
    return i < this.end ? this.b[i]! : -1
  }
  /** The bytes from `start` to `end` (ASCII, a few characters) as a string. */
  text(start: number, end: number): string {
    let out = ''
    for (let i = start; i < end; i++) out += String.fromCharCode(this.b[i]!)
    return out
  }
  /** Exactly `n` digits (not followed by another digit when `whole`). */
  digits(n: number, whole = true): number {
    let v = 0
    for (let k = 0; k < n; k++) {
      const c = this.at(this.pos + k)
      if (!isDigit(c)) return -1
      v = v * 10 + c - 48
    }
    if (whole && isDigit(this.at(this.pos + n))) return -1
    this.pos += n
    return v
  }
  /** One or two digits. */
  digits12(): number {
    const a = this.at()
    if (!isDigit(a)) return -1
    const b = this.at(this.pos + 1)
    if (isDigit(b)) {
      if (isDigit(this.at(this.pos + 2))) return -1
      this.pos += 2
      return (a - 48) * 10 + b - 48
    }
    this.pos += 1
    return a - 48
  }
  char(c: number): boolean {
    if (this.at() !== c) return false
    this.pos++
    return true
  }
  /** A three-letter month name (`Jan`), not followed by another letter. */
  month(): number {
    const b = this.b
    const p = this.pos
    if (p + 3 > this.end || isLetter(this.at(p + 3))) return -1
    const m = MONTH_BY_KEY.get(b[p]! * 65536 + b[p + 1]! * 256 + b[p + 2]!)
    if (m === undefined) return -1
    this.pos += 3
    return m
  }
  /** `hh:mm:ss` (hour with one or two digits), or `hh:mm` when seconds are optional; [h, m, s] or undefined. */
  clock(secondsOptional = false): [number, number, number] | undefined {
    const h = this.digits12()
    if (h < 0 || !this.char(58)) return undefined
    const m = this.digits(2)
    if (m < 0) return undefined
    const save = this.pos
    if (this.char(58)) {
      const sec = this.digits(2)
      if (sec >= 0) return [h, m, sec]
    }
    this.pos = save
    return secondsOptional ? [h, m, 0] : undefined
  }
  /** A fraction after `.` or `,`, as milliseconds (truncated; at most 9 digits read, the rest skipped); 0 when none. */
  fraction(): { ms: number; present: boolean } {
    const c = this.at()
    if ((c !== 46 && c !== 44) || !isDigit(this.at(this.pos + 1))) return { ms: 0, present: false }
    this.pos++
    let ms = 0
    let n = 0
    while (isDigit(this.at())) {
      if (n < 3) ms = ms * 10 + this.at() - 48
      n++
      this.pos++
      if (n > 64) break
    }
    for (let k = n; k < 3; k++) ms *= 10
    return { ms, present: true }
  }
  /** A numeric offset `Z`, `±hh:mm`, `±hhmm`, `±hh` in minutes; undefined when none. `colon`: which form was read. */
  numericZone(): { minutes: number; colon: boolean } | undefined {
    const c = this.at()
    if (c === 90 || c === 122) {
      if (isLetter(this.at(this.pos + 1))) return undefined
      this.pos++
      return { minutes: 0, colon: true }
    }
    if (c !== 43 && c !== 45) return undefined
    const start = this.pos
    this.pos++
    const h = this.digits(2, false)
    if (h < 0 || h > 23) {
      this.pos = start
      return undefined
    }
    let m = 0
    let colon = false
    if (this.at() === 58 && isDigit(this.at(this.pos + 1))) {
      this.pos++
      colon = true
      m = this.digits(2)
    } else if (isDigit(this.at())) m = this.digits(2)
    if (m < 0 || m > 59 || isDigit(this.at())) {
      this.pos = start
      return undefined
    }
    return { minutes: (c === 45 ? -1 : 1) * (h * 60 + m), colon }
  }
  /** A zone abbreviation of 1 to 5 capitals (`MST`, `UTC`), not followed by a letter; its offset in minutes. */
  abbreviation(): number | undefined {
    let n = 0
    while (n < 5 && isUpper(this.at(this.pos + n))) n++
    if (n === 0 || isLetter(this.at(this.pos + n))) return undefined
    const name = this.text(this.pos, this.pos + n)
    this.pos += n
    return ABBREVIATIONS[name] ?? 0
  }
}

/** `YYYY-M-D[T ]h:mm:ss[.f][zone]`, `YYYY/MM/DD hh:mm:ss`, `YYYY:MM:DD-hh:mm:ss`, from a four-digit year. */
function fromYear(c: Cursor, year: number): Reading | undefined {
  const sep = c.at()
  c.pos++
  if (sep === 45) {
    const mStart = c.pos
    const month = c.digits12()
    const padded = c.pos - mStart === 2
    if (month < 0 || !c.char(45)) return undefined
    const dStart = c.pos
    const day = c.digits12()
    const dayPadded = c.pos - dStart === 2
    if (day < 0) return undefined
    const t = c.at()
    if (t !== 84 && t !== 116 && t !== 32) return undefined
    c.pos++
    const hStart = c.pos
    const clock = c.clock()
    if (!clock) return undefined
    const hourPadded = c.pos - hStart === 8
    const frac = c.fraction()
    const ms = wall(year, month, day, clock[0], clock[1], clock[2], frac.ms)
    const zone = c.numericZone()
    const allPadded = padded && dayPadded && hourPadded
    if (t !== 32) {
      if (!allPadded) return undefined
      if (zone === undefined) return { format: 'ZonelessRFC3339', ms }
      if (!zone.colon) return { format: 'SyslogFileTZ', ms, offset: zone.minutes }
      return { format: frac.present ? 'RFC3339Nano' : 'RFC3339', ms, offset: zone.minutes }
    }
    if (zone !== undefined) return { format: frac.present ? 'RFC3339Nano' : 'RFC3339', ms, offset: zone.minutes }
    const zoneless: Reading = frac.present
      ? { format: 'UnpaddedMilliDateTime', ms, shorter: allPadded ? { format: 'DPKG', ms: ms - frac.ms } : undefined }
      : { format: allPadded ? 'DPKG' : 'UnpaddedDateTime', ms }
    // Go's own time.String(): `2006-01-02 15:04:05.999 -0700 MST`, the offset after a space
    const spaced = spacedZone(c)
    if (spaced?.numeric) return { format: frac.present ? 'RFC3339Nano' : 'RFC3339', ms, offset: spaced.minutes, shorter: zoneless }
    return zoneless
  }
  if (sep === 47) {
    const month = c.digits(2)
    if (month < 0 || !c.char(47)) return undefined
    const day = c.digits(2)
    if (day < 0 || !c.char(32)) return undefined
    const clock = c.clock()
    if (!clock) return undefined
    const frac = c.fraction()
    return { format: 'NGINX', ms: wall(year, month, day, clock[0], clock[1], clock[2], frac.ms) }
  }
  if (sep === 58) {
    const month = c.digits(2)
    if (month < 0 || !c.char(58)) return undefined
    const day = c.digits(2)
    if (day < 0 || !c.char(45)) return undefined
    const clock = c.clock()
    if (!clock) return undefined
    return { format: 'DirectAdmin', ms: wall(year, month, day, clock[0], clock[1], clock[2], 0) }
  }
  return undefined
}

/** Go's two-digit years: 69-99 are 1969-1999, 00-68 are 2000-2068. */
const fullYear = (yy: number) => (yy >= 69 ? 1900 + yy : 2000 + yy)

/** A space then a zone abbreviation or numeric offset; which of the two, or undefined (the cursor is left as it was). */
function spacedZone(c: Cursor): { minutes: number; numeric: boolean } | undefined {
  const save = c.pos
  if (!c.char(32)) return undefined
  const sign = c.at()
  const numeric = sign === 43 || sign === 45 ? c.numericZone() : undefined
  if (numeric) return { minutes: numeric.minutes, numeric: true }
  c.pos = save + 1
  const abbr = c.abbreviation()
  if (abbr !== undefined) return { minutes: abbr, numeric: false }
  c.pos = save
  return undefined
}

/** Formats that start with a day of one or two digits: Apache, UK, RFC850, Bind, Gravwell, RFC822, RFC1123. */
function fromDay(c: Cursor, first: number): Reading | undefined {
  const sep = c.at()
  c.pos++
  if (sep === 47) {
    if (isUpper(c.at())) {
      const month = c.month()
      if (month < 0 || !c.char(47)) return undefined
      const year = c.digits(4)
      if (year < 0 || !c.char(58)) return undefined
      const clock = c.clock()
      if (!clock) return undefined
      const frac = c.fraction()
      const ms = wall(year, month, first, clock[0], clock[1], clock[2], frac.ms)
      const zone = spacedZone(c)
      if (zone?.numeric) return { format: 'Apache', ms, offset: zone.minutes, shorter: { format: 'ApacheNoTz', ms } }
      return { format: 'ApacheNoTz', ms }
    }
    const month = c.digits(2)
    if (month < 0 || !c.char(47)) return undefined
    const year = c.digits(4)
    if (year < 0 || !c.char(32)) return undefined
    const clock = c.clock()
    if (!clock) return undefined
    const frac = c.fraction()
    return { format: 'UK', ms: wall(year, month, first, clock[0], clock[1], clock[2], frac.ms) }
  }
  if (sep === 45) {
    if (isUpper(c.at())) {
      const month = c.month()
      if (month < 0 || !c.char(45)) return undefined
      const yStart = c.pos
      while (isDigit(c.at()) && c.pos - yStart < 5) c.pos++
      const yLen = c.pos - yStart
      if ((yLen !== 2 && yLen !== 4) || !c.char(32)) return undefined
      const yy = Number(c.text(yStart, yStart + yLen))
      const clock = c.clock()
      if (!clock) return undefined
      const frac = c.fraction()
      if (yLen === 4) return { format: 'Bind', ms: wall(yy, month, first, clock[0], clock[1], clock[2], frac.ms) }
      const ms = wall(fullYear(yy), month, first, clock[0], clock[1], clock[2], frac.ms)
      const zone = spacedZone(c)
      return zone ? { format: 'RFC850', ms, offset: zone.minutes } : undefined
    }
    // Gravwell: month-day-year
    const day = c.digits12()
    if (day < 0 || !c.char(45)) return undefined
    const year = c.digits(4)
    if (year < 0 || !c.char(32)) return undefined
    const clock = c.clock()
    if (!clock) return undefined
    const frac = c.fraction()
    return { format: 'Gravwell', ms: wall(year, first, day, clock[0], clock[1], clock[2], frac.ms) }
  }
  if (sep === 32) {
    const month = c.month()
    if (month < 0 || !c.char(32)) return undefined
    const yStart = c.pos
    while (isDigit(c.at()) && c.pos - yStart < 5) c.pos++
    const yLen = c.pos - yStart
    if ((yLen !== 2 && yLen !== 4) || !c.char(32)) return undefined
    const yy = Number(c.text(yStart, yStart + yLen))
    const clock = c.clock(yLen === 2)
    if (!clock) return undefined
    const frac = c.fraction()
    const ms = wall(yLen === 4 ? yy : fullYear(yy), month, first, clock[0], clock[1], clock[2], frac.ms)
    const zone = spacedZone(c)
    if (!zone) return undefined
    const base = yLen === 4 ? 'RFC1123' : 'RFC822'
    return { format: (zone.numeric ? `${base}Z` : base) as TimestampFormat, ms, offset: zone.minutes }
  }
  return undefined
}

/** Formats that start with a month name: AnsiC, Unix, Ruby, Syslog, SyslogVariant. */
function fromMonth(c: Cursor): Reading | undefined {
  const month = c.month()
  if (month < 0 || !c.char(32)) return undefined
  c.char(32)
  const day = c.digits12()
  if (day < 0 || !c.char(32)) return undefined
  if (isDigit(c.at(c.pos + 2))) {
    const year = c.digits(4)
    if (year < 0 || !c.char(32)) return undefined
    const clock = c.clock()
    if (!clock) return undefined
    const frac = c.fraction()
    return { format: 'SyslogVariant', ms: wall(year, month, day, clock[0], clock[1], clock[2], frac.ms) }
  }
  const clock = c.clock()
  if (!clock) return undefined
  const frac = c.fraction()
  const syslog: Reading = { format: 'Syslog', ms: wall(2000, month, day, clock[0], clock[1], clock[2], frac.ms), yearless: true }
  const afterClock = c.pos
  if (c.char(32)) {
    const year = c.digits(4)
    if (year >= 0) return { format: 'AnsiC', ms: wall(year, month, day, clock[0], clock[1], clock[2], frac.ms), shorter: syslog }
    c.pos = afterClock
    const zone = spacedZone(c)
    if (zone && c.char(32)) {
      const year = c.digits(4)
      if (year >= 0)
        return { format: zone.numeric ? 'Ruby' : 'Unix', ms: wall(year, month, day, clock[0], clock[1], clock[2], frac.ms), offset: zone.minutes, shorter: syslog }
    }
  }
  return syslog
}

/** Unix epochs and LDAP times: a number that is the line's first word. */
function epoch(c: Cursor): Reading | undefined {
  const start = c.pos
  while (isDigit(c.at()) && c.pos - start < 20) c.pos++
  const n = c.pos - start
  const digits = c.text(start, c.pos)
  if (n === 10) {
    const frac = c.fraction()
    if (isLetter(c.at())) return undefined
    return { format: frac.present ? 'UnixMilli' : 'UnixSeconds', ms: Number(digits) * 1000 + frac.ms, instant: true }
  }
  if (isLetter(c.at()) || c.at() === 46) return undefined
  if (n === 13) return { format: 'UnixMs', ms: Number(digits), instant: true }
  if (n === 19) return { format: 'UnixNano', ms: Number(BigInt(digits) / 1_000_000n), instant: true }
  // 100-nanosecond intervals since 1601-01-01
  if (n === 18) return { format: 'LDAP', ms: Number(BigInt(digits) / 10_000n) - 11_644_473_600_000, instant: true }
  return undefined
}

const JOURNALD = '__REALTIME_TIMESTAMP'

/** `__REALTIME_TIMESTAMP=<µs>` (journal export) or `"__REALTIME_TIMESTAMP" : "<µs>"` (journalctl -o json). */
function journald(c: Cursor): Reading | undefined {
  if (c.pos + JOURNALD.length > c.end) return undefined
  for (let k = 0; k < JOURNALD.length; k++) if (c.b[c.pos + k] !== JOURNALD.charCodeAt(k)) return undefined
  c.pos += JOURNALD.length
  c.char(34)
  while (c.at() === 32) c.pos++
  if (!c.char(61) && !c.char(58)) return undefined
  while (c.at() === 32) c.pos++
  c.char(34)
  const start = c.pos
  while (isDigit(c.at()) && c.pos - start < 20) c.pos++
  if (c.pos - start < 1 || c.pos - start > 19) return undefined
  return { format: 'Journald', ms: Math.floor(Number(c.text(start, c.pos)) / 1000), instant: true }
}

const EMPTY = new Uint8Array(0)
const utf8 = new TextEncoder()

export interface TimestampOptions {
  /** The zone of times written without one: an IANA name or an offset; UTC by default. */
  zone?: string
  /** Only this format (the platform's name) is looked for. */
  format?: string
  /** Find nothing: every entry gets its time of receipt. */
  ignore?: boolean
  /** Read every time in `zone`, ignoring the zone or offset the text gives (the platform's `assumelocaltimezone`). */
  ignoreZones?: boolean
}

const YEAR_2000 = Date.UTC(2000, 0, 1)

export class TimestampFinder {
  private readonly zone: Zone
  private readonly admits: ((f: TimestampFormat) => boolean) | undefined
  private readonly ignore: boolean
  private readonly ignoreZones: boolean
  /**
   * One cursor and one buffer per finder, reused by every call: find() runs to its end without yielding, so no two
   * calls share them at once; the cursor lets go of the line when find() returns.
   */
  private readonly cursor = new Cursor()
  private readonly scratch = new Uint8Array(SCAN_BYTES)

  /** Throws an Error naming the problem for an unknown zone or format name. */
  constructor(opts: TimestampOptions = {}) {
    this.zone = zoneOf(opts.zone ?? 'UTC')
    this.ignore = opts.ignore ?? false
    this.ignoreZones = opts.ignoreZones ?? false
    if (opts.format !== undefined && opts.format.trim() !== '') {
      const pinned = timestampFormat(opts.format)
      if (!pinned) throw new Error(`"${opts.format}" is not a timestamp format (one of ${TIMESTAMP_FORMATS.join(', ')})`)
      const admitted = new Set([pinned, ...(ALSO_ADMITS[pinned] ?? [])])
      this.admits = (f) => admitted.has(f)
    }
  }

  /** The time of the leftmost timestamp in the first SCAN_BYTES of `line`, in epoch milliseconds; undefined when none. */
  find(line: string | Uint8Array, receivedAt: number): number | undefined {
    if (this.ignore) return undefined
    // A string is scanned as its UTF-8 bytes (its first SCAN_BYTES of them), written into the finder's own buffer.
    const c =
      typeof line === 'string'
        ? this.cursor.reset(this.scratch, utf8.encodeInto(line.length > SCAN_BYTES ? line.slice(0, SCAN_BYTES) : line, this.scratch).written)
        : this.cursor.reset(line, Math.min(line.byteLength, SCAN_BYTES))
    try {
      return this.scan(c, receivedAt)
    } finally {
      c.reset(EMPTY, 0)
    }
  }

  private scan(c: Cursor, receivedAt: number): number | undefined {
    const text = c.b
    const n = c.end
    let lineStart = 0
    while (lineStart < n && (text[lineStart] === 32 || text[lineStart] === 9)) lineStart++
    let prev = 32
    for (let i = 0; i < n; i++) {
      const ch = text[i]!
      let r: Reading | undefined
      if (isDigit(ch)) {
        if (!isDigit(prev) && !isLetter(prev)) r = this.atDigit(c, i, i === lineStart)
      } else if (isUpper(ch)) {
        if (!isLetter(prev)) {
          c.pos = i
          r = fromMonth(c)
        }
      } else if (ch === 95 && c.at(i + 1) === 95) {
        c.pos = i
        r = journald(c)
      }
      for (; r !== undefined; r = r.shorter) {
        if (this.admits && !this.admits(r.format)) continue
        const ms = this.resolve(r, receivedAt)
        if (Number.isFinite(ms)) return ms
        break
      }
      prev = ch
    }
    return undefined
  }

  private atDigit(c: Cursor, i: number, lineStart: boolean): Reading | undefined {
    c.pos = i
    let n = 0
    while (n < 5 && isDigit(c.at(i + n))) n++
    if (n === 4) {
      const year = c.digits(4)
      return fromYear(c, year)
    }
    if (n <= 2) {
      const first = c.digits12()
      return fromDay(c, first)
    }
    if (lineStart && n === 5) return epoch(c)
    return undefined
  }

  private resolve(r: Reading, receivedAt: number): number {
    if (Number.isNaN(r.ms)) return Number.NaN
    if (r.instant) return r.ms
    if (r.offset !== undefined && !this.ignoreZones) return r.ms - r.offset * 60_000
    if (!r.yearless) return this.zone.toUtc(r.ms)
    // Syslog: the year of receipt, the year before or the year after, whichever is closest to the receipt.
    const receivedYear = new Date(receivedAt).getUTCFullYear()
    const inYear = r.ms - YEAR_2000
    let best = Number.NaN
    for (const year of [receivedYear - 1, receivedYear, receivedYear + 1]) {
      const d = new Date(inYear + YEAR_2000)
      const month = d.getUTCMonth() + 1
      const day = d.getUTCDate()
      const local = wall(year, month, day, d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds())
      if (Number.isNaN(local)) continue
      const t = this.zone.toUtc(local)
      if (Number.isNaN(best) || Math.abs(t - receivedAt) < Math.abs(best - receivedAt)) best = t
    }
    return best
  }
}
