// json (gravwell/wiki search/json/json.md): extracts members of a JSON document into values.
//   json [-s] [-e <value>] [-x <name>] <path> [op operand] [as name] ...
// A path is members separated by dots: `location.region_code`; an array element by its index, `groups.[0]` (also
// written `groups[0]`); `Metadata.[].State` takes the first element of the array that has the rest of the path; a
// member whose name holds dots, blanks or dashes is quoted, alone or as one part of a path: `"subfield.op"`,
// `fields."search-id"`. A value is named by the last part of its path (`region_code`, `[0]`) unless renamed with `as`.
//
// Values keep their JSON type: numbers are numbers, true/false booleans, strings their text; objects and arrays are
// set as their JSON text, and null as the text `null`. Strings are unescaped (JSON.parse reads them), which the wiki says
// the platform does not do: a user filtering `path == "/a b"` expects the text, not its JSON escape. Integers past
// 2^53 lose precision, as JSON.parse reads them.
//
// A member that is absent sets nothing and keeps the entry; a filter on it drops the entry, except `!=` and `!~`,
// which keep it (json.md); -s (strict) drops every entry that lacks one of the paths. An entry that is no JSON lacks
// them all. -e reads a value instead of DATA. -x <name> expands the array in the value `name` (one of this call's
// names, or a value set before): one entry per element, the element set as `name`; a value that is no array passes
// the entry as it is, and an empty array passes it without the value.
//
// The document is parsed once per entry, whatever the number of paths. When the entry's DATA is read (no -e), no -x is
// given and no path holds `[]`, the document is scanned over its bytes instead (jsonscan.ts), with the same answer:
// only the members named are decoded.
import { type Entry, cloneEntry } from '../entry'
import type { Token } from '../lex'
import { type ModuleDef, argError, readFlags } from '../module'
import type { ModuleCall } from '../parse'
import type { Value } from '../value'
import { type Extraction, extractingModule, flagValue, inputText, readExtractions } from './extractions'
import { SCAN_OK, SCAN_TOO_DEEP, memberValue, scanDocument, scanPlan } from './jsonscan'
import { FILTER_OPS, splitFilter } from './filter'

export type PathPart = { key: string } | { index: number } | { any: true }

/** The parts of a path as written (see the header); null when it is no path. */
export function parsePath(text: string): PathPart[] | null {
  const parts: PathPart[] = []
  let i = 0
  let needSep = false
  while (i < text.length) {
    const c = text[i]!
    if (c === '.' && needSep) {
      i++
      needSep = false
      if (i >= text.length) return null
      continue
    }
    if (c === '[') {
      const close = text.indexOf(']', i)
      if (close < 0) return null
      const inner = text.slice(i + 1, close)
      if (inner === '') parts.push({ any: true })
      else if (/^\d{1,9}$/.test(inner)) parts.push({ index: Number(inner) })
      else return null
      i = close + 1
      needSep = true
      continue
    }
    if (needSep) return null
    if (c === '"') {
      let key = ''
      i++
      for (;;) {
        if (i >= text.length) return null
        const d = text[i]!
        if (d === '"') break
        if (d === '\\' && (text[i + 1] === '"' || text[i + 1] === '\\')) {
          key += text[i + 1]
          i += 2
        } else key += text[i++]
      }
      i++
      parts.push({ key })
    } else {
      let j = i
      while (j < text.length && text[j] !== '.' && text[j] !== '[' && text[j] !== '"') j++
      if (j === i) return null
      parts.push({ key: text.slice(i, j) })
      i = j
    }
    needSep = true
  }
  return parts.length ? parts : null
}

