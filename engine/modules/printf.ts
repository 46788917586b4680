// printf (gravwell/wiki search/printf/printf.md): formats values with a Go-style format into a new value.
//   printf [-e <name>] <format> <value> ...
// The result is set as `printf`, or as the value -e names. The format takes Go's verbs and flags (fmt package):
//   %v %s (the value's text) %d %b %o %O %x %X %c %q %U (integers; %x %X of text give its bytes in hex)
//   %e %E %f %F %g %G (floats) and %%; flags + - # 0 and blank; a width and a .precision (digits only).
// Each verb takes the next value, and the format must have exactly one verb per value (checked when the query is
// read). Text that reads as a number is formatted as that number by the numeric verbs (kv, fields and regex extract
// text); a value that is no number prints as Go prints a wrong type, `%!d(string=abc)`. An entry that lacks one of
// the values gets no result (rather than Go's `%!v(MISSING)` in the middle of a text), and passes on. %f rounds an
// exact tie to even as Go does; %e and %g round it up (2 digits of 1.25 give 1.3).
import { valueOf } from '../entry'
import { quote } from '../lex'
import { type ModuleDef, argError, readFlags } from '../module'
import { type Value, toNumber, typeOf, valueText } from '../value'
import { flagValue } from './extractions'

interface Spec {
  verb: string
  minus: boolean
  plus: boolean
  sharp: boolean
  space: boolean
  zero: boolean
  width: number
  precision: number
}

const VERBS = 'vsdboOxXcqUeEfFgG'

/** The literal parts and the verbs of a format; a string naming the problem and its offset when it is wrong. */
export function parseFormat(f: string): { parts: (string | Spec)[]; verbs: number } | { error: string; at: number } {
  const parts: (string | Spec)[] = []
  let lit = ''
  let verbs = 0
  for (let i = 0; i < f.length; i++) {
    if (f[i] !== '%') {
      lit += f[i]
      continue
    }
    const start = i
    i++
    if (f[i] === '%') {
      lit += '%'
      continue
    }
    const s: Spec = { verb: '', minus: false, plus: false, sharp: false, space: false, zero: false, width: -1, precision: -1 }
    for (; i < f.length && '+-# 0'.includes(f[i]!); i++) {
      const c = f[i]!
      if (c === '+') s.plus = true
      else if (c === '-') s.minus = true
      else if (c === '#') s.sharp = true
      else if (c === ' ') s.space = true
      else s.zero = true
    }
    const width = /^\d{1,3}/.exec(f.slice(i))
    if (width) {
      s.width = Number(width[0])
      i += width[0].length
    }
    if (f[i] === '.') {
      const p = /^\d{0,3}/.exec(f.slice(i + 1))![0]
      s.precision = p === '' ? 0 : Number(p)
      i += 1 + p.length
    }
    const verb = f[i]
    if (verb === undefined) return { error: 'the format ends inside a verb', at: start }
    if (!VERBS.includes(verb)) return { error: `%${verb} is no verb printf knows (${[...VERBS].map((v) => `%${v}`).join(' ')})`, at: start }
    s.verb = verb
    if (lit) parts.push(lit)
    lit = ''
    parts.push(s)
    verbs++
  }
  if (lit) parts.push(lit)
  return { parts, verbs }
}

function pad(s: string, spec: Spec, numeric: boolean): string {
  if (spec.width < 0 || s.length >= spec.width) return s
  const n = spec.width - s.length
  if (spec.minus) return s + ' '.repeat(n)
  if (spec.zero && numeric) {
    const sign = /^[+\- ]/.test(s) ? s[0]! : ''
    const body = s.slice(sign.length)
    const prefix = /^0[xXbBoO]/.test(body) && spec.sharp ? body.slice(0, 2) : ''
    return sign + prefix + '0'.repeat(n) + body.slice(prefix.length)
  }
  return ' '.repeat(n) + s
}

const signOf = (neg: boolean, spec: Spec) => (neg ? '-' : spec.plus ? '+' : spec.space ? ' ' : '')

/**
 * `a` with `p` fraction digits, an exact tie rounded to even as Go does (toFixed rounds it up: 2.5 gives 3, Go 2).
 * A tie is exact when the digits past the last kept one are 5 and zeros in the double's exact expansion (toFixed
 * gives it): 25 more digits reach past the precision of any double that could be a tie at that place.
 */
