// Go time layouts ("Mon Jan 2 15:04:05 MST 2006", as Go's time package writes them) for the time module: formatting
// a time and parsing text, in an IANA time zone.
//
// Layout elements (Go's): January Jan Monday Mon 01 1 02 2 _2 002 __2 15 03 3 04 4 05 5 2006 06 PM pm MST, the zones
// -0700 -07:00 -07 -070000 -07:00:00 and their Z forms (Z0700: `Z` for UTC), and fractions of a second `.000`
// (exactly that many digits) or `.999` (trailing zeros dropped), also with a comma. Anything else is literal text.
// Parsing follows Go: `.999`/`.000` are optional after seconds in the text (a fraction is read when present), a zone
// abbreviation is UTC/GMT, the zone's own abbreviation at that time, or else read as UTC (Go makes up a zone of
// offset 0). A time without a zone in the text is read in the given zone. Times are kept in milliseconds: digits past
// the third of a fraction are read and dropped.

type Chunk =
  | { lit: string }
  | { std: 'longMonth' | 'month' | 'numMonth' | 'zeroMonth' | 'longWeekDay' | 'weekDay' | 'day' | 'underDay' | 'zeroDay' | 'yearDay' | 'underYearDay' | 'hour' | 'hour12' | 'zeroHour12' | 'minute' | 'zeroMinute' | 'second' | 'zeroSecond' | 'longYear' | 'year' | 'PM' | 'pm' | 'tz' }
  | { zone: { z: boolean; colon: boolean; seconds: boolean; minutes: boolean } }
  | { frac: { digits: number; trim: boolean; sep: string } }

const LONG_MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December']
const LONG_DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday']

const isDigit = (s: string, i: number) => i < s.length && s[i]! >= '0' && s[i]! <= '9'

/** A layout cut into its elements and literal text. */
export function parseLayout(layout: string): Chunk[] {
  const out: Chunk[] = []
  let lit = ''
  const push = (c: Chunk) => {
    if (lit) out.push({ lit })
    lit = ''
    out.push(c)
  }
  const zoneForms: [string, Chunk][] = [
    ['-07:00:00', { zone: { z: false, colon: true, seconds: true, minutes: true } }],
    ['-070000', { zone: { z: false, colon: false, seconds: true, minutes: true } }],
    ['-07:00', { zone: { z: false, colon: true, seconds: false, minutes: true } }],
    ['-0700', { zone: { z: false, colon: false, seconds: false, minutes: true } }],
    ['-07', { zone: { z: false, colon: false, seconds: false, minutes: false } }],
    ['Z07:00:00', { zone: { z: true, colon: true, seconds: true, minutes: true } }],
    ['Z070000', { zone: { z: true, colon: false, seconds: true, minutes: true } }],
    ['Z07:00', { zone: { z: true, colon: true, seconds: false, minutes: true } }],
    ['Z0700', { zone: { z: true, colon: false, seconds: false, minutes: true } }],
    ['Z07', { zone: { z: true, colon: false, seconds: false, minutes: false } }],
  ]
  const words: [string, Chunk][] = [
    ['January', { std: 'longMonth' }],
    ['Jan', { std: 'month' }],
    ['Monday', { std: 'longWeekDay' }],
    ['Mon', { std: 'weekDay' }],
    ['MST', { std: 'tz' }],
    ['2006', { std: 'longYear' }],
    ['002', { std: 'yearDay' }],
    ['__2', { std: 'underYearDay' }],
    ['_2', { std: 'underDay' }],
    ['01', { std: 'zeroMonth' }],
    ['02', { std: 'zeroDay' }],
    ['03', { std: 'zeroHour12' }],
    ['04', { std: 'zeroMinute' }],
    ['05', { std: 'zeroSecond' }],
    ['06', { std: 'year' }],
    ['15', { std: 'hour' }],
    ['PM', { std: 'PM' }],
    ['pm', { std: 'pm' }],
    ['1', { std: 'numMonth' }],
    ['2', { std: 'day' }],
    ['3', { std: 'hour12' }],
    ['4', { std: 'minute' }],
    ['5', { std: 'second' }],
  ]
  for (let i = 0; i < layout.length; ) {
    const c = layout[i]!
    if ((c === '.' || c === ',') && (layout[i + 1] === '0' || layout[i + 1] === '9')) {
      const d = layout[i + 1]!
      let j = i + 1
      while (layout[j] === d) j++
      if (!isDigit(layout, j)) {
        push({ frac: { digits: j - i - 1, trim: d === '9', sep: c } })
        i = j
        continue
      }
    }
    const zone = zoneForms.find(([w]) => layout.startsWith(w, i))
    if (zone) {
      push(zone[1])
      i += zone[0].length
      continue
    }
    const w = words.find(([w]) => layout.startsWith(w, i))
    // Go reads `Mon` only when not followed by a lower-case letter (`Month` is literal), and `Jan` likewise.
    if (w && !((w[0] === 'Jan' || w[0] === 'Mon') && /[a-z]/.test(layout[i + 3] ?? ''))) {
      push(w[1])
      i += w[0].length
      continue
    }
    lit += c
    i++
  }
  if (lit) out.push({ lit })
  return out
}

