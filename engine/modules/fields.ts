// fields and csv (gravwell/wiki search/fields/fields.md, search/csv/csv.md): extract fields by their index.
//   fields [-e <value>] [-d <delimiter>] [-s] [-q] [-clean] [n] [op operand] [as name] ...
//   csv [-e <value>] [-s] [n] [op operand] [as name] ...
// An index is `[n]` from 0, in base 10, 8 (a leading 0) or 16 (0x), as Go reads integers: `[0xA]` is the 11th field,
// `[010]` the 9th. A field is named by the index as written (`[0xA]` sets `0xA`) unless renamed with `as`.
//
// fields splits on a delimiter (default `,`; any text, escapes `\t` `\xNN` read as bytes, so `-d "\xd8\xff"` splits
// binary data). -q ignores delimiters inside double quotes (the quotes stay in the field); -clean trims blanks around
// fields, and with -q removes the quotes of a quoted field. csv reads RFC 4180 records: fields separated by commas,
// a field in double quotes may hold commas, line breaks and `""` (one quote); blanks around fields and the quotes are
// always removed. Values are text.
//
// A field past the last one sets nothing and keeps the entry; a filter on it drops the entry, except `!=` and `!~`,
// which keep it (fields.md); -s (strict) drops every entry that lacks one of the fields. -e reads a value instead of
// DATA.
import { type Entry, valueOf } from '../entry'
import { type Token, quote } from '../lex'
import { type CompiledModule, type ModuleDef, argError, flagsText, readFlags } from '../module'
import type { ModuleCall } from '../parse'
import { valueText } from '../value'
import { type Extraction, extractingModule, extractionsText, flagValue, readExtractions } from './extractions'

/** Go's base-0 integer syntax, as the index of a field: 10, 010 (octal), 0x1f, 0o17, 0b101. */
export function parseIndex(text: string): number | null {
  let n: number
  if (/^0[xX][0-9a-fA-F]+$/.test(text)) n = Number.parseInt(text.slice(2), 16)
  else if (/^0[oO]?[0-7]+$/.test(text)) n = Number.parseInt(text.replace(/^0[oO]?/, ''), 8)
  else if (/^0[bB][01]+$/.test(text)) n = Number.parseInt(text.slice(2), 2)
  else if (/^(0|[1-9]\d*)$/.test(text)) n = Number(text)
  else return null
  return n <= MAX_INDEX ? n : null
}

/** The highest index a query may ask for: far past any real record, low enough that nothing is allocated for it. */
export const MAX_INDEX = 1_000_000

const indexName = (source: string) => source.slice(1, -1)

function readIndexes(call: ModuleCall, rest: Token[]): { items: Extraction[]; indexes: number[] } {
  const items = readExtractions(call, rest, indexName)
  if (items.length === 0) throw argError(call, `${call.name} needs a field index such as [0]`, call.end)
  const indexes = items.map((x) => {
    const m = /^\[(.*)\]$/.exec(x.source)
    const n = m ? parseIndex(m[1]!) : null
    if (n === null) throw argError(call, `${JSON.stringify(x.source)} is no field index: [n], n from 0 to ${MAX_INDEX}`, x.token)
    return n
  })
  return { items, indexes }
}

/** The input as latin1 text (one character per byte), so that binary delimiters split bytes. */
function inputBytes(e: Entry, source: string | undefined): string | undefined {
  if (source === undefined) return Buffer.from(e.data.buffer, e.data.byteOffset, e.data.byteLength).toString('latin1')
  const v = valueOf(e, source)
  if (v === undefined) return undefined
  return v instanceof Uint8Array ? Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('latin1') : Buffer.from(valueText(v)).toString('latin1')
}

const fromBytes = (s: string) => Buffer.from(s, 'latin1').toString('utf8')

/** A delimiter argument as latin1 bytes: `\xNN` is one byte, `\t` `\n` `\r` `\0` `\\` `\"` their characters, the rest UTF-8. */
export function delimiterBytes(text: string): string {
  let out = ''
  let plain = ''
  const flush = () => {
    out += Buffer.from(plain).toString('latin1')
    plain = ''
  }
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    const hex = c === '\\' ? /^x([0-9a-fA-F]{2})/.exec(text.slice(i + 1)) : null
    if (hex) {
      flush()
      out += String.fromCharCode(Number.parseInt(hex[1]!, 16))
      i += 3
    } else if (c === '\\' && /[tnr0\\"]/.test(text[i + 1] ?? '')) {
      const n = text[++i]!
      plain += n === 't' ? '\t' : n === 'n' ? '\n' : n === 'r' ? '\r' : n === '0' ? '\0' : n
    } else plain += c
  }
  flush()
  return out
}

const BLANKS = /^[ \t\r\n\v\f]+|[ \t\r\n\v\f]+$/g

/** The fields of a record up to index `last`, split on `delim` (fields.md). */
export function splitFields(text: string, delim: string, quoted: boolean, clean: boolean, last: number): string[] {
  const out: string[] = []
  let start = 0
  let inQuote = false
  for (let i = 0; i < text.length && out.length <= last; ) {
    if (quoted && text.charCodeAt(i) === 34) {
      inQuote = !inQuote
      i++
    } else if (!inQuote && text.startsWith(delim, i)) {
      out.push(text.slice(start, i))
      i += delim.length
      start = i
    } else i++
  }
  if (out.length <= last) out.push(text.slice(start))
  if (clean)
    for (let i = 0; i < out.length; i++) {
      let f = out[i]!.replace(BLANKS, '')
      if (quoted && f.length >= 2 && f.startsWith('"') && f.endsWith('"')) f = f.slice(1, -1)
      out[i] = f
    }
  return out
}

