// The values of an eval program and how operators combine them (gravwell/wiki search/eval/eval.md "Type Promotion in
// Expressions"). A value is an engine value (value.ts) or missing (`undefined`: a value the entry lacks, or an
// operation that failed). Choices where the platform leaves the result undefined:
// - A float whose value is whole is kept apart from an integer (WholeFloat) while the program runs, so `7.0 / 2` is
//   3.5 and `7 / 2` is 3 (integer division truncates, as on the platform); it is set as a plain number.
// - Arithmetic: a time plus or minus a duration is a time, a time minus a time a duration; durations add and
//   subtract. Otherwise both sides are read as numbers (strings that read as numbers, booleans as 1 and 0): a float
//   on either side makes a float. `+` of two values that are not both numbers joins their texts (string
//   concatenation); `-`, `*`, `/` and `%` of a side that is no number, or an integer division by zero, is missing.
// - Comparisons: IPs as IPs when either side is an IP and the other reads as one; times and durations by their
//   count; numbers when either side is a number and the other reads as one; else by text (byte order). A missing
//   side makes every comparison false, `!=` and `!~` included (as the inline filters of the extraction modules).
// - `~` / `!~`: the text of the left side contains the right one; an IP (or text that reads as one) is inside a
//   subnet written `a.b.c.d/n`.
// - Truth: false, 0, NaN, "", empty bytes and missing are false; everything else is true.
import { SearchLimitError } from '../../errors'
import {
  DurationValue,
  IPValue,
  TimeValue,
  type Value,
  compareValues,
  inSubnet,
  parseDuration,
  parseIP,
  parseNumber,
  valueText,
} from '../../value'

/** A float that happens to be whole (3.0): a number, but arithmetic treats it as a float. */
export class WholeFloat {
  constructor(readonly n: number) {}
  toString(): string {
    return String(this.n)
  }
}

export type EV = Value | WholeFloat | undefined

/** Longest string a program may make (characters); past it the search ends (SearchLimitError). */
export const MAX_STRING = 4 * 1024 * 1024
/** Characters of text one evaluation may read and write in all: each operation's inputs, and what it makes. */
export const WORK_BUDGET = 64 * 1024 * 1024

/** What one evaluation (one entry) carries: the work done so far, for the budget. */
export interface Work {
  spent: number
}

export function charge(w: Work, n: number): void {
  w.spent += n
  if (w.spent > WORK_BUDGET)
    throw new SearchLimitError(`eval: one entry needs more than ${WORK_BUDGET} characters of string work (the limit per entry): simplify the expression`)
}

export const tooLong = () => new SearchLimitError(`eval: a string would be longer than ${MAX_STRING} characters (the limit of one value)`)

/** A string a function made, checked against MAX_STRING. */
export function made(w: Work, s: string): string {
  if (s.length > MAX_STRING) throw tooLong()
  charge(w, s.length)
  return s
}

const decoder = new TextDecoder()

export function text(v: EV): string {
  if (v === undefined) return ''
  if (typeof v === 'string') return v
  if (v instanceof WholeFloat) return String(v.n)
  if (v instanceof Uint8Array) return decoder.decode(v)
  return valueText(v)
}

/** The value as an engine value (set on entries): WholeFloat becomes its number. */
export function toValue(v: EV): Value | undefined {
  return v instanceof WholeFloat ? v.n : v
}

/** A numeric reading of a value: the number and whether it is a float; null when it is none. */
export function numeric(v: EV): { n: number; float: boolean } | null {
  if (v === undefined) return null
  if (typeof v === 'number') return { n: v, float: !Number.isInteger(v) }
  if (v instanceof WholeFloat) return { n: v.n, float: true }
  if (typeof v === 'boolean') return { n: v ? 1 : 0, float: false }
  if (typeof v === 'string' || v instanceof Uint8Array) {
    const s = typeof v === 'string' ? v : v.byteLength > 64 ? '' : decoder.decode(v)
    const n = parseNumber(s)
    if (n === null) return null
    return { n, float: !Number.isInteger(n) || (!/^\s*[+-]?0[xX]/.test(s) && /[.eE]/.test(s)) }
  }
  return null
}

