// Enumerated values: what modules attach to an entry as it goes through the pipeline.
//
// A value is one of the platform's types, kept as cheap JS values where one fits:
//   string             string
//   integer, float     number (an integer is a number with Number.isInteger true: a float that happens to be whole
//                      prints without a fraction, as on the platform; sums of integers past 2^53 lose precision)
//   boolean            boolean
//   IP                 IPValue (IPv4 or IPv6; its canonical text and its bytes, for subnet tests)
//   time               TimeValue (milliseconds since the epoch)
//   duration           DurationValue (nanoseconds, as Go's time.Duration, which the platform prints)
//   bytes              Uint8Array (DATA, and values that are not text)
// Absent values are `undefined`; a module that finds nothing for a name sets nothing.

export class IPValue {
  constructor(
    /** Canonical text: dotted quad, or RFC 5952 for IPv6. */
    readonly text: string,
    /** 4 or 16 bytes. */
    readonly bytes: Uint8Array,
  ) {}
  toString(): string {
    return this.text
  }
  get v4(): boolean {
    return this.bytes.length === 4
  }
}

export class TimeValue {
  constructor(readonly ms: number) {}
  toString(): string {
    return Number.isFinite(this.ms) ? new Date(this.ms).toISOString().replace('.000Z', 'Z') : String(this.ms)
  }
}

export class DurationValue {
  constructor(readonly ns: number) {}
  toString(): string {
    return goDuration(this.ns)
  }
}

export type Value = string | number | boolean | IPValue | TimeValue | DurationValue | Uint8Array

export type ValueType = 'string' | 'integer' | 'float' | 'boolean' | 'ip' | 'time' | 'duration' | 'bytes'

export function typeOf(v: Value): ValueType {
  switch (typeof v) {
    case 'string':
      return 'string'
    case 'number':
      return Number.isInteger(v) ? 'integer' : 'float'
    case 'boolean':
      return 'boolean'
  }
  if (v instanceof IPValue) return 'ip'
  if (v instanceof TimeValue) return 'time'
  if (v instanceof DurationValue) return 'duration'
  return 'bytes'
}

const decoder = new TextDecoder()

/** The text of a value as the clients show it (ValueStr, table cells, chart keys). */
export function valueText(v: Value | undefined): string {
  if (v === undefined) return ''
  if (typeof v === 'string') return v
  if (typeof v === 'number') return numberText(v)
  if (v instanceof Uint8Array) return decoder.decode(v)
  return String(v)
}

/** Numbers as the platform prints them: integers without a fraction, floats in the shortest form that round-trips. */
export function numberText(n: number): string {
  if (Number.isNaN(n)) return 'NaN'
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : '-Inf'
  return String(n)
}

/**
 * The number a value stands for: numbers as they are, strings and bytes parsed as decimal (integer or float, with an
 * optional sign and exponent; surrounding blanks allowed), booleans 1/0, durations in nanoseconds, times in
 * milliseconds since the epoch; null when it is no number (aggregates skip such values, as the platform does).
 */
export function toNumber(v: Value | undefined): number | null {
  if (v === undefined) return null
  if (typeof v === 'number') return v
  if (typeof v === 'string') return parseNumber(v)
  if (typeof v === 'boolean') return v ? 1 : 0
  if (v instanceof Uint8Array) return v.byteLength > 64 ? null : parseNumber(decoder.decode(v))
  if (v instanceof DurationValue) return v.ns
  if (v instanceof TimeValue) return v.ms
  return null
}

const NUMBER = /^\s*[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|0[xX][0-9a-fA-F]+)\s*$/

/** A decimal (or 0x hexadecimal) number in text; null for anything else (empty text included). */
export function parseNumber(s: string): number | null {
  if (!NUMBER.test(s)) return null
  const t = s.trim()
  const n = /^[+-]?0[xX]/.test(t) ? (t.startsWith('-') ? -Number.parseInt(t.slice(1), 16) : Number.parseInt(t.replace(/^\+/, ''), 16)) : Number(t)
  return Number.isNaN(n) ? null : n
}

/**
 * A value read from text as its most specific type: an integer or float when the whole text is a number, else the
 * text. Modules that read numbers from text (kv, fields, regex captures) keep strings; filters and aggregates
 * convert with toNumber when they compare or add.
 */
export function inferValue(s: string): Value {
  return parseNumber(s) ?? s
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/

/** An IP address from its text (IPv4 dotted quad or IPv6), null when the text is none. */
export function parseIP(s: string): IPValue | null {
  const m = IPV4.exec(s)
  if (m) return new IPValue(s, Uint8Array.of(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4])))
  if (!s.includes(':') || s.length > 45) return null
  const bytes = parseIPv6(s)
  return bytes ? new IPValue(formatIPv6(bytes), bytes) : null
}