interface Zoned {
  /** The zone's offset from UTC at that instant, in minutes. */
  offset: number
  abbr: string
}

const formatters = new Map<string, Intl.DateTimeFormat>()

/** Whether `tz` names a zone Intl knows (IANA names, and UTC). */
export function validZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz })
    return true
  } catch {
    return false
  }
}

/** The offset (minutes east of UTC) and abbreviation of `tz` at the instant `ms`. */
export function zoneAt(tz: string, ms: number): Zoned {
  if (tz === 'UTC') return { offset: 0, abbr: 'UTC' }
  // Zones change offset on whole minutes: the last answer holds for the rest of its minute (entries come in time
  // order, so most lookups hit it).
  const minute = Math.floor(ms / 60_000)
  const last = lastZone.get(tz)
  if (last && last.minute === minute) return last.zoned
  const zoned = lookupZone(tz, ms)
  lastZone.set(tz, { minute, zoned })
  return zoned
}

const lastZone = new Map<string, { minute: number; zoned: Zoned }>()

function lookupZone(tz: string, ms: number): Zoned {
  let f = formatters.get(tz)
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric', timeZoneName: 'short' })
    formatters.set(tz, f)
  }
  const parts = Object.fromEntries(f.formatToParts(new Date(ms)).map((p) => [p.type, p.value]))
  const wall = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second))
  const offset = Math.round((wall - Math.floor(ms / 1000) * 1000) / 60_000)
  let abbr = parts.timeZoneName ?? ''
  // Intl writes zones without a name as GMT+2; Go writes them as +02.
  const gmt = /^GMT([+-])(\d{1,2})(?::(\d{2}))?$/.exec(abbr)
  if (gmt) abbr = `${gmt[1]}${gmt[2]!.padStart(2, '0')}${gmt[3] && gmt[3] !== '00' ? gmt[3] : ''}`
  if (abbr === 'GMT' && offset === 0 && tz !== 'GMT' && !/London|Dublin|Lisbon|Reykjavik|Abidjan|Accra|Dakar/.test(tz)) abbr = 'UTC'
  return { offset, abbr }
}

const pad = (n: number, w: number, c = '0') => String(n).padStart(w, c)

/** `ms` written with a Go layout, in zone `tz`. */
export function formatTime(ms: number, chunks: readonly Chunk[], tz: string): string {
  const z = zoneAt(tz, ms)
  const d = new Date(ms + z.offset * 60_000)
  const [Y, M, D, h, m, s, frac, wd] = [d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds(), d.getUTCDay()]
  const yday = Math.floor((Date.UTC(Y, M, D) - Date.UTC(Y, 0, 1)) / 86_400_000) + 1
  let out = ''
  for (const c of chunks) {
    if ('lit' in c) out += c.lit
    else if ('frac' in c) {
      let digits = pad(frac, 3) + '0'.repeat(Math.max(0, c.frac.digits - 3))
      digits = digits.slice(0, c.frac.digits)
      if (c.frac.trim) digits = digits.replace(/0+$/, '')
      if (digits !== '') out += c.frac.sep + digits
    } else if ('zone' in c) {
      const { z: zForm, colon, seconds, minutes } = c.zone
      if (zForm && z.offset === 0) {
        out += 'Z'
        continue
      }
      const a = Math.abs(z.offset)
      out += `${z.offset < 0 ? '-' : '+'}${pad(Math.floor(a / 60), 2)}`
      if (minutes) out += `${colon ? ':' : ''}${pad(a % 60, 2)}`
      if (seconds) out += `${colon ? ':' : ''}00`
    } else {
      switch (c.std) {
        case 'longMonth': out += LONG_MONTHS[M]; break
        case 'month': out += LONG_MONTHS[M]!.slice(0, 3); break
        case 'numMonth': out += M + 1; break
        case 'zeroMonth': out += pad(M + 1, 2); break
        case 'longWeekDay': out += LONG_DAYS[wd]; break
        case 'weekDay': out += LONG_DAYS[wd]!.slice(0, 3); break
        case 'day': out += D; break
        case 'underDay': out += pad(D, 2, ' '); break
        case 'zeroDay': out += pad(D, 2); break
        case 'yearDay': out += pad(yday, 3); break
        case 'underYearDay': out += pad(yday, 3, ' '); break
        case 'hour': out += pad(h, 2); break
        case 'hour12': out += h % 12 === 0 ? 12 : h % 12; break
        case 'zeroHour12': out += pad(h % 12 === 0 ? 12 : h % 12, 2); break
        case 'minute': out += m; break
        case 'zeroMinute': out += pad(m, 2); break
        case 'second': out += s; break
        case 'zeroSecond': out += pad(s, 2); break
        case 'longYear': out += pad(Y, 4); break
        case 'year': out += pad(Y % 100, 2); break
        case 'PM': out += h >= 12 ? 'PM' : 'AM'; break
        case 'pm': out += h >= 12 ? 'pm' : 'am'; break
        case 'tz': out += z.abbr; break
      }
    }
  }
  return out
}