/** A number as an eval value: floats that are whole are marked. */
export function num(n: number, float: boolean): EV {
  return float && Number.isInteger(n) ? new WholeFloat(n) : n
}

const isNumber = (v: EV) => typeof v === 'number' || v instanceof WholeFloat

export function truthy(v: EV): boolean {
  if (v === undefined) return false
  if (typeof v === 'boolean') return v
  if (typeof v === 'number') return v !== 0 && !Number.isNaN(v)
  if (v instanceof WholeFloat) return v.n !== 0
  if (typeof v === 'string') return v !== ''
  if (v instanceof Uint8Array) return v.byteLength > 0
  if (v instanceof TimeValue) return v.ms !== 0
  if (v instanceof DurationValue) return v.ns !== 0
  return true
}

/** A time from a value: times, and RFC 3339 text. */
export function asTime(v: EV): TimeValue | null {
  if (v instanceof TimeValue) return v
  if (typeof v === 'string' && /^\d{4}-\d\d-\d\d[T ]\d\d:\d\d/.test(v)) {
    const ms = Date.parse(v)
    return Number.isNaN(ms) ? null : new TimeValue(ms)
  }
  return null
}

/** A duration from a value: durations, and Go duration text (`1h30m`). */
export function asDuration(v: EV): DurationValue | null {
  if (v instanceof DurationValue) return v
  if (typeof v === 'string') {
    const ns = parseDuration(v.trim())
    return ns === null ? null : new DurationValue(ns)
  }
  return null
}

export function asIP(v: EV): IPValue | null {
  if (v instanceof IPValue) return v
  if (typeof v === 'string') return v.length > 64 ? null : parseIP(v.trim())
  if (v instanceof Uint8Array) return v.byteLength > 64 ? null : parseIP(text(v).trim())
  return null
}

export function arithmetic(op: string, a: EV, b: EV, w: Work): EV {
  if (a === undefined || b === undefined) return undefined
  // Times and durations.
  if (a instanceof TimeValue || b instanceof TimeValue || a instanceof DurationValue || b instanceof DurationValue) {
    const ta = asTime(a)
    const tb = asTime(b)
    const da = asDuration(a)
    const db = asDuration(b)
    if (op === '+' && ta && db) return new TimeValue(ta.ms + db.ns / 1e6)
    if (op === '+' && da && tb) return new TimeValue(tb.ms + da.ns / 1e6)
    if (op === '-' && ta && db) return new TimeValue(ta.ms - db.ns / 1e6)
    if (op === '-' && ta && tb) return new DurationValue((ta.ms - tb.ms) * 1e6)
    if ((op === '+' || op === '-') && da && db) return new DurationValue(op === '+' ? da.ns + db.ns : da.ns - db.ns)
    const n = numeric(op === '*' || op === '/' ? (da ? b : a) : undefined)
    if (n && da && (op === '*' || op === '/')) return op === '*' ? new DurationValue(da.ns * n.n) : n.n === 0 ? undefined : new DurationValue(Math.trunc(da.ns / n.n))
    if (n && db && op === '*') return new DurationValue(db.ns * n.n)
    if (op !== '+') return undefined
  }
  const x = numeric(a)
  const y = numeric(b)
  // `+` joins texts unless both sides are numbers, or one is a number and the other reads as one.
  if (op === '+' && (x === null || y === null || (!isNumber(a) && !isNumber(b) && typeof a !== 'boolean' && typeof b !== 'boolean'))) {
    const s = text(a)
    const t = text(b)
    charge(w, s.length + t.length)
    return made(w, s + t)
  }
  if (x === null || y === null) return undefined
  const float = x.float || y.float
  // `+ 0` turns an integer -0 (0 * -3 in JavaScript) into 0.
  switch (op) {
    case '+':
      return num(x.n + y.n, float)
    case '-':
      return num(x.n - y.n, float)
    case '*':
      return float ? num(x.n * y.n, true) : x.n * y.n + 0
    case '/':
      if (float) return num(x.n / y.n, true)
      return y.n === 0 ? undefined : Math.trunc(x.n / y.n) + 0
    case '%':
      if (float) return num(x.n % y.n, true)
      return y.n === 0 ? undefined : (x.n % y.n) + 0
  }
  return undefined
}

