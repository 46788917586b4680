// The zone a timestamp without one is read in: a fixed offset (`UTC`, `+02:00`, `-0530`) or an IANA name
// (`Europe/Paris`), whose offset follows daylight saving time.
import { ConfigError } from '../../runtime/config'

export interface Zone {
  name: string
  /** Epoch milliseconds of a wall-clock time in this zone (the wall time given as if it were UTC). */
  toUtc(wallAsUtc: number): number
}

const HOUR = 3_600_000

export function parseZone(name: string, raw: string): Zone {
  const value = raw.trim()
  if (/^(utc|z|gmt)$/i.test(value)) return { name: 'UTC', toUtc: (t) => t }
  const m = /^([+-])(\d{2}):?(\d{2})$/.exec(value)
  if (m) {
    const offset = (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) * 60_000
    if (Number(m[2]) > 14 || Number(m[3]) > 59) throw new ConfigError(`${name}: "${raw}" is not a zone offset (examples: +02:00, -0530)`)
    return { name: value, toUtc: (t) => t - offset }
  }
  let format: Intl.DateTimeFormat
  try {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: value,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    })
  } catch {
    throw new ConfigError(`${name}: "${raw}" is neither UTC, an offset (+02:00) nor an IANA zone name (Europe/Paris)`)
  }
  /** The zone's offset at the instant `t`. */
  const offsetAt = (t: number): number => {
    const parts: Record<string, number> = {}
    for (const p of format.formatToParts(t)) if (p.type !== 'literal') parts[p.type] = Number(p.value)
    const wall = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!)
    return wall - Math.floor(t / 1000) * 1000
  }
  // Offsets by the wall-clock hour: Intl costs microseconds, and the messages of a moment share their hour. A zone's
  // offset changes on an hour or half-hour boundary; the half-hour changes (Lord Howe) are read a half hour late.
  const byHour = new Map<number, number>()
  return {
    name: value,
    toUtc(wall: number): number {
      const hour = Math.floor(wall / HOUR)
      let offset = byHour.get(hour)
      if (offset === undefined) {
        // The offset at the guess, then at the instant it gives: they differ only around a change.
        const first = offsetAt(hour * HOUR)
        offset = offsetAt(hour * HOUR - first)
        if (byHour.size >= 4096) byHour.clear()
        byHour.set(hour, offset)
      }
      return wall - offset
    },
  }
}
