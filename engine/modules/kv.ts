// kv (gravwell/wiki search/kv/kv.md): extracts the values of `key=value` pairs.
//   kv [-e <value>] [-sep <separator>] [-d <delimiters> | -dall <delimiter>] [-s] [-q] [-noclean] <key> [op operand] [as name] ...
// The separator (default `=`, any text: `-sep EQUALS`) sits between a key and its value; delimiters separate pairs:
// -d gives a set of characters (default blank and tab), -dall one delimiter as a whole text. Both read the escapes
// `\t` `\n` `\r` `\xNN` (`-d "\t"`). By default blanks around the separator and before a value are ignored (`x = 1`
// reads as `x=1`); -noclean keeps them (`key=   value` gives `   value`; needed when the
// separator is a blank). -q reads values in double quotes, which
// may hold delimiters (`msg="a b"` gives `a b`; `\"` inside stands for `"`). A value runs to the next delimiter; the
// first pair with a key wins. Values are text (filters and aggregates read numbers from them).
//
// A key that is absent sets nothing and keeps the entry; a filter on it drops the entry, except `!=` and `!~`, which
// keep it (kv.md); -s (strict) drops every entry that lacks one of the keys. -e reads a value instead of DATA.
import { quote } from '../lex'
import { type ModuleDef, argError, flagsText, readFlags } from '../module'
import type { Value } from '../value'
import { asBuffer, TextInterner } from '../entry'
import { extractingModule, extractionsText, flagValue, inputText, readExtractions, unescapeArg } from './extractions'

export interface KvOptions {
  separator: string
  /** Delimiter characters (-d), or one delimiter text (-dall). */
  delimiters: { chars: string } | { text: string }
  quoted: boolean
  clean: boolean
}

const isBlank = (c: string | undefined) => c === ' ' || c === '\t'

/**
 * What readPairsBytes needs, prepared once per module: the delimiters and the separator as bytes, and the wanted
 * keys as bytes by length. Null when a delimiter or the separator is not ASCII (those read the decoded text).
 */
export interface BytePlan {
  delim: Uint8Array
  sep: Uint8Array
  keysByLength: Map<number, { bytes: Uint8Array; key: string }[]>
  /** The values' texts, found again rather than decoded again (TextInterner). */
  texts: TextInterner
}

export function bytePlan(wanted: ReadonlySet<string>, o: KvOptions): BytePlan | null {
  if (!('chars' in o.delimiters) || !/^[\x00-\x7f]+$/.test(o.delimiters.chars) || !/^[\x00-\x7f]+$/.test(o.separator)) return null
  const delim = new Uint8Array(256)
  for (const c of o.delimiters.chars) delim[c.charCodeAt(0)] = 1
  const keysByLength = new Map<number, { bytes: Uint8Array; key: string }[]>()
  for (const key of wanted) {
    const bytes = Buffer.from(key)
    const list = keysByLength.get(bytes.byteLength) ?? []
    list.push({ bytes, key })
    keysByLength.set(bytes.byteLength, list)
  }
  return { delim, sep: Buffer.from(o.separator, 'latin1'), keysByLength, texts: new TextInterner() }
}

/** ASCII whitespace as String.prototype.trim removes it. */
const isAsciiSpace = (b: number) => b === 0x20 || (b >= 0x09 && b <= 0x0d)

/**
 * readPairs over the bytes of UTF-8 text, with the same answer as readPairs over their decoding: delimiters and the
 * separator are ASCII, and a UTF-8 decoder never takes an ASCII byte into another character (an invalid sequence
 * ends before it), so pairs end at the same places; only the wanted values are decoded, and keys are compared as
 * bytes (a key with a non-ASCII byte is decoded and trimmed as readPairs does).
 */
