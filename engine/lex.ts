// The query's tokens, with the platform's quoting (gravwell/wiki search/search.md "Quoting and tokenizing", and
// search/regex/regex.md "Raw strings"): blanks and `|` separate (`||` does not: it is eval's logical or); a double-quoted string is one token in which `\"`
// stands for `"` and `\\` for one backslash, and every other backslash is kept as written (so `regex "\d+ ms"` is
// the regular expression \d+ ms, as people type it, and `"\\d"` is the same); a string in backticks is taken as
// written, without escapes. Modules split their own arguments further (stats's `count(x)`, eval's expressions): they
// get the tokens and the raw text of their arguments.
import { QueryError } from './errors'

export interface Token {
  kind: 'word' | 'string' | 'pipe'
  /** The word, or the string without its quotes and with `\"` resolved. */
  text: string
  /** Offset of the token's first character in the query. */
  pos: number
  /** Offset just past its last character. */
  end: number
}

export function tokenize(src: string): Token[] {
  const tokens: Token[] = []
  let i = 0
  while (i < src.length) {
    const c = src.charCodeAt(i)
    if (c === 32 || c === 9 || c === 10 || c === 13) {
      i++
    } else if (c === 124 /* | */ && src.charCodeAt(i + 1) !== 124) {
      tokens.push({ kind: 'pipe', text: '|', pos: i, end: i + 1 })
      i++
    } else if (c === 34 /* " */) {
      const start = i++
      let text = ''
      for (;;) {
        if (i >= src.length) throw new QueryError('unterminated quoted string', start)
        const d = src[i]!
        if (d === '"') break
        if (d === '\\' && (src[i + 1] === '"' || src[i + 1] === '\\')) {
          text += src[i + 1]
          i += 2
        } else {
          text += d
          i++
        }
      }
      i++
      tokens.push({ kind: 'string', text, pos: start, end: i })
    } else if (c === 96 /* ` */) {
      const close = src.indexOf('`', i + 1)
      if (close < 0) throw new QueryError('unterminated `raw string`', i)
      tokens.push({ kind: 'string', text: src.slice(i + 1, close), pos: i, end: close + 1 })
      i = close + 1
    } else {
      const start = i
      // A word ends at a blank, a pipe or the start of a quoted string; `a"b c"` is a word and a string. `||` is
      // no pipe but part of a word (eval's logical or: `eval a == 1 || b == 2`).
      while (i < src.length) {
        if (src[i] === '|' && src[i + 1] === '|') i += 2
        else if (/[\s|"`]/.test(src[i]!)) break
        else i++
      }
      tokens.push({ kind: 'word', text: src.slice(start, i), pos: start, end: i })
    }
  }
  return tokens
}

/** A token's text written back so that tokenize reads it again as the same text (the normal form's arguments). */
export function quote(text: string): string {
  if (text !== '' && /^[^\s|"`]+$/.test(text)) return text
  // Backticks keep a regular expression as it was typed; double quotes where the text holds a backtick.
  if (text.includes('\\') && !text.includes('`')) return `\`${text}\``
  return `"${text.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`
}