/** Bitwise operators and shifts, on 64-bit integers (Go's int64). */
export function bitwise(op: string, a: EV, b: EV): EV {
  const x = numeric(a)
  const y = numeric(b)
  if (!x || !y || x.float || y.float) return undefined
  const p = BigInt.asIntN(64, BigInt(x.n))
  const q = BigInt.asIntN(64, BigInt(y.n))
  let r: bigint
  switch (op) {
    case '&':
      r = p & q
      break
    case '|':
      r = p | q
      break
    case '^':
      r = p ^ q
      break
    case '<<':
      if (q < 0n || q > 63n) return undefined
      r = p << q
      break
    case '>>':
      if (q < 0n || q > 63n) return undefined
      r = p >> q
      break
    default:
      return undefined
  }
  return Number(BigInt.asIntN(64, r))
}

/**
 * Orders two values as the comparison operators do: a number (negative, 0, positive), or null when they cannot be
 * compared (a missing side, or sides of types that do not promote to a common one: only == and != then answer,
 * by text).
 */
export function order(a: EV, b: EV, w: Work): number | null {
  if (a === undefined || b === undefined) return null
  if (a instanceof IPValue || b instanceof IPValue) {
    const x = asIP(a)
    const y = asIP(b)
    return x && y ? compareValues(x, y) : null
  }
  if (a instanceof TimeValue || b instanceof TimeValue) {
    const x = asTime(a)
    const y = asTime(b)
    return x && y ? Math.sign(x.ms - y.ms) : null
  }
  if (a instanceof DurationValue || b instanceof DurationValue) {
    const x = asDuration(a)
    const y = asDuration(b)
    return x && y ? Math.sign(x.ns - y.ns) : null
  }
  if (isNumber(a) || isNumber(b)) {
    const x = numeric(a)
    const y = numeric(b)
    if (!x || !y) return null
    return x.n < y.n ? -1 : x.n > y.n ? 1 : x.n === y.n ? 0 : null
  }
  if (typeof a === 'boolean' || typeof b === 'boolean') {
    const x = typeof a === 'boolean' ? a : text(a) === 'true' ? true : text(a) === 'false' ? false : null
    const y = typeof b === 'boolean' ? b : text(b) === 'true' ? true : text(b) === 'false' ? false : null
    return x === null || y === null ? null : Number(x) - Number(y)
  }
  // Both texts are counted: reading bytes (DATA) as text costs their length.
  const s = text(a)
  const t = text(b)
  charge(w, s.length + t.length)
  return s < t ? -1 : s > t ? 1 : 0
}

export function compare(op: string, a: EV, b: EV, w: Work): boolean {
  if (a === undefined || b === undefined) return false
  if (op === '~' || op === '!~') return contains(a, b, w) === (op === '~')
  const d = order(a, b, w)
  if (d === null) {
    if (op !== '==' && op !== '!=') return false
    const s = text(a)
    const t = text(b)
    charge(w, s.length + t.length)
    return (s === t) === (op === '==')
  }
  switch (op) {
    case '==':
      return d === 0
    case '!=':
      return d !== 0
    case '<':
      return d < 0
    case '>':
      return d > 0
    case '<=':
      return d <= 0
    case '>=':
      return d >= 0
  }
  return false
}

function contains(a: EV, b: EV, w: Work): boolean {
  const needle = text(b)
  charge(w, needle.length)
  const cidr = /^(.+)\/(\d{1,3})$/.exec(needle)
  if (cidr) {
    const net = parseIP(cidr[1]!)
    const ip = asIP(a)
    if (net && ip && Number(cidr[2]) <= net.bytes.length * 8) return inSubnet(ip, net, Number(cidr[2]))
  }
  const hay = text(a)
  charge(w, hay.length)
  return hay.includes(needle)
}