const isBlank = (c: number) => c === 32 || c === 9 || c === 13 || c === 10

/**
 * The fields of one CSV record (RFC 4180, with blanks around fields ignored), up to index `last`, and where the record
 * ends (past its line break, for documents of many records; `record` false reads line breaks outside quotes as text).
 */
export function csvRecord(text: string, from = 0, last = Number.MAX_SAFE_INTEGER, record = false): { fields: string[]; end: number } {
  const fields: string[] = []
  let i = from
  const n = text.length
  for (;;) {
    while (i < n && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9)) i++
    let field = ''
    if (text.charCodeAt(i) === 34) {
      i++
      for (;;) {
        const q = text.indexOf('"', i)
        if (q < 0) {
          field += text.slice(i)
          i = n
          break
        }
        field += text.slice(i, q)
        if (text.charCodeAt(q + 1) === 34) {
          field += '"'
          i = q + 2
        } else {
          i = q + 1
          break
        }
      }
      // Text after the closing quote (not RFC 4180) is kept, blanks dropped.
      let j = i
      while (j < n && text.charCodeAt(j) !== 44 && !(record && text.charCodeAt(j) === 10)) j++
      field += text.slice(i, j).trim()
      i = j
    } else {
      let j = i
      while (j < n && text.charCodeAt(j) !== 44 && !(record && text.charCodeAt(j) === 10)) j++
      let k = j
      while (k > i && isBlank(text.charCodeAt(k - 1))) k--
      field = text.slice(i, k)
      i = j
    }
    if (fields.length <= last) fields.push(field)
    if (i >= n) return { fields, end: n }
    if (text.charCodeAt(i) === 10) return { fields, end: i + 1 }
    i++ // the comma
    if (fields.length > last && !record) return { fields, end: i }
  }
}

/** Every record of a CSV document (lookup tables, enrich resources); empty lines are skipped. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = []
  for (let i = 0; i < text.length; ) {
    const { fields, end } = csvRecord(text, i, Number.MAX_SAFE_INTEGER, true)
    if (!(fields.length === 1 && fields[0] === '')) rows.push(fields)
    i = end
  }
  return rows
}

function indexModule(
  call: ModuleCall,
  flags: Map<string, Token | true>,
  rest: Token[],
  split: (text: string, last: number) => string[],
  binary: boolean,
): CompiledModule {
  const { items, indexes } = readIndexes(call, rest)
  const strict = flags.has('s')
  const source = flagValue(flags, 'e')
  const last = Math.max(...indexes)
  return extractingModule({
    name: call.name,
    text: [call.name, ...flagsText(flags, quote), ...extractionsText(items, indexName)].join(' '),
    items,
    source,
    strict,
    stage: () => ({
      read(e, found) {
        const text = binary ? inputBytes(e, source) : textOf(e, source)
        const fields = text === undefined ? [] : split(text, last)
        for (let i = 0; i < items.length; i++) {
          const f = fields[indexes[i]!]
          found[i] = f === undefined ? undefined : binary ? fromBytes(f) : f
        }
      },
    }),
  })
}

function textOf(e: Entry, source: string | undefined): string | undefined {
  if (source === undefined) return Buffer.from(e.data.buffer, e.data.byteOffset, e.data.byteLength).toString('utf8')
  const v = valueOf(e, source)
  if (v === undefined) return undefined
  return v instanceof Uint8Array ? Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('utf8') : valueText(v)
}

export const fields: ModuleDef = {
  name: 'fields',
  kind: 'extraction',
  info: 'Extracts fields by their index ([0] is the first) from data split on a delimiter: -d sets it (default ","; "\\t" for tabs, any text), -q ignores delimiters inside double quotes, -clean trims blanks (and quotes with -q), -s drops entries that lack a field, -e reads a value instead of the entry. Fields may be filtered inline and renamed with as.',
  examples: ['fields -d "\\t" [9] as url', 'fields -clean -d "|" [3] [4] [5]', 'fields -d "\\t" [9] ~ " " as url [2] as requester'],
  compile(call) {
    const { flags, rest } = readFlags(call, { bool: ['s', 'q', 'clean'], withValue: ['e', 'd'] })
    const d = flags.get('d')
    const delim = d && d !== true ? delimiterBytes(d.text) : ','
    if (delim === '') throw argError(call, 'the delimiter (-d) cannot be empty', d as never)
    const quoted = flags.has('q')
    if (quoted && delim.includes('"')) throw argError(call, 'with -q the delimiter cannot hold a double quote', d as never)
    const clean = flags.has('clean')
    return indexModule(call, flags, rest, (text, last) => splitFields(text, delim, quoted, clean, last), true)
  },
}

export const csv: ModuleDef = {
  name: 'csv',
  kind: 'extraction',
  info: 'Extracts columns of comma separated values by their index ([0] is the first): quoted columns may hold commas, line breaks and doubled quotes; blanks and quotes around columns are removed. -s drops entries that lack a column, -e reads a value instead of the entry. Columns may be filtered inline and renamed with as.',
  examples: ['csv [9] as url', 'csv [5]!=stuff [4] [3]~"things"', 'csv -e params [0] [1] [2]'],
  compile(call) {
    const { flags, rest } = readFlags(call, { bool: ['s'], withValue: ['e'] })
    return indexModule(call, flags, rest, (text, last) => csvRecord(text, 0, last).fields, false)
  },
}