/** The wall time (fields in a zone) as an instant: the zone's offset at that time (two steps, for DST changes). */
function fromWall(wall: number, tz: string): number {
  const first = wall - zoneAt(tz, wall).offset * 60_000
  return wall - zoneAt(tz, first).offset * 60_000
}

/**
 * Text read with a Go layout (the whole text must match), in milliseconds; null when it does not match. A time
 * without a zone is read in `tz`; a layout without a year gives the year `defaultYear`.
 */
export function parseTime(text: string, chunks: readonly Chunk[], tz: string, defaultYear = 1970): number | null {
  let i = 0
  let Y = defaultYear
  let M = 0
  let D = 1
  let h = 0
  let m = 0
  let s = 0
  let ms = 0
  let pm: boolean | undefined
  let yday = -1
  let offset: number | undefined
  let abbr: string | undefined
  const num = (min: number, max: number): number | null => {
    let j = i
    while (j < text.length && j - i < max && isDigit(text, j)) j++
    if (j - i < min) return null
    const n = Number(text.slice(i, j))
    i = j
    return n
  }
  const name = (names: readonly string[]): number | null => {
    for (let k = 0; k < names.length; k++) {
      if (text.slice(i, i + names[k]!.length).toLowerCase() === names[k]!.toLowerCase()) {
        i += names[k]!.length
        return k
      }
    }
    return null
  }
  const readFrac = () => {
    const start = i
    while (isDigit(text, i)) i++
    ms = Math.floor(Number(`0.${text.slice(start, i) || '0'}`) * 1000 + 1e-9)
  }
  for (let k = 0; k < chunks.length; k++) {
    const c = chunks[k]!
    let n: number | null = 0
    if ('lit' in c) {
      if (!text.startsWith(c.lit, i)) return null
      i += c.lit.length
      continue
    }
    if ('frac' in c) {
      if (c.frac.trim) {
        if (text[i] !== '.' && text[i] !== ',') continue
        i++
      } else {
        if (text[i] !== c.frac.sep) return null
        i++
        if (!/^\d+$/.test(text.slice(i, i + c.frac.digits))) return null
      }
      readFrac()
      continue
    }
    if ('zone' in c) {
      if (c.zone.z && text[i] === 'Z') {
        i++
        offset = 0
        continue
      }
      const sign = text[i]
      if (sign !== '+' && sign !== '-') return null
      i++
      const hh = num(2, 2)
      if (hh === null) return null
      let mm = 0
      if (c.zone.minutes) {
        if (c.zone.colon && text[i++] !== ':') return null
        const x = num(2, 2)
        if (x === null) return null
        mm = x
      }
      if (c.zone.seconds) {
        if (c.zone.colon && text[i++] !== ':') return null
        if (num(2, 2) === null) return null
      }
      offset = (sign === '-' ? -1 : 1) * (hh * 60 + mm)
      continue
    }
    switch (c.std) {
      case 'longMonth': n = name(LONG_MONTHS); if (n !== null) M = n; break
      case 'month': n = name(LONG_MONTHS.map((x) => x.slice(0, 3))); if (n !== null) M = n; break
      case 'numMonth': case 'zeroMonth': n = num(c.std === 'zeroMonth' ? 2 : 1, 2); if (n !== null) M = n - 1; break
      case 'longWeekDay': n = name(LONG_DAYS); break
      case 'weekDay': n = name(LONG_DAYS.map((x) => x.slice(0, 3))); break
      case 'underDay': if (text[i] === ' ') i++; n = num(1, 2); if (n !== null) D = n; break
      case 'day': case 'zeroDay': n = num(c.std === 'zeroDay' ? 2 : 1, 2); if (n !== null) D = n; break
      case 'yearDay': case 'underYearDay': while (c.std === 'underYearDay' && text[i] === ' ') i++; n = num(1, 3); if (n !== null) yday = n; break
      case 'hour': n = num(1, 2); if (n !== null) h = n; break
      case 'hour12': case 'zeroHour12': n = num(c.std === 'zeroHour12' ? 2 : 1, 2); if (n !== null) h = n; break
      case 'minute': case 'zeroMinute': n = num(c.std === 'zeroMinute' ? 2 : 1, 2); if (n !== null) m = n; break
      case 'second': case 'zeroSecond':
        n = num(c.std === 'zeroSecond' ? 2 : 1, 2)
        if (n !== null) s = n
        // Go reads a fraction after the seconds even when the layout has none.
        if (n !== null && (text[i] === '.' || text[i] === ',') && isDigit(text, i + 1) && !(chunks[k + 1] && 'frac' in chunks[k + 1]!)) {
          i++
          readFrac()
        }
        break
      case 'longYear': n = num(4, 4); if (n !== null) Y = n; break
      case 'year': n = num(2, 2); if (n !== null) Y = n >= 69 ? 1900 + n : 2000 + n; break
      case 'PM': case 'pm': {
        const t = text.slice(i, i + 2).toUpperCase()
        if (t !== 'AM' && t !== 'PM') return null
        pm = t === 'PM'
        i += 2
        break
      }
      case 'tz': {
        const mm = /^(?:UTC|GMT|[A-Z]{3,5}|[+-]\d{2,4})/.exec(text.slice(i))
        if (!mm) return null
        abbr = mm[0]
        i += abbr.length
        break
      }
    }
    if (n === null) return null
  }
  if (i !== text.length) return null
  if (pm !== undefined) {
    if (h < 1 || h > 12) return null
    h = (h % 12) + (pm ? 12 : 0)
  }
  if (M < 0 || M > 11 || D < 1 || D > 31 || h > 23 || m > 59 || s > 59) return null
  let wall = Date.UTC(Y, M, D, h, m, s, ms)
  if (yday > 0) wall = Date.UTC(Y, 0, 1, h, m, s, ms) + (yday - 1) * 86_400_000
  else if (new Date(wall).getUTCDate() !== D) return null
  if (offset !== undefined) return wall - offset * 60_000
  if (abbr !== undefined) {
    if (abbr === 'UTC' || abbr === 'GMT') return wall
    const guess = fromWall(wall, tz)
    if (zoneAt(tz, guess).abbr === abbr) return guess
    const num = /^([+-])(\d{2})(\d{2})?$/.exec(abbr)
    if (num) return wall - (num[1] === '-' ? -1 : 1) * (Number(num[2]) * 60 + Number(num[3] ?? 0)) * 60_000
    return wall
  }
  return fromWall(wall, tz)
}

