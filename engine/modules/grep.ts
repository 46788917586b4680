// grep (gravwell/wiki search/grep/grep.md): passes entries that contain any of its patterns.
//   grep [-v] [-i] [-w] [-s] [-simple] [-e <value>] <pattern> [<pattern>...]
// A pattern is literal text in which `*` matches any run of bytes (none to many) unless -simple or -w is given; `\*`
// is a literal star, and `\xNN`, `\n`, `\r`, `\t`, `\\` are the printf escapes, so binary bytes can be matched.
// -v drops what matches instead; -i ignores ASCII case; -w matches whole words only (the pattern bounded by bytes
// that are not letters, digits or `_`); -s (strict) needs every pattern to match (with -v: drops when all match);
// -e reads the named value instead of DATA (an entry without it does not match).
import { asBuffer, valueOf } from '../entry'
import { quote } from '../lex'
import { type ModuleDef, argError, flagsText, readFlags } from '../module'
import { type Value, valueText } from '../value'

const encoder = new TextEncoder()

/** A pattern's parts: literal byte runs separated by `*` (one part when it has no wildcard). */
function patternParts(p: string, wildcards: boolean): Uint8Array[] {
  const parts: number[][] = [[]]
  const bytes = (s: string) => [...encoder.encode(s)]
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!
    if (c === '\\' && i + 1 < p.length) {
      const n = p[i + 1]!
      const hex = /^x([0-9a-fA-F]{2})/.exec(p.slice(i + 1))
      if (hex) {
        parts.at(-1)!.push(Number.parseInt(hex[1]!, 16))
        i += 3
        continue
      }
      const esc: Record<string, string> = { n: '\n', r: '\r', t: '\t', '\\': '\\', '*': '*' }
      if (esc[n] !== undefined) {
        parts.at(-1)!.push(...bytes(esc[n]!))
        i++
        continue
      }
    }
    if (c === '*' && wildcards) parts.push([])
    else parts.at(-1)!.push(...bytes(c))
  }
  return parts.map((x) => Uint8Array.from(x))
}

const isWordByte = (b: number | undefined) =>
  b !== undefined && ((b >= 48 && b <= 57) || (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || b === 95 || b >= 0x80)

function lowerAscii(d: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(d.byteLength)
  for (let i = 0; i < d.byteLength; i++) {
    const b = d[i]!
    out[i] = b >= 65 && b <= 90 ? b + 32 : b
  }
  return out
}

/** A test of one pattern against bytes. */
function matcher(parts: Uint8Array[], word: boolean): (d: Buffer) => boolean {
  if (parts.length === 1) {
    const needle = parts[0]!
    if (!word) return (d) => d.includes(needle)
    return (d) => {
      for (let at = d.indexOf(needle); at >= 0; at = d.indexOf(needle, at + 1)) {
        if (!isWordByte(d[at - 1]) && !isWordByte(d[at + needle.byteLength])) return true
      }
      return false
    }
  }
  // Wildcards: the parts in order, each after the previous (leftmost placement is enough for a yes/no answer).
  return (d) => {
    let at = 0
    for (const p of parts) {
      if (p.byteLength === 0) continue
      const found = d.indexOf(p, at)
      if (found < 0) return false
      at = found + p.byteLength
    }
    return true
  }
}

/** A value's bytes as grep searches them: bytes as they are, anything else as its text. */
const valueBytes = (v: Value | undefined): Buffer | null => {
  if (v === undefined) return null
  if (v instanceof Uint8Array) return asBuffer(v)
  return Buffer.from(valueText(v))
}

export const grep: ModuleDef = {
  name: 'grep',
  kind: 'filter',
  info: 'Passes entries that contain any of the given texts (`*` matches any run of bytes); -v drops them instead, -i ignores case, -w matches whole words, -s needs all of them, -simple takes `*` as written, -e reads a value instead of the entry.',
  examples: ['grep error', 'grep -i -w "connection refused"', 'grep -v -e path "/health*"'],
  compile(call) {
    const { flags, rest } = readFlags(call, { bool: ['v', 'i', 'w', 's', 'simple'], withValue: ['e'] })
    if (rest.length === 0) throw argError(call, 'grep needs a text to look for', call.end)
    for (const t of rest) if (t.text === '') throw argError(call, 'grep needs a non-empty text', t)
    const invert = flags.has('v')
    const caseless = flags.has('i')
    const word = flags.has('w')
    const strict = flags.has('s')
    const source = flags.get('e')
    const sourceName = source && source !== true ? source.text : undefined
    const wildcards = !flags.has('simple') && !word
    const tests = rest.map((t) => matcher(patternParts(caseless ? t.text.toLowerCase() : t.text, wildcards), word))
    const text = ['grep', ...flagsText(flags, quote), ...rest.map((t) => quote(t.text))].join(' ')
    return {
      name: 'grep',
      kind: 'filter',
      text,
      consumes: sourceName ? [sourceName] : [],
      produces: [],
      stateless: true,
      // A plain literal with no flag: the store may skip what lacks it, and a worker may match it (see pipeline).
      workerFilter:
        !invert && !caseless && !word && !strict && !sourceName && rest.length === 1 && !/[*\\]/.test(rest[0]!.text) ? { op: 'grep', text: rest[0]!.text } : undefined,
      stage() {
        return {
          push(e, out) {
            const d = sourceName ? valueBytes(valueOf(e, sourceName)) : asBuffer(e.data)
            if (d === null) return
            const hay = caseless ? lowerAscii(d) : d
            const hit = strict ? tests.every((t) => t(hay)) : tests.some((t) => t(hay))
            if (hit !== invert) out(e)
          },
        }
      },
    }
  },
}