function fixed(a: number, p: number): string {
  const rounded = a.toFixed(p)
  const exact = a.toFixed(p + 25)
  const tail = exact.slice(exact.length - 25)
  if (!/^50*$/.test(tail)) return rounded
  const down = exact.slice(0, exact.length - 25).replace(/\.$/, '')
  return Number(down.at(-1)) % 2 === 0 ? down : rounded
}

/** Go's exponent form: at least two digits (`1e+06`). */
const goExp = (s: string) => s.replace(/e([+-])(\d)$/, 'e$10$2')

function formatFloat(x: number, spec: Spec): string {
  const upper = spec.verb === 'E' || spec.verb === 'G'
  if (!Number.isFinite(x)) {
    const t = Number.isNaN(x) ? 'NaN' : x > 0 ? `${spec.plus ? '+' : ''}Inf` : '-Inf'
    return pad(t, { ...spec, zero: false }, false)
  }
  const neg = x < 0 || Object.is(x, -0)
  const a = Math.abs(x)
  // JS writes at most 100 digits after the point (Go more): a longer precision is cut to 100 (75 for %f, see fixed).
  spec = spec.precision > 100 ? { ...spec, precision: 100 } : spec
  let body: string
  switch (spec.verb.toLowerCase()) {
    case 'e':
      body = goExp(a.toExponential(spec.precision < 0 ? 6 : spec.precision))
      break
    case 'f':
      body = fixed(a, spec.precision < 0 ? 6 : Math.min(spec.precision, 75))
      break
    default: {
      // %g: the shortest form (or .precision significant digits), in exponent form when the exponent is < -4 or
      // >= the precision (6 for the shortest, as Go's strconv decides).
      const p = spec.precision === 0 ? 1 : spec.precision
      const digits = p < 0 ? a.toExponential() : a.toExponential(p - 1)
      const exp = Number(digits.slice(digits.indexOf('e') + 1))
      if (exp < -4 || exp >= (p < 0 ? 6 : p)) {
        let m = digits.slice(0, digits.indexOf('e'))
        if (!spec.sharp && m.includes('.')) m = m.replace(/\.?0+$/, '')
        body = goExp(`${m}e${exp < 0 ? '-' : '+'}${Math.abs(exp)}`)
      } else {
        body = p < 0 ? String(a) : a.toFixed(Math.max(0, p - 1 - exp))
        if (p >= 0 && !spec.sharp && body.includes('.')) body = body.replace(/\.?0+$/, '')
      }
    }
  }
  if (spec.sharp && !body.includes('.') && !/[eE]/.test(body)) body += '.'
  if (upper) body = body.toUpperCase()
  return pad(signOf(neg, spec) + body, spec, true)
}

function formatInt(n: number, spec: Spec): string {
  const neg = n < 0
  const a = Math.abs(n)
  let digits: string
  let prefix = ''
  switch (spec.verb) {
    case 'b':
      digits = a.toString(2)
      if (spec.sharp) prefix = '0b'
      break
    case 'o':
      digits = a.toString(8)
      if (spec.sharp) prefix = '0'
      break
    case 'O':
      digits = a.toString(8)
      prefix = '0o'
      break
    case 'x':
      digits = a.toString(16)
      if (spec.sharp) prefix = '0x'
      break
    case 'X':
      digits = a.toString(16).toUpperCase()
      if (spec.sharp) prefix = '0X'
      break
    default:
      digits = a.toString(10)
  }
  if (spec.precision >= 0) {
    if (spec.precision === 0 && a === 0) digits = ''
    digits = digits.padStart(spec.precision, '0')
  }
  const zeroSpec = spec.precision >= 0 ? { ...spec, zero: false } : spec
  return pad(signOf(neg, spec) + prefix + digits, zeroSpec, true)
}

const goType = (v: Value) => ({ string: 'string', integer: 'int', float: 'float64', boolean: 'bool', ip: 'net.IP', time: 'time.Time', duration: 'time.Duration', bytes: '[]uint8' })[typeOf(v)]
const wrong = (spec: Spec, v: Value) => `%!${spec.verb}(${goType(v)}=${valueText(v)})`

const hexOf = (text: string, spec: Spec) => {
  const hex = [...Buffer.from(text)].map((b) => b.toString(16).padStart(2, '0'))
  const s = spec.space ? hex.join(' ') : hex.join('')
  return spec.verb === 'X' ? s.toUpperCase() : s
}

