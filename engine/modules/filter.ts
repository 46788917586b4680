// The inline filters of extraction modules and of `require`-like checks: `name op operand`, with the platform's
// operators (gravwell/wiki search/filtering.md):
//   ==  !=    equal / not equal: as numbers when both sides read as numbers, as IPs when both are IPs, else as text
//   < > <= >= ordered: as numbers (times and durations by their count, IPs by their bytes); a value that is no number
//             never passes. A time compares with an operand written as a date and time (RFC 3339, `2024-01-02T03:04:05Z`).
//   ~   !~    contains / does not contain: text contains the operand; an IP is inside the operand's subnet (a.b.c.d/n,
//             or the keywords PRIVATE and MULTICAST, which stand for the subnets listed in filtering.md)
// An entry without the value fails every filter on it, `!=` and `!~` included (the platform drops it too).
import { type Value, IPValue, TimeValue, compareValues, inSubnet, parseIP, parseNumber, toNumber, valueText } from '../value'

export const FILTER_OPS = ['==', '!=', '<=', '>=', '<', '>', '!~', '~'] as const
export type FilterOp = (typeof FILTER_OPS)[number]

export type ValueTest = (v: Value | undefined) => boolean

export function valueTest(op: FilterOp, operand: string): ValueTest {
  const num = parseNumber(operand)
  const ip = parseIP(operand)
  const time = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/.test(operand) ? Date.parse(operand) : Number.NaN
  switch (op) {
    case '==':
    case '!=': {
      const eq = (v: Value): boolean => {
        if (v instanceof TimeValue && !Number.isNaN(time)) return v.ms === time
        if (num !== null && typeof v !== 'string') {
          const n = toNumber(v)
          if (n !== null) return n === num
        }
        if (num !== null && typeof v === 'string') {
          const n = parseNumber(v)
          if (n !== null) return n === num
        }
        if (ip && v instanceof IPValue) return compareValues(ip, v) === 0
        return valueText(v) === operand
      }
      return op === '==' ? (v) => v !== undefined && eq(v) : (v) => v !== undefined && !eq(v)
    }
    case '<':
    case '>':
    case '<=':
    case '>=': {
      const cmp = (v: Value): number | null => {
        if (ip && v instanceof IPValue) return compareValues(v, ip)
        if (v instanceof TimeValue && !Number.isNaN(time)) return v.ms - time
        const n = toNumber(v)
        return n === null || num === null ? null : n - num
      }
      const ok = op === '<' ? (d: number) => d < 0 : op === '>' ? (d: number) => d > 0 : op === '<=' ? (d: number) => d <= 0 : (d: number) => d >= 0
      return (v) => {
        if (v === undefined) return false
        const d = cmp(v)
        return d !== null && ok(d)
      }
    }
    case '~':
    case '!~': {
      const nets = subnets(operand)
      const has = (v: Value): boolean => {
        if (nets) {
          const addr = v instanceof IPValue ? v : parseIP(valueText(v))
          if (addr) return nets.some(([net, bits]) => inSubnet(addr, net, bits))
        }
        return valueText(v).includes(operand)
      }
      return op === '~' ? (v) => v !== undefined && has(v) : (v) => v !== undefined && !has(v)
    }
  }
}

/** Splits `name==x`, `name ==x`, `name== x` forms: the operator found in a word, and what is before and after it. */
export function splitFilter(word: string): { name: string; op: FilterOp; rest: string } | null {
  for (let i = 0; i < word.length; i++) {
    for (const op of FILTER_OPS) {
      if (word.startsWith(op, i) && (op !== '<' && op !== '>' ? true : word[i + 1] !== '=')) {
        return { name: word.slice(0, i), op, rest: word.slice(i + op.length) }
      }
    }
  }
  return null
}

const cidr = (text: string): [IPValue, number] => {
  const [addr, bits] = text.split('/')
  return [parseIP(addr!)!, Number(bits)]
}

/** The subnets the platform's keywords stand for (filtering.md "Built-in Keywords"). */
export const SUBNET_KEYWORDS: Readonly<Record<'PRIVATE' | 'MULTICAST', readonly [IPValue, number][]>> = {
  PRIVATE: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '127.0.0.0/8', '224.0.0.0/24', '169.254.0.0/16', 'fd00::/8', 'fe80::/10'].map(cidr),
  MULTICAST: ['224.0.0.0/4', 'ff00::/8'].map(cidr),
}

/** The subnets an operand of `~` names (`a.b.c.d/n`, an IPv6 prefix, PRIVATE, MULTICAST), or null when it names none. */
export function subnets(operand: string): readonly [IPValue, number][] | null {
  if (operand === 'PRIVATE' || operand === 'MULTICAST') return SUBNET_KEYWORDS[operand]
  const m = /^(.+)\/(\d{1,3})$/.exec(operand)
  const net = m ? parseIP(m[1]!) : null
  const bits = m ? Number(m[2]) : 0
  return net && bits <= net.bytes.length * 8 ? [[net, bits]] : null
}
