// The argument list shared by the extraction modules (json, kv, fields, csv, syslog, regex's captures...):
//   <name> [<op> <operand>] [as <newname>] ...
// `name` is what the module extracts (a path, a key, an index), `as` names the value it sets (default: the name, or
// the module's own default), and an inline filter drops entries whose extracted value fails it.
import type { Entry } from '../entry'
import type { Token } from '../lex'
import { quote } from '../lex'
import { argError } from '../module'
import type { ModuleCall } from '../parse'
import type { Value } from '../value'
import { type FilterOp, type ValueTest, FILTER_OPS, splitFilter, valueTest } from './filter'

export interface Extraction {
  /** What to extract, as written (a path, a key, an index). */
  source: string
  /** The value it sets. */
  as: string
  filter?: { op: FilterOp; operand: string; test: ValueTest }
  /** The token of the source (for errors). */
  token: Token
}

/**
 * Reads `<name> [op operand] [as newname]` items from tokens. `defaultAs` gives the name a value gets without `as`
 * (by default the source as written).
 */
export function readExtractions(call: ModuleCall, tokens: Token[], defaultAs: (source: string) => string = (s) => s): Extraction[] {
  const out: Extraction[] = []
  let i = 0
  while (i < tokens.length) {
    const t = tokens[i]!
    let source = t.text
    let filter: Extraction['filter']
    const split = t.kind === 'word' ? splitFilter(t.text) : null
    if (split && split.name !== '') {
      source = split.name
      let operand = split.rest
      if (operand === '') {
        const next = tokens[i + 1]
        if (!next) throw argError(call, `${split.op} needs a value to compare with`, call.end)
        operand = next.text
        i++
      }
      filter = { op: split.op, operand, test: valueTest(split.op, operand) }
    } else {
      const next = tokens[i + 1]
      const op = next?.kind === 'word' ? FILTER_OPS.find((o) => next.text.startsWith(o)) : undefined
      if (op && next && splitFilter(next.text)?.name === '') {
        let operand = next.text.slice(op.length)
        i++
        if (operand === '') {
          const v = tokens[i + 1]
          if (!v) throw argError(call, `${op} needs a value to compare with`, call.end)
          operand = v.text
          i++
        }
        filter = { op, operand, test: valueTest(op, operand) }
      }
    }
    if (source === '') throw argError(call, 'expected a name to extract', t)
    i++
    let as = defaultAs(source)
    if (tokens[i]?.kind === 'word' && tokens[i]!.text === 'as') {
      const name = tokens[i + 1]
      if (!name) throw argError(call, '"as" needs a name', call.end)
      as = name.text
      i += 2
    }
    out.push({ source, as, filter, token: t })
  }
  return out
}

/** The normal form of extraction items. */
export function extractionsText(items: readonly Extraction[], defaultAs: (source: string) => string = (s) => s): string[] {
  return items.map((x) => {
    let s = quote(x.source)
    if (x.filter) s += ` ${x.filter.op} ${quote(x.filter.operand)}`
    if (x.as !== defaultAs(x.source)) s += ` as ${quote(x.as)}`
    return s
  })
}

/**
 * Sets the extracted values on the entry; false when an inline filter fails (the entry is dropped) or when an item
 * with a filter found nothing. Items without a filter that found nothing set nothing and keep the entry.
 */
export function applyExtractions(e: Entry, items: readonly Extraction[], found: (Value | undefined)[]): boolean {
  for (let i = 0; i < items.length; i++) {
    const x = items[i]!
    const v = found[i]
    if (x.filter && !x.filter.test(v)) return false
    if (v !== undefined) e.values.set(x.as, v)
  }
  return true
}
