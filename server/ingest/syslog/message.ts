// What a syslog message is (RFC 5424, RFC 3164, or a line that is neither) and its own time, read from the bytes of
// its header without decoding the message: this runs on every message a listener receives.
// - RFC 5424: `<PRI>VERSION TIMESTAMP ...`, the timestamp an RFC 3339 time or `-` (none).
// - RFC 3164: `<PRI>` not followed by a version, then `Mmm dd hh:mm:ss` (no year, no zone: read in the configured
//   zone, in the year that puts it nearest the receipt, so a December message received in January is last year's), or
//   an RFC 3339 time (rsyslog's forwarding formats write one).
// - Anything else is kept whole as `raw`; a line that starts with either timestamp (a PRI-less syslog line, as a
//   relay that strips the PRI writes it) takes its time too.
// A message without a valid time takes the time of receipt. The engine's `syslog` module reads the same fields at
// search time (engine/modules/syslog.ts).
import type { Zone } from './zone'

export type SyslogFormat = 'rfc5424' | 'rfc3164' | 'raw'

const LT = 0x3c
const GT = 0x3e
const SP = 0x20
const D0 = 0x30
const D9 = 0x39
const isDigit = (c: number | undefined) => c !== undefined && c >= D0 && c <= D9

/** Month numbers (0-11) by the three letters' code, `Jan` → 0. */
const MONTHS = new Map(['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'].map((m, i) => [code3(m.charCodeAt(0), m.charCodeAt(1), m.charCodeAt(2)), i]))
function code3(a: number, b: number, c: number): number {
  return (a << 16) | (b << 8) | c
}

export interface MessageInfo {
  format: SyslogFormat
  /** Epoch milliseconds: the message's own time when valid, else `receivedAt`. */
  ts: number
}

export function readMessage(m: Uint8Array, receivedAt: number, zone: Zone): MessageInfo {
  let i = 0
  let format: SyslogFormat = 'raw'
  if (m[0] === LT) {
    let pri = 0
    let j = 1
    while (j < 4 && isDigit(m[j])) pri = pri * 10 + (m[j++]! - D0)
    if (j > 1 && m[j] === GT && pri <= 191) {
      i = j + 1
      // VERSION: 1 to 99, then a space.
      if (isDigit(m[i]) && m[i] !== D0 && (m[i + 1] === SP || (isDigit(m[i + 1]) && m[i + 2] === SP))) {
        const at = m[i + 1] === SP ? i + 2 : i + 3
        if (m[at] === 0x2d /* - */) return { format: 'rfc5424', ts: receivedAt }
        return { format: 'rfc5424', ts: rfc3339At(m, at) ?? receivedAt }
      }
      format = 'rfc3164'
    }
  }
  return { format, ts: bsdTime(m, i, receivedAt, zone) ?? rfc3339At(m, i) ?? receivedAt }
}

/**
 * The RFC 3339 time that starts at `i` and ends at a space or the end (`2003-10-11T22:14:15.003Z`, `...+02:00`), in
 * milliseconds (fraction digits past milliseconds dropped); undefined when there is none. Read from the bytes: a
 * regular expression over a decoded string cost several microseconds a message.
 */
function rfc3339At(m: Uint8Array, i: number): number | undefined {
  if (m.length < i + 20) return undefined
  for (const k of [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]) if (!isDigit(m[i + k])) return undefined
  if (m[i + 4] !== 0x2d || m[i + 7] !== 0x2d || m[i + 13] !== 0x3a || m[i + 16] !== 0x3a) return undefined
  if (m[i + 10] !== 0x54 && m[i + 10] !== 0x74) return undefined
  const year = two(m, i) * 100 + two(m, i + 2)
  const month = two(m, i + 5)
  const day = two(m, i + 8)
  const hour = two(m, i + 11)
  const minute = two(m, i + 14)
  const second = two(m, i + 17)
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return undefined
  let at = i + 19
  let ms = 0
  if (m[at] === 0x2e) {
    at++
    const from = at
    let scale = 100
    while (isDigit(m[at]) && at - from < 9) {
      ms += (m[at]! - D0) * scale
      scale /= 10
      at++
    }
    if (at === from) return undefined
    ms = Math.floor(ms)
  }
  let offset = 0
  if (m[at] === 0x5a || m[at] === 0x7a) at++
  else if ((m[at] === 0x2b || m[at] === 0x2d) && isDigit(m[at + 1]) && isDigit(m[at + 2]) && m[at + 3] === 0x3a && isDigit(m[at + 4]) && isDigit(m[at + 5])) {
    const oh = two(m, at + 1)
    const om = two(m, at + 4)
    if (oh > 23 || om > 59) return undefined
    offset = (m[at] === 0x2d ? -1 : 1) * (oh * 60 + om) * 60_000
    at += 6
  } else return undefined
  if (at < m.length && m[at] !== SP) return undefined
  return Date.UTC(year, month - 1, day, hour, minute, second, ms) - offset
}

const two = (m: Uint8Array, i: number) => (m[i]! - D0) * 10 + (m[i + 1]! - D0)

/** `Mmm dd hh:mm:ss` at `i` (the day space-padded or zero-padded), followed by a space or the end. */
function bsdTime(m: Uint8Array, i: number, receivedAt: number, zone: Zone): number | undefined {
  if (m.length < i + 15) return undefined
  const month = MONTHS.get(code3(m[i]!, m[i + 1]!, m[i + 2]!))
  if (month === undefined || m[i + 3] !== SP || m[i + 6] !== SP || m[i + 9] !== 0x3a || m[i + 12] !== 0x3a) return undefined
  if (!(m[i + 4] === SP || isDigit(m[i + 4])) || !isDigit(m[i + 5])) return undefined
  for (const k of [7, 8, 10, 11, 13, 14]) if (!isDigit(m[i + k])) return undefined
  let end = i + 15
  let ms = 0
  // rsyslog's high-precision variant adds a fraction; its digits past milliseconds are dropped.
  if (m[end] === 0x2e && isDigit(m[end + 1])) {
    let scale = 100
    end++
    while (isDigit(m[end])) {
      ms += (m[end]! - D0) * scale
      scale /= 10
      end++
    }
    ms = Math.floor(ms)
  }
  if (end < m.length && m[end] !== SP) return undefined
  const day = m[i + 4] === SP ? m[i + 5]! - D0 : two(m, i + 4)
  const hour = two(m, i + 7)
  const minute = two(m, i + 10)
  const second = two(m, i + 13)
  if (day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return undefined
  const at = (year: number) => zone.toUtc(Date.UTC(year, month, day, hour, minute, second, ms))
  // The year nearest the receipt: the sender's clock is near ours, a year is not.
  const year = new Date(receivedAt).getUTCFullYear()
  let best: number | undefined
  for (const y of [year - 1, year, year + 1]) {
    const t = at(y)
    // Feb 29 of a year without one rolls into March: not this message's date.
    if (new Date(Date.UTC(y, month, day)).getUTCDate() !== day) continue
    if (best === undefined || Math.abs(t - receivedAt) < Math.abs(best - receivedAt)) best = t
  }
  return best
}