/** The layouts tried, in order, when the query gives none (the forms logs use most; Go's named layouts first). */
export const AUTO_LAYOUTS = [
  '2006-01-02T15:04:05Z07:00',
  '2006-01-02T15:04:05',
  '2006-01-02 15:04:05Z07:00',
  '2006-01-02 15:04:05 -0700',
  '2006-01-02 15:04:05 MST',
  '2006-01-02 15:04:05',
  '2006-01-02T15:04:05-0700',
  'Mon, 02 Jan 2006 15:04:05 MST',
  'Mon, 02 Jan 2006 15:04:05 -0700',
  'Monday, 02-Jan-06 15:04:05 MST',
  'Mon Jan _2 15:04:05 2006',
  'Mon Jan _2 15:04:05 MST 2006',
  'Mon Jan 02 15:04:05 -0700 2006',
  '02/Jan/2006:15:04:05 -0700',
  '2006/01/02 15:04:05',
  '01/02/2006 15:04:05',
  'Jan _2 15:04:05',
  'Jan _2 2006 15:04:05',
  '02 Jan 06 15:04 MST',
  '02 Jan 06 15:04 -0700',
  '2006-01-02',
].map(parseLayout)

/** Text read by the first automatic layout that matches, or as a Unix time (seconds, ms, µs or ns by its digits). */
export function parseAuto(text: string, tz: string, defaultYear: number): number | null {
  const t = text.trim()
  const unix = /^(\d{9,10})(?:\.(\d{1,9}))?$/.exec(t)
  if (unix) return Number(unix[1]) * 1000 + Math.floor(Number(`0.${unix[2] ?? '0'}`) * 1000)
  if (/^\d{13}$/.test(t)) return Number(t)
  if (/^\d{16}$/.test(t)) return Math.floor(Number(t) / 1000)
  if (/^\d{19}$/.test(t)) return Number(BigInt(t) / 1_000_000n)
  for (const layout of AUTO_LAYOUTS) {
    const ms = parseTime(t, layout, tz, defaultYear)
    if (ms !== null) return ms
  }
  return null
}