/** A path written back so that parsePath and the lexer read it again as the same parts. */
export function pathText(parts: readonly PathPart[]): string {
  return parts
    .map((p, i) => {
      if ('index' in p) return `${i ? '.' : ''}[${p.index}]`
      if ('any' in p) return `${i ? '.' : ''}[]`
      // Quoted: what the lexer or a path would split, `as`, and a leading `-` (a flag otherwise).
      const plain = /^[^\s|"`.[\]=!<>~]+$/.test(p.key) && p.key !== 'as' && !(i === 0 && p.key.startsWith('-'))
      const key = plain ? p.key : `"${p.key.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`
      return i ? `.${key}` : key
    })
    .join('')
}

/** The name a path's value gets without `as`: its last part. */
export function pathName(parts: readonly PathPart[]): string {
  const last = parts.at(-1)!
  return 'key' in last ? last.key : 'index' in last ? `[${last.index}]` : '[]'
}

/** The member a path leads to in a parsed document, or undefined. */
export function walkPath(doc: unknown, parts: readonly PathPart[], from = 0): unknown {
  let v = doc
  for (let i = from; i < parts.length; i++) {
    if (v === null || typeof v !== 'object') return undefined
    const p = parts[i]!
    if ('key' in p) {
      if (Array.isArray(v) || !Object.hasOwn(v, p.key)) return undefined
      v = (v as Record<string, unknown>)[p.key]
    } else if ('index' in p) {
      if (!Array.isArray(v)) return undefined
      v = v[p.index]
    } else {
      if (!Array.isArray(v)) return undefined
      for (const el of v) {
        const found = walkPath(el, parts, i + 1)
        if (found !== undefined) return found
      }
      return undefined
    }
  }
  return v
}

/** A JSON member as a value: numbers, booleans and strings as they are, anything else as its JSON text. */
export function jsonValue(v: unknown): Value | undefined {
  switch (typeof v) {
    case 'string':
    case 'number':
    case 'boolean':
      return v
    case 'undefined':
      return undefined
  }
  try {
    return JSON.stringify(v)
  } catch {
    // Nested past what the engine's stack holds (JSON.parse read it): set nothing rather than fail the search.
    return undefined
  }
}

const SENTINEL = '\u0000default'

/**
 * Joins tokens the lexer split inside one path (`fields."search-id"` is a word `fields.` and a string next to it) and
 * separates a filter written against a path (`a."b"==3`). Returns the tokens readExtractions reads, and the parts of
 * every token that names a path.
 */
function pathTokens(call: ModuleCall, tokens: Token[]): { tokens: Token[]; paths: Map<Token, PathPart[]> } {
  const out: Token[] = []
  const texts = new Map<Token, string>()
  const startsWithOp = (w: string) => FILTER_OPS.some((o) => w.startsWith(o))
  let i = 0
  while (i < tokens.length) {
    const t = tokens[i]!
    // The name after `as` and an operand after an operator are no paths.
    if (t.kind === 'word' && (t.text === 'as' || startsWithOp(t.text))) {
      out.push(t)
      if (t.text === 'as' || splitFilter(t.text)?.rest === '') {
        if (tokens[i + 1]) out.push(tokens[i + 1]!)
        i += 2
      } else i++
      continue
    }
    let text = ''
    let end = t.pos
    let op: Token | undefined
    let j = i
    for (; j < tokens.length; j++) {
      const u = tokens[j]!
      if (j > i && u.pos !== end) break
      if (u.kind === 'string') text += `"${u.text.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`
      else {
        const split = splitFilter(u.text)
        if (split) {
          text += split.name
          const at = u.pos + split.name.length
          op = { kind: 'word', text: u.text.slice(split.name.length), pos: at, end: u.end }
          j++
          break
        }
        text += u.text
      }
      end = u.end
    }
    const merged: Token = { kind: 'string', text, pos: t.pos, end: op ? op.pos : end }
    texts.set(merged, text)
    out.push(merged)
    if (op) {
      out.push(op)
      if (op.text.length <= 2 && FILTER_OPS.includes(op.text as never) && tokens[j]) out.push(tokens[j++]!)
    }
    i = j
  }
  const paths = new Map<Token, PathPart[]>()
  for (const [tok, text] of texts) {
    const parts = parsePath(text)
    if (!parts) throw argError(call, `${JSON.stringify(text)} is no JSON path (members separated by dots, [n] for an array element)`, tok)
    paths.set(tok, parts)
  }
  return { tokens: out, paths }
}

interface JsonItem extends Extraction {
  path: PathPart[]
}

const opText = (x: Extraction) => {
  const operand = x.filter!.operand
  return /^[^\s|"`]+$/.test(operand) ? operand : `"${operand.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`
}

export const json: ModuleDef = {
  name: 'json',
  kind: 'extraction',
  info: 'Extracts members of JSON entries as values: dotted paths (location.region_code), array elements (groups.[0], Metadata.[].State) and quoted member names ("search-id"); each may be filtered inline (==, !=, <, >, <=, >=, ~, !~) and renamed with as. -s drops entries that lack a path, -e reads a value instead of the entry, -x expands an array into one entry per element.',
  examples: ['json Author | count by Author', 'json location.region_code as region status >= 500', 'json -e Data domain != "google.com" as dd', 'json -x groups groups uid'],
  compile(call) {
    const { flags, rest } = readFlags(call, { bool: ['s'], withValue: ['e', 'x'] })
    const { tokens, paths } = pathTokens(call, rest)
    const read = readExtractions(call, tokens, () => SENTINEL)
    if (read.length === 0 && !flags.has('x')) throw argError(call, 'json needs a path to extract', call.end)
    const items: JsonItem[] = read.map((x) => {
      const path = paths.get(x.token)
      if (!path) throw argError(call, `${JSON.stringify(x.source)} is no JSON path`, x.token)
      return { ...x, path, as: x.as === SENTINEL ? pathName(path) : x.as }
    })
    const strict = flags.has('s')
    const source = flagValue(flags, 'e')
    const expand = flagValue(flags, 'x')
    const parts = ['json']
    if (strict) parts.push('-s')
    if (source !== undefined) parts.push('-e', quoteName(source))
    if (expand !== undefined) parts.push('-x', quoteName(expand))
    for (const x of items) {
      let s = pathText(x.path)
      if (x.filter) s += ` ${x.filter.op} ${opText(x)}`
      if (x.as !== pathName(x.path)) s += ` as ${quoteName(x.as)}`
      parts.push(s)
    }
    const expandIndex = expand === undefined ? -1 : items.findIndex((x) => x.as === expand)
    const plan = source === undefined && expand === undefined ? scanPlan(items.map((x) => x.path)) : null
    return extractingModule({
      name: 'json',
      text: parts.join(' '),
      items,
      source,
      strict,
      consumes: [...(source !== undefined ? [source] : []), ...(expand !== undefined && expandIndex < 0 ? [expand] : [])],
      stage() {
        // the array -x expands, when one of the items is it
        let array: unknown
        return {
          read(e, found) {
            if (plan !== null) {
              const scanned = scanDocument(e.data, plan)
              if (scanned !== SCAN_TOO_DEEP) {
                for (let i = 0; i < items.length; i++) found[i] = scanned === SCAN_OK ? memberValue(e.data, plan, i) : undefined
                return
              }
            }
            const text = inputText(e, source)
            let doc: unknown
            if (text !== undefined) {
              try {
                doc = JSON.parse(text)
              } catch {
                doc = undefined
              }
            }
            array = undefined
            for (let i = 0; i < items.length; i++) {
              const raw = doc === undefined ? undefined : walkPath(doc, items[i]!.path)
              if (i === expandIndex) array = raw
              found[i] = jsonValue(raw)
            }
          },
          passOn:
            expand === undefined
              ? undefined
              : (e, out) => expandArray(e, expand, expandIndex < 0 ? parseArray(e.values.get(expand)) : array, out),
        }
      },
    })
  },
}

const quoteName = (s: string) => (/^[^\s|"`]+$/.test(s) ? s : `"${s.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`)

function parseArray(v: Value | undefined): unknown {
  if (typeof v !== 'string' || !v.startsWith('[')) return undefined
  try {
    return JSON.parse(v)
  } catch {
    return undefined
  }
}

function expandArray(e: Entry, name: string, array: unknown, out: (e: Entry) => void): void {
  if (!Array.isArray(array)) return out(e)
  if (array.length === 0) {
    e.values.delete(name)
    return out(e)
  }
  for (let i = 0; i < array.length; i++) {
    const copy = i === array.length - 1 ? e : cloneEntry(e)
    const v = jsonValue(array[i])
    if (v === undefined) copy.values.delete(name)
    else copy.values.set(name, v)
    out(copy)
  }
}