export function readPairsBytes(data: Buffer, wanted: ReadonlySet<string>, o: KvOptions, plan: BytePlan): Map<string, string> {
  const found = new Map<string, string>()
  const { delim, sep, keysByLength } = plan
  const sepLen = sep.byteLength
  const sep0 = sep[0]!
  const n = data.byteLength
  const sepAt = (p: number) => {
    if (data[p] !== sep0 || p + sepLen > n) return false
    for (let k = 1; k < sepLen; k++) if (data[p + k] !== sep[k]) return false
    return true
  }
  const blank = (p: number) => p < n && (data[p] === 0x20 || data[p] === 0x09)
  let pos = 0
  while (pos < n && found.size < wanted.size) {
    while (pos < n && delim[data[pos]!] === 1) pos++
    if (pos >= n) break
    const keyStart = pos
    let p = pos
    while (p < n && !sepAt(p) && delim[data[p]!] === 0) p++
    let sepPos = -1
    if (p < n && sepAt(p)) sepPos = p
    else if (o.clean) {
      let q = p
      while (blank(q)) q++
      if (q > p && sepAt(q)) sepPos = q
    }
    if (sepPos < 0) {
      pos = p
      continue
    }
    const afterSep = sepPos + sepLen
    let v = afterSep
    while (blank(v)) v++
    let value: string
    if (o.quoted && data[v] === 0x22) {
      let j = v + 1
      let escaped = false
      while (j < n && data[j] !== 0x22) {
        if (data[j] === 0x5c && data[j + 1] === 0x22) {
          escaped = true
          j += 2
        } else j++
      }
      pos = j + 1
      const key = keyOf(data, keyStart, p, o.clean, keysByLength)
      if (key === null || !wanted.has(key) || found.has(key)) continue
      value = plan.texts.utf8(data, v + 1, j)
      if (escaped) value = value.replaceAll('\\"', '"')
      found.set(key, value)
    } else {
      let end = v
      while (end < n && delim[data[end]!] === 0) end++
      pos = end
      const key = keyOf(data, keyStart, p, o.clean, keysByLength)
      if (key === null || !wanted.has(key) || found.has(key)) continue
      found.set(key, plan.texts.utf8(data, o.clean ? v : afterSep, end))
    }
  }
  return found
}

/** The key of the bytes [start, end) when it may be wanted (null when it cannot be; '' is never wanted). */
function keyOf(data: Buffer, start: number, end: number, clean: boolean, keysByLength: BytePlan['keysByLength']): string | null {
  let s = start
  let e = end
  let ascii = true
  for (let i = s; i < e; i++)
    if (data[i]! >= 0x80) {
      ascii = false
      break
    }
  if (!ascii) {
    const text = data.toString('utf8', s, e)
    const key = clean ? text.trim() : text
    return key === '' ? null : key
  }
  if (clean) {
    while (s < e && isAsciiSpace(data[s]!)) s++
    while (e > s && isAsciiSpace(data[e - 1]!)) e--
  }
  if (s === e) return null
  const candidates = keysByLength.get(e - s)
  if (candidates === undefined) return null
  next: for (const c of candidates) {
    for (let k = 0; k < c.bytes.byteLength; k++) if (data[s + k] !== c.bytes[k]) continue next
    return c.key
  }
  return null
}

/**
 * Reads the pairs of `text` and returns the values of the keys in `wanted` (the first pair of each key), by key.
 * Stops once every wanted key is found.
 */
