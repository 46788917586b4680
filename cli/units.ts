// Durations and sizes typed on the command line. A duration is one or more parts, largest first, as people and
// Go's time.ParseDuration write them (`1h30m`, `90s`, `2d12h`, `500ms`); a bare number is seconds, as the
// server's configuration reads it. A size is a number with an optional unit: decimal units count in powers of
// 1000 (`kB`/`KB`, `MB`, `GB`, `TB`), binary units in powers of 1024 (`KiB`, `MiB`, `GiB`, `TiB`), so `10MB` is
// 10,000,000 bytes and `10MiB` 10,485,760; a bare number is bytes. Anything else is bad usage naming the option.
import { UsageError } from './errors'

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }
const DURATION_ORDER = ['d', 'h', 'm', 's', 'ms']

/** Milliseconds of a positive duration; `option` names it in the message. */
export function parseDuration(option: string, raw: string): number {
  const text = raw.trim()
  const bad = () => new UsageError(`${option}: "${raw}" is not a duration (examples: 90s, 45m, 1h30m, 2d; a bare number is seconds)`)
  if (/^\d+$/.test(text)) {
    const ms = Number(text) * 1000
    if (ms <= 0 || !Number.isSafeInteger(ms)) throw new UsageError(`${option}: must be a positive duration`)
    return ms
  }
  const parts = [...text.matchAll(/(\d+)(ms|s|m|h|d)/g)]
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) throw bad()
  let ms = 0
  let last = -1
  for (const [, n, unit] of parts) {
    // each unit once, largest first: `30m1h` or `1h1h` is a typo, not a sum
    const rank = DURATION_ORDER.indexOf(unit!)
    if (rank <= last) throw bad()
    last = rank
    ms += Number(n) * DURATION_UNITS[unit!]!
  }
  if (ms <= 0 || !Number.isSafeInteger(ms)) throw new UsageError(`${option}: must be a positive duration`)
  return ms
}

/** A duration as parseDuration reads it back, largest units first (`1h30m`, `250ms`). */
export function formatDuration(ms: number): string {
  let rest = Math.max(0, Math.round(ms))
  let out = ''
  for (const unit of DURATION_ORDER) {
    const n = Math.floor(rest / DURATION_UNITS[unit]!)
    if (n > 0) out += `${n}${unit}`
    rest -= n * DURATION_UNITS[unit]!
  }
  return out || '0s'
}

const SIZE_UNITS: Record<string, number> = {
  '': 1, b: 1,
  kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12,
  kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3, tib: 1024 ** 4,
}

/** Bytes of a positive size; `option` names it in the message. Units are case-insensitive (`10mb` = `10MB`). */
export function parseSize(option: string, raw: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(raw.trim())
  const unit = m ? SIZE_UNITS[m[2]!.toLowerCase()] : undefined
  if (!m || unit === undefined) throw new UsageError(`${option}: "${raw}" is not a size (examples: 500000, 512kB, 10MB, 1MiB)`)
  const bytes = Math.floor(Number(m[1]) * unit)
  if (bytes <= 0 || !Number.isSafeInteger(bytes)) throw new UsageError(`${option}: must be a positive size`)
  return bytes
}

/** What --help says about sizes. */
export const SIZE_HELP = 'kB, MB, GB are powers of 1000; KiB, MiB, GiB powers of 1024; a bare number is bytes'
/** What --help says about durations. */
export const DURATION_HELP = 'e.g. 90s, 45m, 1h30m, 2d; a bare number is seconds'