/** One verb applied to one value. */
export function formatValue(v: Value, spec: Spec): string {
  const text = () => {
    const t = valueText(v)
    return spec.precision >= 0 ? [...t].slice(0, spec.precision).join('') : t
  }
  const n = toNumber(v)
  switch (spec.verb) {
    case 'v':
    case 's':
      return pad(text(), spec, false)
    case 'd':
    case 'b':
    case 'o':
    case 'O':
    case 'x':
    case 'X':
    case 'c':
    case 'U':
      if (n === null || !Number.isInteger(n)) {
        if ((spec.verb === 'x' || spec.verb === 'X') && (typeof v === 'string' || v instanceof Uint8Array)) return pad(hexOf(valueText(v), spec), spec, false)
        if ((spec.verb === 'x' || spec.verb === 'X') && n !== null) return pad(n.toString(16), spec, false)
        return wrong(spec, v)
      }
      if (spec.verb === 'c') return pad(n >= 0 && n <= 0x10ffff ? String.fromCodePoint(n) : '\ufffd', spec, false)
      if (spec.verb === 'U') {
        const u = `U+${n.toString(16).toUpperCase().padStart(4, '0')}`
        return pad(spec.sharp && n >= 0x20 && n <= 0x10ffff ? `${u} '${String.fromCodePoint(n)}'` : u, spec, false)
      }
      return formatInt(n, spec)
    case 'q':
      if (typeof v === 'number' && Number.isInteger(v)) return pad(`'${v >= 0 && v <= 0x10ffff ? String.fromCodePoint(v).replace(/['\\]/, (c) => `\\${c}`) : '\ufffd'}'`, spec, false)
      return pad(spec.sharp && !/[`\x00-\x08\x0a-\x1f\x7f]/.test(valueText(v)) ? `\`${valueText(v)}\`` : JSON.stringify(valueText(v)), spec, false)
    default:
      if (n === null) return wrong(spec, v)
      return formatFloat(n, spec)
  }
}

export const printf: ModuleDef = {
  name: 'printf',
  kind: 'processing',
  info: 'Formats values with a Go-style format (%v %s %d %x %f %e %g %q %c %b %o %U, flags + - # 0 and blank, width and precision) into the value printf, or the name -e gives: one verb per value.',
  examples: ['printf "The source port is %v and the destination port is %v!" SrcPort DstPort', 'printf -e line "%-15s %6.2f" host ratio'],
  compile(call) {
    const { flags, rest } = readFlags(call, { withValue: ['e'] })
    const formatToken = rest[0]
    if (!formatToken) throw argError(call, 'printf needs a format', call.end)
    const parsed = parseFormat(formatToken.text)
    // The offset of a problem inside a format written without escapes; the format's own position otherwise.
    if ('error' in parsed) throw argError(call, parsed.error, formatToken.kind === 'word' ? formatToken.pos + parsed.at : formatToken.pos)
    const args = rest.slice(1)
    if (args.length !== parsed.verbs)
      throw argError(
        call,
        `the format has ${parsed.verbs} verb${parsed.verbs === 1 ? '' : 's'} and ${args.length} value${args.length === 1 ? '' : 's'} follow${args.length === 1 ? 's' : ''}: one value per verb`,
        args[parsed.verbs] ?? call.end,
      )
    for (const t of args) if (t.text === '') throw argError(call, 'a name cannot be empty', t)
    const names = args.map((t) => t.text)
    const target = flagValue(flags, 'e') ?? 'printf'
    if (target === '') throw argError(call, 'a name cannot be empty', flags.get('e') as never)
    return {
      name: 'printf',
      kind: 'processing',
      text: ['printf', ...(target !== 'printf' || flags.has('e') ? ['-e', quote(target)] : []), `"${formatToken.text.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`, ...names.map(quote)].join(' '),
      consumes: [...new Set(names)],
      produces: [target],
      stateless: true,
      stage() {
        return {
          push(e, out) {
            let s = ''
            let k = 0
            for (const p of parsed.parts) {
              if (typeof p === 'string') s += p
              else {
                const v = valueOf(e, names[k++]!)
                if (v === undefined) return out(e)
                s += formatValue(v, p)
              }
            }
            e.values.set(target, s)
            out(e)
          },
        }
      },
    }
  },
}