export function readPairs(text: string, wanted: ReadonlySet<string>, o: KvOptions): Map<string, string> {
  const found = new Map<string, string>()
  const sep = o.separator
  const chars = 'chars' in o.delimiters ? o.delimiters.chars : null
  const dtext = 'text' in o.delimiters ? o.delimiters.text : ''
  const delimAt = chars !== null ? (p: number) => (chars.includes(text[p]!) ? 1 : 0) : (p: number) => (text.startsWith(dtext, p) ? dtext.length : 0)
  const n = text.length
  let pos = 0
  while (pos < n && found.size < wanted.size) {
    for (let l = delimAt(pos); l > 0 && pos < n; l = delimAt(pos)) pos += l
    if (pos >= n) break
    const keyStart = pos
    let p = pos
    while (p < n && !text.startsWith(sep, p) && delimAt(p) === 0) p++
    let sepAt = -1
    if (text.startsWith(sep, p)) sepAt = p
    else if (o.clean) {
      let q = p
      while (isBlank(text[q])) q++
      if (q > p && text.startsWith(sep, q)) sepAt = q
    }
    if (sepAt < 0) {
      pos = p
      continue
    }
    let key = text.slice(keyStart, p)
    if (o.clean) key = key.trim()
    // Blanks before a value belong to it only with -noclean (`key=   value`): they never end it.
    const afterSep = sepAt + sep.length
    let v = afterSep
    while (isBlank(text[v])) v++
    let value: string
    if (o.quoted && text[v] === '"') {
      let j = v + 1
      let escaped = false
      while (j < n && text[j] !== '"') {
        if (text[j] === '\\' && text[j + 1] === '"') {
          escaped = true
          j += 2
        } else j++
      }
      value = text.slice(v + 1, j)
      if (escaped) value = value.replaceAll('\\"', '"')
      pos = j + 1
    } else {
      let end = v
      while (end < n && delimAt(end) === 0) end++
      value = text.slice(o.clean ? v : afterSep, end)
      pos = end
    }
    if (key !== '' && wanted.has(key) && !found.has(key)) found.set(key, value)
  }
  return found
}

export const kv: ModuleDef = {
  name: 'kv',
  kind: 'extraction',
  info: 'Extracts the values of key=value pairs: -sep sets the separator (default =), -d the delimiter characters between pairs (default blank and tab) or -dall one delimiter text, -q reads quoted values, -noclean keeps blanks around values, -s drops entries that lack a key, -e reads a value instead of the entry. Keys may be filtered inline (==, !=, <, >, <=, >=, ~, !~) and renamed with as.',
  examples: ['kv -q devname level=="critical" logdesc msg', 'kv -sep ":" -d "|" user as who', 'kv -sep EQUALS y'],
  compile(call) {
    const { flags, rest } = readFlags(call, { bool: ['s', 'q', 'noclean'], withValue: ['e', 'sep', 'd', 'dall'] })
    const sepToken = flags.get('sep')
    const separator = sepToken && sepToken !== true ? unescapeArg(sepToken.text) : '='
    if (separator === '') throw argError(call, 'the separator (-sep) cannot be empty', sepToken as never)
    const d = flags.get('d')
    const dall = flags.get('dall')
    if (d && dall) throw argError(call, '-d and -dall cannot be combined', dall as never)
    let delimiters: KvOptions['delimiters'] = { chars: ' \t' }
    if (d && d !== true) {
      const chars = unescapeArg(d.text)
      if (chars === '') throw argError(call, 'the delimiters (-d) cannot be empty', d)
      delimiters = { chars }
    }
    if (dall && dall !== true) {
      const text = unescapeArg(dall.text)
      if (text === '') throw argError(call, 'the delimiter (-dall) cannot be empty', dall)
      delimiters = { text }
    }
    const items = readExtractions(call, rest)
    if (items.length === 0) throw argError(call, 'kv needs a key to extract', call.end)
    const options: KvOptions = { separator, delimiters, quoted: flags.has('q'), clean: !flags.has('noclean') }
    const strict = flags.has('s')
    const source = flagValue(flags, 'e')
    const wanted = new Set(items.map((x) => x.source))
    const plan = bytePlan(wanted, options)
    const textPairs = (text: string | undefined) => (text === undefined ? undefined : readPairs(text, wanted, options))
    return extractingModule({
      name: 'kv',
      text: ['kv', ...flagsText(flags, quote), ...extractionsText(items)].join(' '),
      items,
      source,
      strict,
      stage: () => ({
        read(e, found) {
          // DATA is read as bytes when the delimiters and separator allow it (most queries): no decoding of the whole
          // entry, only of the values found.
          const pairs =
            source === undefined && plan !== null
              ? readPairsBytes(asBuffer(e.data), wanted, options, plan)
              : textPairs(inputText(e, source))
          for (let i = 0; i < items.length; i++) found[i] = pairs?.get(items[i]!.source)
        },
      }),
    })
  },
}
