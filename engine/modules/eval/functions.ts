// The built-in functions of eval (gravwell/wiki search/eval/eval.md "Built-in functions"), and the casts. Every one is
// a plain computation over its arguments: none loops over anything but its inputs, and every string one makes goes
// through `made` (bounded length, counted against the entry's work budget). Functions that need the program's
// syntax (has, delete, match with its regular expression, set_data, evs_to_json, indirect, setEnum) are in eval.ts.
// Where the platform's Go semantics speak of bytes (len, strings_index), this eval counts UTF-16 characters for
// strings (the same for ASCII) and bytes for byte values (DATA).
import { createHash } from 'node:crypto'
import { DurationValue, TimeValue, inSubnet, numberText, parseIP, typeOf } from '../../value'
import {
  type EV,
  MAX_STRING,
  type Work,
  WholeFloat,
  asDuration,
  asIP,
  asTime,
  charge,
  compare,
  made,
  num,
  numeric,
  text,
  tooLong,
  truthy,
} from './values'

export interface FunctionDef {
  min: number
  max: number
  fn(args: EV[], w: Work): EV
}

const str = (w: Work, v: EV) => {
  const s = text(v)
  charge(w, s.length)
  return s
}
const numberOf = (v: EV): number | null => numeric(v)?.n ?? null
const float1 = (f: (x: number) => number): FunctionDef => ({
  min: 1,
  max: 1,
  fn: ([x]) => {
    const n = numberOf(x)
    return n === null ? undefined : num(f(n), true)
  },
})
const float2 = (f: (x: number, y: number) => number): FunctionDef => ({
  min: 2,
  max: 2,
  fn: ([x, y]) => {
    const a = numberOf(x)
    const b = numberOf(y)
    return a === null || b === null ? undefined : num(f(a, b), true)
  },
})
const string1 = (f: (s: string) => string): FunctionDef => ({ min: 1, max: 1, fn: ([x], w) => (x === undefined ? undefined : made(w, f(str(w, x)))) })
const string2 = (f: (s: string, t: string) => EV): FunctionDef => ({
  min: 2,
  max: 2,
  fn: ([x, y], w) => {
    if (x === undefined || y === undefined) return undefined
    const r = f(str(w, x), str(w, y))
    return typeof r === 'string' ? made(w, r) : r
  },
})

/** Go's strings.Trim family: code points of `cutset` removed from one or both ends. */
function trimSet(s: string, cutset: string, left: boolean, right: boolean): string {
  const set = new Set(Array.from(cutset))
  const chars = Array.from(s)
  let a = 0
  let b = chars.length
  if (left) while (a < b && set.has(chars[a]!)) a++
  if (right) while (b > a && set.has(chars[b - 1]!)) b--
  return chars.slice(a, b).join('')
}

function countOf(s: string, sub: string): number {
  if (sub === '') return Array.from(s).length + 1
  let n = 0
  for (let at = s.indexOf(sub); at >= 0; at = s.indexOf(sub, at + sub.length)) n++
  return n
}

function replace(w: Work, s: string, old: string, repl: string, n: number): string {
  if (n === 0) return s
  const limit = n < 0 ? Number.POSITIVE_INFINITY : n
  const found = Math.min(countOf(s, old), limit)
  // Bounded before it is built.
  if (s.length + found * (repl.length - old.length) > MAX_STRING) throw tooLong()
  if (old === '') {
    const chars = Array.from(s)
    let out = ''
    for (let i = 0; i <= chars.length; i++) {
      if (i < found) out += repl
      if (i < chars.length) out += chars[i]
    }
    return out
  }
  let out = ''
  let at = 0
  for (let k = 0; k < found; k++) {
    const hit = s.indexOf(old, at)
    out += s.slice(at, hit) + repl
    at = hit + old.length
  }
  return out + s.slice(at)
}

