// The argument list shared by the extraction modules (json, kv, fields, csv, syslog, regex's captures...):
//   <name> [<op> <operand>] [as <newname>] ...
// `name` is what the module extracts (a path, a key, an index), `as` names the value it sets (default: the name, or
// the module's own default), and an inline filter drops entries whose extracted value fails it.
import { asBuffer } from '../entry'
import { type Entry, valueOf } from '../entry'
import type { Token } from '../lex'
import { quote } from '../lex'
import { type CompiledModule, type Sink, argError } from '../module'
import type { ModuleCall } from '../parse'
import { type Value, valueText } from '../value'
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

/**
 * A name to extract written so that readExtractions reads it back as the same name: in double quotes when as a word
 * it would be a flag (`-x`), the keyword `as`, or hold a filter operator.
 */
export function quoteSource(source: string): string {
  const q = quote(source)
  if (q !== source || !(source.startsWith('-') || source === 'as' || splitFilter(source))) return q
  return `"${source.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`
}

/** The normal form of extraction items. */
export function extractionsText(items: readonly Extraction[], defaultAs: (source: string) => string = (s) => s): string[] {
  return items.map((x) => {
    let s = quoteSource(x.source)
    if (x.filter) s += ` ${x.filter.op} ${quote(x.filter.operand)}`
    if (x.as !== defaultAs(x.source)) s += ` as ${quote(x.as)}`
    return s
  })
}

/**
 * How extraction modules treat a value they did not find:
 * - `fails` (the default): an item with a filter drops the entry.
 * - `lenient`: the wiki's rule for json, kv, fields, csv: an item with `!=` or `!~` on a missing value keeps the
 *   entry (the value is not set); other filters drop it.
 * `strict` (the modules' `-s`): any item, filtered or not, that found nothing drops the entry.
 */
export interface MissingRule {
  missing?: 'fails' | 'lenient'
  strict?: boolean
}

/**
 * Sets the extracted values on the entry; false when an inline filter fails (the entry is dropped) or when an item
 * found nothing and `rule` says that drops it (see MissingRule). Items without a filter that found nothing set
 * nothing and keep the entry unless strict.
 */
export function applyExtractions(e: Entry, items: readonly Extraction[], found: (Value | undefined)[], rule?: MissingRule, unread?: ReadonlySet<string>): boolean {
  for (let i = 0; i < items.length; i++) {
    const x = items[i]!
    const v = found[i]
    if (v === undefined) {
      if (rule?.strict) return false
      if (x.filter && !(rule?.missing === 'lenient' && (x.filter.op === '!=' || x.filter.op === '!~'))) return false
      continue
    }
    if (x.filter && !x.filter.test(v)) return false
    // A value nothing after this stage reads (RunEnv.unread) is not set: its filter above is all it is for.
    if (unread === undefined || !unread.has(x.as)) e.values.set(x.as, v)
  }
  return true
}

/** What one stage of an extracting module does per entry (see extractingModule). */
export interface ExtractingStage {
  /** Sets found[i] to the value item i names in the entry (undefined: not there); false drops the entry at once. */
  read(e: Entry, found: (Value | undefined)[]): boolean | void
  /** Passes on an entry the items kept (default: as it is). */
  passOn?(e: Entry, out: Sink): void
}

/**
 * The compiled module of an extraction that reads values from its input (DATA, or the value `-e` names) by the
 * platform's lenient rule (MissingRule): per entry the stage reads the items' values, applies their filters and
 * renames (applyExtractions), and passes on the entries they keep. Stateless: the stage keeps nothing across entries.
 */
export function extractingModule(spec: {
  name: string
  text: string
  items: readonly Extraction[]
  /** The value read instead of DATA (`-e`). */
  source: string | undefined
  /** `-s`: an item that found nothing drops the entry. */
  strict?: boolean
  /** Values read besides `source` (default: `source` alone). */
  consumes?: string[]
  stage(): ExtractingStage
}): CompiledModule {
  const { items } = spec
  return {
    name: spec.name,
    kind: 'extraction',
    text: spec.text,
    consumes: spec.consumes ?? (spec.source !== undefined ? [spec.source] : []),
    produces: [...new Set(items.map((x) => x.as))],
    stateless: true,
    stage(env) {
      const found: (Value | undefined)[] = new Array(items.length)
      const rule: MissingRule = { missing: 'lenient', strict: spec.strict ?? false }
      const { read, passOn } = spec.stage()
      return {
        push(e, out) {
          if (read(e, found) === false || !applyExtractions(e, items, found, rule, env.unread)) return
          if (passOn) passOn(e, out)
          else out(e)
        },
      }
    },
  }
}

/**
 * The escapes a delimiter or separator argument may hold, as the platform reads them (`-d "\t"`, `-d "\xd8\xff"`):
 * `\t` `\n` `\r` `\0` `\\` `\"` and `\xNN`; any other backslash stays as written. The lexer already resolved `\"`
 * and `\\` in double quotes, so one backslash here is what the user wrote.
 */
export function unescapeArg(text: string): string {
  if (!text.includes('\\')) return text
  return text.replace(/\\(x[0-9a-fA-F]{2}|[tnr0\\"])/g, (_, c: string) => {
    if (c[0] === 'x') return String.fromCharCode(Number.parseInt(c.slice(1), 16))
    return c === 't' ? '\t' : c === 'n' ? '\n' : c === 'r' ? '\r' : c === '0' ? '\0' : c
  })
}

/** The input of an extraction: the named value (`-e`) or DATA, as text; undefined when the entry has no such value. */
export function inputText(e: Entry, source: string | undefined): string | undefined {
  if (source === undefined) return decodeUtf8(e.data)
  const v = valueOf(e, source)
  if (v === undefined) return undefined
  return v instanceof Uint8Array ? decodeUtf8(v) : valueText(v)
}

/** UTF-8 text of bytes (invalid sequences become U+FFFD), without copying them. */
export function decodeUtf8(d: Uint8Array): string {
  return asBuffer(d).toString('utf8')
}


/** The value name of a `-e <name>` flag read by readFlags, or undefined. */
export function flagValue(flags: Map<string, Token | true>, name: string): string | undefined {
  const v = flags.get(name)
  return v && v !== true ? v.text : undefined
}