function parseIPv6(s: string): Uint8Array | null {
  let text = s
  const tail: number[] = []
  const lastColon = text.lastIndexOf(':')
  const dotted = text.slice(lastColon + 1)
  if (dotted.includes('.')) {
    const m = IPV4.exec(dotted)
    if (!m) return null
    tail.push(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]))
    text = `${text.slice(0, lastColon + 1)}0:0`
  }
  const halves = text.split('::')
  if (halves.length > 2) return null
  const groups = (h: string) => (h === '' ? [] : h.split(':'))
  const head = groups(halves[0]!)
  const rest = halves.length === 2 ? groups(halves[1]!) : []
  const missing = 8 - head.length - rest.length
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest]
  const bytes = new Uint8Array(16)
  for (let i = 0; i < 8; i++) {
    const g = all[i]!
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null
    const n = Number.parseInt(g, 16)
    bytes[i * 2] = n >> 8
    bytes[i * 2 + 1] = n & 0xff
  }
  if (tail.length) bytes.set(tail, 12)
  return bytes
}

/** RFC 5952 text of 16 bytes: lowercase, the longest run of two or more zero groups as `::`. */
function formatIPv6(b: Uint8Array): string {
  const g = Array.from({ length: 8 }, (_, i) => (b[i * 2]! << 8) | b[i * 2 + 1]!)
  let best = -1
  let bestLen = 1
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) {
      i++
      continue
    }
    let j = i
    while (j < 8 && g[j] === 0) j++
    if (j - i > bestLen) {
      best = i
      bestLen = j - i
    }
    i = j
  }
  const hex = g.map((x) => x.toString(16))
  if (best < 0) return hex.join(':')
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`
}

/** Whether `ip` is inside `net` (an address and a prefix length in bits). */
export function inSubnet(ip: IPValue, net: IPValue, bits: number): boolean {
  if (ip.bytes.length !== net.bytes.length) return false
  let i = 0
  for (; bits >= 8; bits -= 8, i++) if (ip.bytes[i] !== net.bytes[i]) return false
  if (bits === 0) return true
  const mask = (0xff << (8 - bits)) & 0xff
  return (ip.bytes[i]! & mask) === (net.bytes[i]! & mask)
}

const UNITS: [string, number][] = [
  ['h', 3_600_000_000_000],
  ['m', 60_000_000_000],
  ['s', 1_000_000_000],
  ['ms', 1_000_000],
  ['us', 1_000],
  ['µs', 1_000],
  ['ns', 1],
]

/**
 * A Go duration (`1h30m`, `500ms`, `1.5s`; also `d` for days, which the platform's `over` accepts) in nanoseconds;
 * null when the text is none.
 */
export function parseDuration(s: string): number | null {
  const m = /^([+-]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h|d|w))+$/.exec(s)
  if (!m) return null
  let ns = 0
  for (const part of s.replace(/^[+-]/, '').matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h|d|w)/g)) {
    const unit = part[2] === 'd' ? 86_400_000_000_000 : part[2] === 'w' ? 604_800_000_000_000 : UNITS.find(([u]) => u === part[2])![1]
    ns += Number(part[1]) * unit
  }
  return m[1] === '-' ? -ns : ns
}

/** Go's time.Duration.String of a count of nanoseconds (`1h2m3.5s`, `150ms`, `0s`). */
export function goDuration(ns: number): string {
  if (ns === 0) return '0s'
  const sign = ns < 0 ? '-' : ''
  let n = Math.abs(Math.round(ns))
  if (n < 1000) return `${sign}${n}ns`
  if (n < 1_000_000) return `${sign}${trimFraction(n / 1000)}µs`
  if (n < 1_000_000_000) return `${sign}${trimFraction(n / 1_000_000)}ms`
  const h = Math.floor(n / 3_600_000_000_000)
  n -= h * 3_600_000_000_000
  const m = Math.floor(n / 60_000_000_000)
  n -= m * 60_000_000_000
  const s = trimFraction(n / 1_000_000_000)
  return `${sign}${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${s}s`
}

const trimFraction = (x: number) => String(Number(x.toFixed(9)))

/**
 * Orders two values: numbers (and values that read as numbers) by number, IPs by their bytes, times and durations by
 * their count, everything else by text. Used by sort and by the ordering filters (<, >).
 */
export function compareValues(a: Value | undefined, b: Value | undefined): number {
  if (a === undefined || b === undefined) return a === b ? 0 : a === undefined ? -1 : 1
  if (a instanceof IPValue && b instanceof IPValue) {
    if (a.bytes.length !== b.bytes.length) return a.bytes.length - b.bytes.length
    for (let i = 0; i < a.bytes.length; i++) if (a.bytes[i] !== b.bytes[i]) return a.bytes[i]! - b.bytes[i]!
    return 0
  }
  const x = toNumber(a)
  const y = toNumber(b)
  if (x !== null && y !== null) return x < y ? -1 : x > y ? 1 : 0
  const s = valueText(a)
  const t = valueText(b)
  return s < t ? -1 : s > t ? 1 : 0
}
