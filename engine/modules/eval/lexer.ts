// The tokens of an eval program (gravwell/wiki search/eval/eval.md "Lexical elements"): identifiers, `$(any name)`
// for values whose names are no identifiers, numbers (decimal, 0x hexadecimal, floats), double-quoted strings
// (`\"`, `\\`, `\n`, `\t`, `\r` are escapes; every other backslash stays, as in the query's own quoting, so
// `match(x, "\d+")` is the regular expression \d+), backtick strings taken as written, operators, punctuation, and
// `//` and `/* */` comments. Positions are offsets in the query (the program's offset added), for errors.
import { QueryError } from '../../errors'

export type TokenKind = 'ident' | 'number' | 'string' | 'op' | 'eof'

export interface EvalToken {
  kind: TokenKind
  /** The identifier, the operator, the number as written, or the string with its escapes resolved. */
  text: string
  /** Offsets in the query. */
  pos: number
  end: number
  /** A number written with a fraction or an exponent (a float, not an integer). */
  float?: boolean
}

/** Operators and punctuation, longest first (the lexer takes the longest that matches). */
const OPERATORS = ['<<', '>>', '<=', '>=', '==', '!=', '!~', '&&', '||', '++', '--', '+', '-', '*', '/', '%', '&', '|', '^', '<', '>', '~', '!', '=', '(', ')', '{', '}', '[', ']', ',', ';', ':', '?']

const IDENT_START = /[A-Za-z_\p{L}]/u
const IDENT_PART = /[A-Za-z0-9_\p{L}\p{N}]/u

export function lexProgram(src: string, offset: number, fail: (reason: string, pos: number) => QueryError): EvalToken[] {
  const tokens: EvalToken[] = []
  let i = 0
  while (i < src.length) {
    const c = src[i]!
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++
      continue
    }
    if (src.startsWith('//', i)) {
      const nl = src.indexOf('\n', i)
      i = nl < 0 ? src.length : nl + 1
      continue
    }
    if (src.startsWith('/*', i)) {
      const close = src.indexOf('*/', i + 2)
      if (close < 0) throw fail('unterminated /* comment', offset + i)
      i = close + 2
      continue
    }
    const start = i
    if (c === '"') {
      let text = ''
      i++
      for (;;) {
        if (i >= src.length) throw fail('unterminated string', offset + start)
        const d = src[i]!
        if (d === '"') break
        if (d === '\\' && i + 1 < src.length) {
          const n = src[i + 1]!
          const esc: Record<string, string> = { '"': '"', '\\': '\\', n: '\n', t: '\t', r: '\r' }
          if (esc[n] !== undefined) {
            text += esc[n]
            i += 2
            continue
          }
        }
        text += d
        i++
      }
      i++
      tokens.push({ kind: 'string', text, pos: offset + start, end: offset + i })
      continue
    }
    if (c === '`') {
      const close = src.indexOf('`', i + 1)
      if (close < 0) throw fail('unterminated `raw string`', offset + start)
      tokens.push({ kind: 'string', text: src.slice(i + 1, close), pos: offset + start, end: offset + close + 1 })
      i = close + 1
      continue
    }
    if (c === '$' && src[i + 1] === '(') {
      const close = src.indexOf(')', i + 2)
      if (close < 0) throw fail('unterminated $( value name )', offset + start)
      const name = src.slice(i + 2, close)
      if (name === '') throw fail('$( ) needs a value name', offset + start)
      tokens.push({ kind: 'ident', text: name, pos: offset + start, end: offset + close + 1 })
      i = close + 1
      continue
    }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(src[i + 1] ?? ''))) {
      const m = /^(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)/.exec(src.slice(i, i + 400))!
      const text = m[0]
      i += text.length
      if (i < src.length && IDENT_PART.test(src[i]!)) throw fail(`invalid number ${JSON.stringify(src.slice(start, i + 1))}`, offset + start)
      tokens.push({ kind: 'number', text, pos: offset + start, end: offset + i, float: !/^0[xX]/.test(text) && /[.eE]/.test(text) })
      continue
    }
    if (IDENT_START.test(c)) {
      while (i < src.length && IDENT_PART.test(src[i]!)) i++
      tokens.push({ kind: 'ident', text: src.slice(start, i), pos: offset + start, end: offset + i })
      continue
    }
    const op = OPERATORS.find((o) => src.startsWith(o, i))
    if (!op) throw fail(`unexpected character ${JSON.stringify(c)}`, offset + start)
    i += op.length
    tokens.push({ kind: 'op', text: op, pos: offset + start, end: offset + i })
  }
  tokens.push({ kind: 'eof', text: '', pos: offset + src.length, end: offset + src.length })
  return tokens
}
