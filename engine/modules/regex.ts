// regex (gravwell/wiki search/regex/regex.md): passes entries the regular expression (RE2 syntax) matches, and sets
// each named capture `(?P<name>...)` as a value.
//   regex [-e <value>] [-v] [-p] <pattern> [<capture> [op operand] [as name] ...]
// -e matches a value instead of DATA; -v passes the entries that do not match (and sets nothing); -p (permissive)
// passes entries that do not match, without values. The items after the pattern filter captures inline (each must
// name a capture of the pattern) and may rename them. Captured text that reads as a number is kept as text: filters
// and aggregates read numbers from it.
import { valueOf } from '../entry'
import { quote } from '../lex'
import { type ModuleDef, argError, flagsText, readFlags } from '../module'
import { valueText } from '../value'
import { fastExtractor } from '../regex'
import { applyExtractions, extractionsText, readExtractions } from './extractions'

export const regex: ModuleDef = {
  name: 'regex',
  kind: 'extraction',
  info: 'Matches a regular expression (RE2 syntax) and sets each named capture (?P<name>...) as a value; entries that do not match are dropped (-v: kept instead, -p: kept without values). Captures may be filtered inline (user==root, ip ~ 10.0.0.0/8).',
  examples: ['regex "(?P<method>GET|POST) (?P<path>\\S+)"', 'regex `took (?P<ms>\\d+) ms` ms > 100', 'regex -e path "^/api/(?P<area>[a-z]+)"'],
  compile(call, ctx) {
    const { flags, rest } = readFlags(call, { bool: ['v', 'p'], withValue: ['e'] })
    const patternToken = rest[0]
    if (!patternToken) throw argError(call, 'regex needs a regular expression', call.end)
    const re = ctx.regex(patternToken.text, patternToken.pos)
    const names = [...patternToken.text.matchAll(/\(\?P?<([A-Za-z_][A-Za-z0-9_]*)>/g)].map((m) => m[1]!)
    const items = readExtractions(call, rest.slice(1))
    for (const x of items) if (!names.includes(x.source)) throw argError(call, `the regular expression has no capture named ${JSON.stringify(x.source)}`, x.token)
    const invert = flags.has('v')
    const permissive = flags.has('p')
    if (invert && permissive) throw argError(call, '-v and -p cannot be combined')
    const source = flags.get('e')
    const sourceName = source && source !== true ? source.text : undefined
    // Every capture is set; items only add filters and names.
    const captures = names.map((name) => items.find((x) => x.source === name) ?? { source: name, as: name, token: patternToken })
    const produces = invert ? [] : captures.map((c) => c.as)
    return {
      name: 'regex',
      kind: 'extraction',
      text: ['regex', ...flagsText(flags, quote), quote(patternToken.text), ...extractionsText(items)].join(' '),
      consumes: sourceName ? [sourceName] : [],
      produces,
      stateless: true,
      workerFilter: names.length === 0 && !invert && !permissive && !sourceName ? { op: 'regex', regex: re } : undefined,
      // Captures of DATA through the fast linear path (fastExtractor: RegExp where it provably matches as RE2 in linear
      // time) cost about as much as kv; filters and other patterns run RE2, whose cost per byte can be large.
      inline: captures.length > 0 && !invert && !sourceName && fastExtractor(patternToken.text) !== null,
      stage(env) {
        const compiled = re.re
        const groups = compiled.namedGroups()
        const indexes = captures.map((c) => groups[c.source]!)
        return {
          push(e, out) {
            let input: string | Uint8Array
            if (sourceName) {
              const v = valueOf(e, sourceName)
              if (v === undefined) return
              input = v instanceof Uint8Array ? v : valueText(v)
            } else input = e.data
            // Without a literal every match holds, the entry does not match: as below when the regex says no.
            if (!re.mayMatch(input)) {
              if (invert || permissive) out(e)
              return
            }
            if (captures.length === 0 || invert) {
              if (compiled.test(input) !== invert || permissive) out(e)
              return
            }
            // LazyRegex.exec: RE2's captures, from a faster linear-time path where the pattern allows one.
            const groups = re.exec(input)
            if (groups === null) {
              if (permissive) out(e)
              return
            }
            const found = indexes.map((i) => groups[i])
            if (applyExtractions(e, captures, found, undefined, env.unread)) out(e)
          },
        }
      },
    }
  },
}
