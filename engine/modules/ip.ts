// ip (gravwell/wiki search/ip/ip.md): converts values to IP addresses, and filters them by address or subnet.
//   ip [-or] [-categorize] <name> [op operand] [as newname] ...
// Each named value (text, bytes holding text, or an IP already) becomes an IP value, set under its name or under
// `as newname`. The filters are `==` and `!=` an address, `~` and `!~` a subnet (a.b.c.d/n, an IPv6 prefix, or the
// keywords PRIVATE and MULTICAST of filtering.md); one name may carry several filters. Every filter must pass, or with
// -or any one of them. A value that is missing or no IP address sets nothing and fails its filters (`!=` and `!~`
// included: there is no address to compare). -categorize also sets `<name>_category` (the output name) to PRIVATE,
// MULTICAST or PUBLIC, PRIVATE first where the lists overlap (224.0.0.0/24).
import { valueOf } from '../entry'
import { quote } from '../lex'
import { type ModuleDef, argError, flagsText, readFlags } from '../module'
import { IPValue, type Value, inSubnet, parseIP, valueText } from '../value'
import { extractionsText, readExtractions } from './extractions'
import { SUBNET_KEYWORDS, subnets } from './filter'

/** A value as an IP address, or null. */
export function toIP(v: Value | undefined): IPValue | null {
  if (v === undefined) return null
  if (v instanceof IPValue) return v
  if (typeof v !== 'string' && !(v instanceof Uint8Array)) return null
  const text = valueText(v).trim()
  return text.length <= 45 ? parseIP(text) : null
}

export function ipCategory(ip: IPValue): 'PRIVATE' | 'MULTICAST' | 'PUBLIC' {
  if (SUBNET_KEYWORDS.PRIVATE.some(([net, bits]) => inSubnet(ip, net, bits))) return 'PRIVATE'
  if (SUBNET_KEYWORDS.MULTICAST.some(([net, bits]) => inSubnet(ip, net, bits))) return 'MULTICAST'
  return 'PUBLIC'
}

export const ip: ModuleDef = {
  name: 'ip',
  kind: 'processing',
  info: 'Converts values to IP addresses and filters them: == and != an address, ~ and !~ a subnet (10.0.0.0/8, PRIVATE, MULTICAST); every filter must pass (-or: any). as names the converted value; -categorize sets <name>_category to PRIVATE, MULTICAST or PUBLIC.',
  examples: ['ip ipaddr as IP', 'ip srcip ~ PRIVATE', 'ip ipaddr !~ 10.0.0.0/24 ipaddr !~ 192.168.0.0/24', 'ip -categorize srcip'],
  compile(call) {
    const { flags, rest } = readFlags(call, { bool: ['or', 'categorize'] })
    const items = readExtractions(call, rest)
    if (items.length === 0) throw argError(call, 'ip needs the name of a value', call.end)
    for (const x of items) {
      if (!x.filter) continue
      const { op, operand } = x.filter
      if (op === '==' || op === '!=') {
        if (!parseIP(operand)) throw argError(call, `${op} needs an IP address, not ${JSON.stringify(operand)}`, x.token)
      } else if (op === '~' || op === '!~') {
        if (!subnets(operand)) throw argError(call, `${op} needs a subnet (10.0.0.0/8, fd00::/8, PRIVATE, MULTICAST), not ${JSON.stringify(operand)}`, x.token)
      } else throw argError(call, `IP addresses are compared with == != ~ !~, not ${op}`, x.token)
    }
    const any = flags.has('or')
    const categorize = flags.has('categorize')
    const filtered = items.filter((x) => x.filter)
    return {
      name: 'ip',
      kind: 'processing',
      text: ['ip', ...flagsText(flags, quote), ...extractionsText(items)].join(' '),
      consumes: [...new Set(items.map((x) => x.source))],
      produces: [...new Set(items.flatMap((x) => (categorize ? [x.as, `${x.as}_category`] : [x.as])))],
      stateless: true,
      stage() {
        return {
          push(e, out) {
            let passed = 0
            const converted = items.map((x) => toIP(valueOf(e, x.source)))
            for (let i = 0; i < items.length; i++) {
              const x = items[i]!
              if (!x.filter) continue
              const v = converted[i]!
              const ok = v !== null && x.filter.test(v)
              if (ok) passed++
              else if (!any) return
            }
            if (any && filtered.length > 0 && passed === 0) return
            for (let i = 0; i < items.length; i++) {
              const v = converted[i]
              if (!v) continue
              e.values.set(items[i]!.as, v)
              if (categorize) e.values.set(`${items[i]!.as}_category`, ipCategory(v))
            }
            out(e)
          },
        }
      },
    }
  },
}
