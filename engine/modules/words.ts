// words (gravwell/wiki search/words/words.md): passes entries that hold whole words.
//   words [-v] [-or] [-e <value>] <word> ...
// The data is cut into words as the platform's fulltext accelerator cuts it (configuration/accelerators.md "Fulltext
// word extraction"): split characters are ASCII controls, blank, ! " # $ % & ' ( ) * + , / ; < = > ? [ \ ] ^ ` { | } ~,
// DEL, NBSP, ×, and the Unicode blanks U+0085 U+1680 U+2000-U+200A U+2028 U+2029 U+202F U+205F U+3000; every other
// character (`.` `:` `-` `_` `@` included) belongs to a word. A word then loses leading `.` `:` `;` U+00AD and trailing
// `.` `:` `;` `-` U+00AD (`done.` is `done`). Matching is exact (case counts).
//
// By default every word must be present (as `grep -s -w`); -or passes an entry that holds any of them. -v inverts:
// an entry passes when it holds none of the words, and with -or when at least one of them is missing (the negation
// of each). A query word that holds a split character can never match and is refused (`words "a/b"`); a word is
// trimmed like the data's (`words done.` looks for `done`). -e reads a value instead of DATA (an entry without it
// holds no word).
import { type ModuleDef, argError, flagsText, readFlags } from '../module'
import { quote } from '../lex'
import { flagValue, inputText } from './extractions'

const SPLIT_ASCII = new Uint8Array(128)
for (let c = 0; c < 0x20; c++) SPLIT_ASCII[c] = 1
for (const ch of ' !"#$%&\'()*+,/;<=>?[\\]^`{|}~\x7f') SPLIT_ASCII[ch.charCodeAt(0)] = 1

export function isSplit(c: number): boolean {
  if (c < 128) return SPLIT_ASCII[c] === 1
  return (
    c === 0xa0 || c === 0xd7 || c === 0x85 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000
  )
}

const trimStart = (c: number) => c === 46 || c === 58 || c === 59 || c === 0xad
const trimEnd = (c: number) => c === 46 || c === 58 || c === 59 || c === 45 || c === 0xad

/** A word with the trim characters removed from its ends. */
export function trimWord(w: string): string {
  let a = 0
  let b = w.length
  while (a < b && trimStart(w.charCodeAt(a))) a++
  while (b > a && trimEnd(w.charCodeAt(b - 1))) b--
  return w.slice(a, b)
}

/** Calls `each` with every word of the text (split and trimmed) until it returns true; true when one did. */
export function someWord(text: string, each: (w: string) => boolean): boolean {
  let start = -1
  for (let i = 0; i <= text.length; i++) {
    const split = i === text.length || isSplit(text.charCodeAt(i))
    if (!split) {
      if (start < 0) start = i
      continue
    }
    if (start >= 0) {
      const w = trimWord(text.slice(start, i))
      start = -1
      if (w !== '' && each(w)) return true
    }
  }
  return false
}

export const words: ModuleDef = {
  name: 'words',
  kind: 'filter',
  info: 'Passes entries that hold every one of the given whole words (words are cut as the fulltext index cuts them: `.` `:` `-` `_` `@` belong to words, other punctuation splits them); -or needs any of them, -v passes entries without them, -e reads a value instead of the entry.',
  examples: ['words Mozilla Firefox', 'words -or Gravwell gravwell', 'words -e Payload -v HTTP 1.1'],
  compile(call) {
    const { flags, rest } = readFlags(call, { bool: ['v', 'or'], withValue: ['e'] })
    if (rest.length === 0) throw argError(call, 'words needs a word to look for', call.end)
    const wanted = rest.map((t) => {
      for (let i = 0; i < t.text.length; i++) {
        if (isSplit(t.text.charCodeAt(i)))
          throw argError(call, `${JSON.stringify(t.text)} holds ${JSON.stringify(t.text[i])}, which splits words: a word cannot hold it (grep finds any text)`, t)
      }
      const w = trimWord(t.text)
      if (w === '') throw argError(call, `${JSON.stringify(t.text)} holds no word`, t)
      return w
    })
    const set = new Set(wanted)
    const invert = flags.has('v')
    const any = flags.has('or')
    const source = flagValue(flags, 'e')
    return {
      name: 'words',
      kind: 'filter',
      text: ['words', ...flagsText(flags, quote), ...wanted.map(quote)].join(' '),
      consumes: source !== undefined ? [source] : [],
      produces: [],
      stateless: true,
      stage() {
        return {
          push(e, out) {
            const text = inputText(e, source) ?? ''
            // Words that do not appear even as text are absent: the scan looks only for the others, and stops once
            // the answer is known (the first word for -or and -v, all of them otherwise).
            const candidates = new Set<string>()
            for (const w of set) if (text.includes(w)) candidates.add(w)
            let present = 0
            if (candidates.size > 0 && (candidates.size === set.size || any !== invert)) {
              const stopAt = any !== invert ? 1 : set.size
              const seen = new Set<string>()
              someWord(text, (w) => candidates.has(w) && seen.add(w).size >= stopAt)
              present = seen.size
            }
            const pass = any ? (invert ? present < set.size : present > 0) : invert ? present === 0 : present === set.size
            if (pass) out(e)
          },
        }
      },
    }
  },
}