/** Go's path.Clean. */
export function cleanPath(p: string): string {
  if (p === '') return '.'
  const rooted = p.startsWith('/')
  const out: string[] = []
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue
    if (part === '..') {
      if (out.length > 0 && out.at(-1) !== '..') out.pop()
      else if (!rooted) out.push('..')
    } else out.push(part)
  }
  const joined = out.join('/')
  return rooted ? `/${joined}` : joined || '.'
}

function basePath(p: string): string {
  if (p === '') return '.'
  const t = p.replace(/\/+$/, '')
  if (t === '') return '/'
  return t.slice(t.lastIndexOf('/') + 1)
}

function dirPath(p: string): string {
  const i = p.lastIndexOf('/')
  return cleanPath(p.slice(0, i + 1))
}

function extPath(p: string): string {
  for (let i = p.length - 1; i >= 0 && p[i] !== '/'; i--) if (p[i] === '.') return p.slice(i)
  return ''
}

/** 1234567 → "1.18 MB" (powers of 1024), as the platform's pretty_size. */
function prettyUnits(n: number, base: number, units: string[], sep = ' '): string {
  let i = 0
  let x = n
  while (Math.abs(x) >= base && i < units.length - 1) {
    x /= base
    i++
  }
  return i === 0 ? `${Number.isInteger(x) ? x : x.toFixed(2)}${sep}${units[0]}`.trimEnd() : `${x.toFixed(2)}${sep}${units[i]}`
}

const HTML_ESCAPES: Record<string, string> = { '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&#39;', '"': '&#34;' }
const HTML_NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', apos: "'", quot: '"', nbsp: '\u00a0' }

function htmlUnescape(s: string): string {
  return s.replace(/&(#[xX][0-9a-fA-F]{1,6}|#\d{1,7}|[a-zA-Z]{2,6});/g, (m, body: string) => {
    if (body[0] === '#') {
      const code = body[1] === 'x' || body[1] === 'X' ? Number.parseInt(body.slice(2), 16) : Number(body.slice(1))
      return code <= 0x10ffff ? String.fromCodePoint(code) : m
    }
    return HTML_NAMED[body] ?? m
  })
}

/** JSON of an eval value: numbers, booleans and strings as such, everything else as its text. */
export function jsonOf(v: EV): unknown {
  if (v instanceof WholeFloat) return v.n
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string') return v
  return text(v)
}

/** A JSON value back into eval: objects and arrays as their JSON text. */
function fromJson(v: unknown): EV {
  if (v === null || v === undefined) return undefined
  if (typeof v === 'number') return v
  if (typeof v === 'boolean' || typeof v === 'string') return v
  return JSON.stringify(v)
}

function parseJson(w: Work, v: EV): unknown {
  const s = str(w, v)
  try {
    return JSON.parse(s)
  } catch {
    return undefined
  }
}

function stringify(w: Work, v: unknown, pretty = false): string | undefined {
  try {
    return made(w, JSON.stringify(v, null, pretty ? '\t' : undefined))
  } catch (e) {
    if (e instanceof RangeError) return undefined
    throw e
  }
}

const hash = (alg: string): FunctionDef => ({
  min: 1,
  max: 1,
  fn: ([x], w) => (x === undefined ? undefined : createHash(alg).update(x instanceof Uint8Array ? x : str(w, x)).digest('hex')),
})

function typeName(v: EV): string {
  if (v === undefined) return 'none'
  if (v instanceof WholeFloat) return 'float'
  const t = typeOf(v)
  return t === 'integer' ? 'int' : t === 'bytes' ? 'byte array' : t
}

function castInt(v: EV): EV {
  if (v instanceof TimeValue) return Math.floor(v.ms / 1000)
  if (v instanceof DurationValue) return v.ns
  const n = numeric(v)
  return n === null || !Number.isFinite(n.n) ? undefined : Math.trunc(n.n)
}

function castBool(v: EV): EV {
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase()
    if (['true', 't', 'yes', 'y', '1'].includes(s)) return true
    if (['false', 'f', 'no', 'n', '0', ''].includes(s)) return false
    return undefined
  }
  return v === undefined ? undefined : truthy(v)
}

function castTime(v: EV): EV {
  const t = asTime(v)
  if (t) return t
  const n = numeric(v)
  return n === null ? undefined : new TimeValue(n.n * 1000)
}

function castDuration(v: EV): EV {
  const d = asDuration(v)
  if (d) return d
  const n = numeric(v)
  return n === null ? undefined : new DurationValue(Math.trunc(n.n))
}

// ---- printf: Go's fmt verbs %v %s %d %f %g %e %x %X %o %b %q %t %c %%, with flags - + 0 space #, width and
// precision (each at most MAX_WIDTH, so a format cannot ask for a huge padding).
const MAX_WIDTH = 1000

export function printf(w: Work, format: string, args: EV[]): string {
  let out = ''
  let k = 0
  const re = /%([-+ 0#]*)(\d+)?(?:\.(\d+))?([a-zA-Z%])/g
  let last = 0
  for (let m = re.exec(format); m; m = re.exec(format)) {
    out += format.slice(last, m.index)
    last = re.lastIndex
    const [, flags = '', widthText, precText, verb] = m
    if (verb === '%') {
      out += '%'
      continue
    }
    const width = Math.min(Number(widthText ?? 0), MAX_WIDTH)
    const prec = precText === undefined ? undefined : Math.min(Number(precText), MAX_WIDTH)
    if (k >= args.length) {
      out += `%!${verb}(MISSING)`
      continue
    }
    const v = args[k++]
    let s: string
    const n = numeric(v)
    switch (verb) {
      case 'd':
        s = n === null ? `%!d(${typeName(v)}=${text(v)})` : Number.isFinite(n.n) ? BigInt(Math.trunc(n.n)).toString() : numberText(n.n)
        break
      case 'f':
      case 'F':
        s = n === null ? `%!f(${typeName(v)}=${text(v)})` : n.n.toFixed(prec ?? 6)
        break
      case 'e':
        s = n === null ? `%!e(${typeName(v)}=${text(v)})` : n.n.toExponential(prec ?? 6).replace(/e([+-])(\d)$/, 'e$10$2')
        break
      case 'g':
        s = n === null ? `%!g(${typeName(v)}=${text(v)})` : prec === undefined ? String(n.n) : String(Number(n.n.toPrecision(Math.max(prec, 1))))
        break
      case 'x':
      case 'X': {
        const hex = n !== null && typeof v !== 'string' ? Math.trunc(n.n).toString(16) : Buffer.from(v instanceof Uint8Array ? v : text(v)).toString('hex')
        s = verb === 'X' ? hex.toUpperCase() : hex
        if (flags.includes('#')) s = `0${verb === 'X' ? 'X' : 'x'}${s}`
        break
      }
      case 'o':
        s = n === null ? `%!o(${typeName(v)}=${text(v)})` : Math.trunc(n.n).toString(8)
        break
      case 'b':
        s = n === null ? `%!b(${typeName(v)}=${text(v)})` : Math.trunc(n.n).toString(2)
        break
      case 'q':
        s = JSON.stringify(text(v))
        break
      case 't':
        s = typeof v === 'boolean' ? String(v) : `%!t(${typeName(v)}=${text(v)})`
        break
      case 'c':
        s = n === null || n.n < 0 || n.n > 0x10ffff ? '\ufffd' : String.fromCodePoint(Math.trunc(n.n))
        break
      default:
        // %v, %s and unknown verbs: the value's text (precision truncates strings, as Go's %.3s).
        s = text(v)
        if (prec !== undefined && (verb === 's' || verb === 'v')) s = s.slice(0, prec)
    }
    if (flags.includes('+') && n !== null && 'dfFeg'.includes(verb!) && n.n >= 0) s = `+${s}`
    else if (flags.includes(' ') && n !== null && 'dfFeg'.includes(verb!) && n.n >= 0) s = ` ${s}`
    if (s.length < width) {
      if (flags.includes('-')) s = s.padEnd(width)
      else if (flags.includes('0') && n !== null && verb !== 's' && verb !== 'v' && verb !== 'q') {
        const sign = /^[+\- ]/.test(s) ? s[0]! : ''
        s = sign + s.slice(sign.length).padStart(width - sign.length, '0')
      } else s = s.padStart(width)
    }
    charge(w, s.length)
    out += s
    if (out.length > MAX_STRING) throw tooLong()
  }
  out += format.slice(last)
  if (k < args.length) out += `%!(EXTRA ${args.slice(k).map((v) => `${typeName(v)}=${text(v)}`).join(', ')})`
  return made(w, out)
}

export const FUNCTIONS: Record<string, FunctionDef> = {
  // Convenience
  in: {
    min: 2,
    max: Number.POSITIVE_INFINITY,
    fn: ([x, ...options], w) => x !== undefined && options.some((o) => compare('==', x, o, w)),
  },
  len: {
    min: 1,
    max: 1,
    fn: ([x]) => (x === undefined ? undefined : x instanceof Uint8Array ? x.byteLength : text(x).length),
  },
  unix: {
    min: 1,
    max: 1,
    fn: ([x]) => {
      const t = asTime(x)
      return t ? Math.floor(t.ms / 1000) : undefined
    },
  },
  printf: { min: 1, max: 64, fn: ([f, ...rest], w) => printf(w, str(w, f), rest) },
  ip_in_cidr: {
    min: 2,
    max: 2,
    fn: ([ip, cidr]) => {
      const addr = asIP(ip)
      const m = /^(.+)\/(\d{1,3})$/.exec(text(cidr))
      const net = m ? parseIP(m[1]!) : null
      if (!addr || !net || Number(m![2]) > net.bytes.length * 8) return false
      return inSubnet(addr, net, Number(m![2]))
    },
  },
  type: { min: 1, max: 1, fn: ([x]) => typeName(x) },
  // Casts
  int: { min: 1, max: 1, fn: ([x]) => castInt(x) },
  int64: { min: 1, max: 1, fn: ([x]) => castInt(x) },
  uint64: { min: 1, max: 1, fn: ([x]) => castInt(x) },
  float: {
    min: 1,
    max: 1,
    fn: ([x]) => {
      if (x instanceof DurationValue) return num(x.ns, true)
      const n = numeric(x)
      return n === null ? undefined : num(n.n, true)
    },
  },
  string: { min: 1, max: 1, fn: ([x], w) => (x === undefined ? undefined : made(w, text(x))) },
  bool: { min: 1, max: 1, fn: ([x]) => castBool(x) },
  ip: { min: 1, max: 1, fn: ([x]) => asIP(x) ?? undefined },
  time: { min: 1, max: 1, fn: ([x]) => castTime(x) },
  duration: { min: 1, max: 1, fn: ([x]) => castDuration(x) },
  // Strings
  strings_count: string2((s, t) => countOf(s, t)),
  strings_contains: string2((s, t) => s.includes(t)),
  strings_hasprefix: string2((s, t) => s.startsWith(t)),
  strings_hassuffix: string2((s, t) => s.endsWith(t)),
  strings_index: string2((s, t) => s.indexOf(t)),
  strings_replace: {
    min: 4,
    max: 4,
    fn: ([s, old, repl, n], w) => {
      const count = numberOf(n)
      if (s === undefined || old === undefined || repl === undefined || count === null) return undefined
      return made(w, replace(w, str(w, s), str(w, old), str(w, repl), Math.trunc(count)))
    },
  },
  strings_tolower: string1((s) => s.toLowerCase()),
  strings_toupper: string1((s) => s.toUpperCase()),
  strings_totitle: string1((s) => s.toUpperCase()),
  strings_trim: string2((s, c) => trimSet(s, c, true, true)),
  strings_trimleft: string2((s, c) => trimSet(s, c, true, false)),
  strings_trimright: string2((s, c) => trimSet(s, c, false, true)),
  strings_trimprefix: string2((s, p) => (p !== '' && s.startsWith(p) ? s.slice(p.length) : s)),
  strings_trimsuffix: string2((s, p) => (p !== '' && s.endsWith(p) ? s.slice(0, s.length - p.length) : s)),
  strings_trimspace: string1((s) => s.trim()),
  pretty_size: {
    min: 1,
    max: 1,
    fn: ([x]) => {
      const n = numberOf(x)
      return n === null ? undefined : prettyUnits(n, 1024, ['B', 'KB', 'MB', 'GB', 'TB', 'PB', 'EB'])
    },
  },
  pretty_count: {
    min: 1,
    max: 1,
    fn: ([x]) => {
      const n = numberOf(x)
      return n === null ? undefined : prettyUnits(n, 1000, ['', 'K', 'M', 'G', 'T', 'P', 'E'])
    },
  },
  pretty_rate: {
    min: 2,
    max: 2,
    fn: ([x, d]) => {
      const n = numberOf(x)
      const dur = asDuration(d)
      return n === null || !dur || dur.ns <= 0 ? undefined : `${prettyUnits(n / (dur.ns / 1e9), 1024, ['B', 'KB', 'MB', 'GB', 'TB'])}/s`
    },
  },
  pretty_line_rate: {
    min: 2,
    max: 2,
    fn: ([x, d]) => {
      const n = numberOf(x)
      const dur = asDuration(d)
      return n === null || !dur || dur.ns <= 0 ? undefined : `${prettyUnits((n * 8) / (dur.ns / 1e9), 1024, ['b', 'Kb', 'Mb', 'Gb', 'Tb'])}/s`
    },
  },
  // Hashes
  hash_md5: hash('md5'),
  hash_sha1: hash('sha1'),
  hash_sha256: hash('sha256'),
  hash_sha512: hash('sha512'),
  // Paths
  path_base: string1(basePath),
  path_clean: string1(cleanPath),
  path_dir: string1(dirPath),
  path_ext: string1(extPath),
  path_isabs: { min: 1, max: 1, fn: ([x]) => (x === undefined ? undefined : text(x).startsWith('/')) },
  path_join: {
    min: 0,
    max: 64,
    fn: (parts, w) => {
      const kept = parts.map((p) => str(w, p)).filter((p) => p !== '')
      return kept.length === 0 ? '' : made(w, cleanPath(kept.join('/')))
    },
  },
  // Random
  rand_float: { min: 0, max: 0, fn: () => num(Math.random(), true) },
  rand_int: { min: 0, max: 0, fn: () => Math.floor(Math.random() * Number.MAX_SAFE_INTEGER) },
  rand_intn: {
    min: 1,
    max: 1,
    fn: ([x]) => {
      const n = numberOf(x)
      return n === null || n <= 0 ? undefined : Math.floor(Math.random() * Math.trunc(n))
    },
  },
  rand_normal: {
    min: 0,
    max: 0,
    fn: () => num(Math.sqrt(-2 * Math.log(1 - Math.random())) * Math.cos(2 * Math.PI * Math.random()), true),
  },
  // Encoding
  base64_encode: { min: 1, max: 1, fn: ([x], w) => (x === undefined ? undefined : made(w, Buffer.from(x instanceof Uint8Array ? x : str(w, x)).toString('base64'))) },
  base64_decode: string1((s) => Buffer.from(s, 'base64').toString()),
  hex_encode: { min: 1, max: 1, fn: ([x], w) => (x === undefined ? undefined : made(w, Buffer.from(x instanceof Uint8Array ? x : str(w, x)).toString('hex'))) },
  hex_decode: string1((s) => Buffer.from(s, 'hex').toString()),
  html_escape: string1((s) => s.replace(/[<>&'"]/g, (c) => HTML_ESCAPES[c]!)),
  html_unescape: string1(htmlUnescape),
  json: { min: 1, max: 1, fn: ([x], w) => x !== undefined && parseJson(w, x) !== undefined },
  json_get: {
    min: 2,
    max: 2,
    fn: ([o, k], w) => {
      const obj = parseJson(w, o)
      const key = text(k)
      return obj !== null && typeof obj === 'object' && !Array.isArray(obj) && Object.hasOwn(obj, key) ? fromJson((obj as Record<string, unknown>)[key]) : undefined
    },
  },
  json_index: {
    min: 2,
    max: 2,
    fn: ([a, i], w) => {
      const arr = parseJson(w, a)
      const n = numberOf(i)
      return Array.isArray(arr) && n !== null ? fromJson(arr[Math.trunc(n)]) : undefined
    },
  },
  json_len: {
    min: 1,
    max: 1,
    fn: ([a], w) => {
      const arr = parseJson(w, a)
      return Array.isArray(arr) ? arr.length : arr !== null && typeof arr === 'object' ? Object.keys(arr).length : undefined
    },
  },
  json_set: {
    min: 3,
    max: 3,
    fn: ([o, k, v], w) => {
      const obj = parseJson(w, o)
      if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) return undefined
      ;(obj as Record<string, unknown>)[text(k)] = jsonOf(v)
      return stringify(w, obj)
    },
  },
  json_object: { min: 2, max: 2, fn: ([k, v], w) => stringify(w, { [text(k)]: jsonOf(v) }) },
  json_array: { min: 1, max: 1, fn: ([v], w) => stringify(w, [jsonOf(v)]) },
  json_append: {
    min: 2,
    max: 2,
    fn: ([a, v], w) => {
      const arr = parseJson(w, a)
      if (!Array.isArray(arr)) return undefined
      arr.push(jsonOf(v))
      return stringify(w, arr)
    },
  },
  json_array_set: {
    min: 3,
    max: 3,
    fn: ([a, i, v], w) => {
      const arr = parseJson(w, a)
      const n = numberOf(i)
      if (!Array.isArray(arr) || n === null || n < 0 || n >= arr.length) return undefined
      arr[Math.trunc(n)] = jsonOf(v)
      return stringify(w, arr)
    },
  },
  json_pretty: {
    min: 1,
    max: 1,
    fn: ([x], w) => {
      const v = parseJson(w, x)
      return v === undefined ? undefined : stringify(w, v, true)
    },
  },
  // Math
  ceil: float1(Math.ceil),
  floor: float1(Math.floor),
  round: float1((x) => Math.sign(x) * Math.round(Math.abs(x))),
  math_abs: float1(Math.abs),
  math_ceil: float1(Math.ceil),
  math_floor: float1(Math.floor),
  math_round: float1((x) => Math.sign(x) * Math.round(Math.abs(x))),
  math_roundtoeven: float1((x) => {
    const r = Math.round(x)
    return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r
  }),
  math_trunc: float1(Math.trunc),
  math_log: float1(Math.log),
  math_log10: float1(Math.log10),
  math_log2: float1(Math.log2),
  math_sqrt: float1(Math.sqrt),
  math_max: float2(Math.max),
  math_min: float2(Math.min),
  math_mod: float2((x, y) => x % y),
  math_remainder: float2((x, y) => x - y * Math.round(x / y)),
  math_pow: float2(Math.pow),
  math_acos: float1(Math.acos),
  math_acosh: float1(Math.acosh),
  math_asin: float1(Math.asin),
  math_asinh: float1(Math.asinh),
  math_atan: float1(Math.atan),
  math_atan2: float2(Math.atan2),
  math_cos: float1(Math.cos),
  math_cosh: float1(Math.cosh),
  math_sin: float1(Math.sin),
  math_sinh: float1(Math.sinh),
  math_tan: float1(Math.tan),
  math_tanh: float1(Math.tanh),
}

// The legacy eval's names (gravwell/wiki search/eval/legacy-eval.md), still seen in older queries.
const LEGACY: [string, string][] = [
  ['toInt', 'int'],
  ['toFloat', 'float'],
  ['toString', 'string'],
  ['toBool', 'bool'],
  ['toIP', 'ip'],
  ['toDuration', 'duration'],
  ['sprintf', 'printf'],
  ['toHumanSize', 'pretty_size'],
  ['toHumanCount', 'pretty_count'],
]
for (const [alias, name] of LEGACY) FUNCTIONS[alias] = FUNCTIONS[name]!
