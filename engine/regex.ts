// Regular expressions of queries: RE2 syntax (re2js, a linear-time engine): matching an entry costs time in
// proportion to its size (a backtracking engine such as RegExp takes exponential time on patterns like `(a+)+$`).
// RE2 has no backreferences and no lookaround: such a pattern is refused like any other parse error. The cost per
// byte grows with the compiled program, faster than linearly in the worst case (`(?:a?){1000}a{1000}[^a]`, 3003
// instructions, took 42 µs per byte), so the programs of a query's regular expressions together may hold at most
// MAX_REGEX_PROGRAM instructions (boundRegexes): the worst of those takes about 0.6 µs per byte.
// Compiling some patterns of a few KB takes seconds: the server compiles them on a worker with a budget first
// (server/search/match.ts), and only then does a LazyRegex compile here.
//
// Prefilter (mayMatch): the literals every match must contain, as an and/or tree (requiredLiterals), checked with
// Buffer.indexOf (memmem) before the regex runs: an entry without them cannot match and costs one scan of its bytes.
// The tree is re2js's own (RE2's prefilter, built from the parsed and simplified pattern by re2js itself: a literal
// is kept only when it is matched byte for byte, not under case folding, and not for a repeat that may be empty), so
// it is exactly as sound as re2js's own search, which trusts it to skip inputs. Any shape this module does not know
// (another re2js version) gives no tree: no prefilter, never a wrong answer. Property-tested in regex.test.ts.
import { isAscii } from 'node:buffer'
import type { RE2JS } from 're2js'
import { QueryError } from './errors'

/** re2js, loaded by the first regex compiled rather than at start-up (tens of ms a server without searches need not pay). */
let re2js: typeof RE2JS | undefined
export const re2 = (): typeof RE2JS => (re2js ??= (require('re2js') as typeof import('re2js')).RE2JS)

/** Instructions the compiled programs of a query's regular expressions may hold together (RE2JS programSize). */
export const MAX_REGEX_PROGRAM = 500

/** A regular expression argument of a query, compiled on first use. */
export class LazyRegex {
  private compiled: RE2JS | undefined
  private prefilter: PreparedLiterals | null | undefined
  private extractor: Extractor | null | undefined
  constructor(
    readonly pattern: string,
    /** Offset of the argument in the query. */
    readonly pos: number,
    /** The module's index and name, for errors. */
    readonly moduleIndex = -1,
    readonly module = '',
  ) {}
  get re(): RE2JS {
    return (this.compiled ??= compileRegex(this.pattern, this.pos, this.moduleIndex, this.module))
  }
  /** The literals every match contains (null: none known); compiles the pattern on first use, like `re`. */
  get literals(): Literals | null {
    return requiredLiterals(this.re)
  }
  /**
   * False only when the input cannot match (it lacks a literal every match contains); true otherwise, also for an
   * input that then does not match. Costs a Buffer.indexOf per literal, no regex.
   */
  mayMatch(input: Uint8Array | string): boolean {
    if (this.prefilter === undefined) this.prefilter = prepareLiterals(this.literals)
    return this.prefilter === null || literalsMayMatch(this.prefilter, input)
  }
  /**
   * The leftmost match's captures by group number (0: the whole match; undefined: a group that took no part), or null
   * without a match. Bytes go through fastExtractor when the pattern allows it (the same answer, faster), else RE2.
   */
  exec(input: Uint8Array | string): (string | undefined)[] | null {
    if (this.extractor === undefined) this.extractor = fastExtractor(this.pattern)
    if (this.extractor !== null && typeof input !== 'string') return this.extractor(input)
    const m = this.re.matcher(input)
    if (!m.find()) return null
    const out: (string | undefined)[] = []
    for (let g = 0; g <= m.groupCount(); g++) out.push(m.group(g) ?? undefined)
    return out
  }
  /** The longest single literal every match contains (a store can skip entries without it), or null. */
  get needle(): string | null {
    return longestRequired(this.literals)
  }
}

/** What every match contains: a literal, all of several, or one of several. */
export type Literals = string | { and: Literals[] } | { or: Literals[] }
/** Literals as UTF-8 bytes for matching (prepareLiterals). */
export type PreparedLiterals = { text: string; bytes: Buffer } | { and: PreparedLiterals[] } | { or: PreparedLiterals[] }

/** re2js's prefilter as re2js 2.x builds it (RE2.compileImpl: PrefilterTree.build over the simplified Regexp). */
interface Re2jsPrefilter {
  type: number
  str: string
  subs: Re2jsPrefilter[]
}
const PF_EXACT = 1
const PF_AND = 2
const PF_OR = 3

/** The literal tree every match of a compiled pattern must satisfy, or null when none is known. */
export function requiredLiterals(re: RE2JS): Literals | null {
  const pf = (re as unknown as { re2Input?: { prefilter?: unknown } }).re2Input?.prefilter
  if (pf === null || pf === undefined || typeof pf !== 'object') return null
  const convert = (p: Re2jsPrefilter, depth: number): Literals | null => {
    if (depth > 64 || typeof p !== 'object' || p === null) return null
    if (p.type === PF_EXACT) return typeof p.str === 'string' && p.str !== '' ? p.str : null
    if (!Array.isArray(p.subs)) return null
    const subs = p.subs.map((s) => convert(s, depth + 1))
    // A conjunct dropped still leaves a condition every match meets; a disjunct dropped would not.
    if (p.type === PF_AND) {
      const kept = subs.filter((s): s is Literals => s !== null)
      return kept.length === 0 ? null : kept.length === 1 ? kept[0]! : { and: kept }
    }
    if (p.type === PF_OR) return subs.length === 0 || subs.includes(null) ? null : { or: subs as Literals[] }
    return null
  }
  return convert(pf as Re2jsPrefilter, 0)
}

/** The tree with each literal's UTF-8 bytes, made once per regex. */
export function prepareLiterals(t: Literals | null): PreparedLiterals | null {
  if (t === null) return null
  if (typeof t === 'string') return { text: t, bytes: Buffer.from(t) }
  if ('and' in t) return { and: t.and.map((s) => prepareLiterals(s)!) }
  return { or: t.or.map((s) => prepareLiterals(s)!) }
}

/**
 * Whether `input` holds the literals of the tree. Refers to nothing outside its body: the matching worker runs it from
 * its source text (server/search/match.ts).
 */
export function literalsMayMatch(t: PreparedLiterals, input: Uint8Array | string): boolean {
  if (typeof input === 'string') {
    const has = (n: PreparedLiterals): boolean =>
      'text' in n ? input.includes(n.text) : 'and' in n ? n.and.every(has) : n.or.some(has)
    return has(t)
  }
  const d = Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength)
  const has = (n: PreparedLiterals): boolean => ('bytes' in n ? d.indexOf(n.bytes) !== -1 : 'and' in n ? n.and.every(has) : n.or.some(has))
  return has(t)
}

/** The longest literal that must itself appear (the tree's root, or a conjunct of it), or null. */
export function longestRequired(t: Literals | null): string | null {
  if (t === null) return null
  if (typeof t === 'string') return t
  if ('or' in t) return null
  let best: string | null = null
  for (const s of t.and) {
    const l = longestRequired(s)
    if (l !== null && (best === null || Buffer.byteLength(l) > Buffer.byteLength(best))) best = l
  }
  return best
}

/**
 * The compiled RE2 form of a pattern. A pattern RE2 cannot compile (bad syntax, backreferences, lookaround, a repeat
 * count over 1000) is a QueryError at `pos`.
 */
export function compileRegex(pattern: string, pos = 0, moduleIndex = -1, module = ''): RE2JS {
  try {
    return re2().compile(pattern)
  } catch (e) {
    throw new QueryError(`invalid regular expression, RE2 syntax (${e instanceof Error ? e.message : e})`, pos, moduleIndex, module)
  }
}

/**
 * Refuses regexes whose programs (`size`: RE2JS programSize, or the error compiling one gave) hold more than
 * MAX_REGEX_PROGRAM instructions together, at the position of the one that goes over.
 */
export function boundRegexes(regexes: readonly { regex: LazyRegex; size: number | Error }[]): void {
  let program = 0
  for (const { regex: r, size } of regexes) {
    if (size instanceof Error) throw new QueryError(`invalid regular expression, RE2 syntax (${size.message})`, r.pos, r.moduleIndex, r.module)
    program += size
    if (program > MAX_REGEX_PROGRAM)
      throw new QueryError(
        `the regular expressions of the query compile to ${program} instructions, more than the ${MAX_REGEX_PROGRAM} allowed (a long repeat such as {1000} costs one per repeat): shorten them`,
        r.pos,
        r.moduleIndex,
        r.module,
      )
  }
}

// ---- Fast extraction: an RE2 pattern run by JavaScript's RegExp when that is provably the same and linear ---------
//
// re2js extracts captures at about 15 MB/s; JavaScriptCore's RegExp at 100-400 MB/s, but it backtracks, and a
// backtracking engine takes exponential time on patterns like `(a+)+$`. fastExtractor accepts only patterns where
// backtracking cannot cost more than linear time and where the two engines find the same match with the same
// captures, and refuses (null: re2js runs) everything else:
// - anchored at the start (`^` first), so one start position is tried, not every one;
// - a flat sequence of single-character items (literals, `.`, classes, \d \s \w and their negations), groups
//   (capturing, named or not) holding such sequences, `$` only at the very end; no alternation, no quantified
//   group, no lazy quantifier, no flags, no \b, no Unicode class, no non-ASCII literal;
// - every item that may repeat a varying number of times (`*`, `+`, `?`, `{n,m}`) is followed by a mandatory item
//   whose characters are disjoint from its own (or by nothing but `$` and closing groups). Then a repeat can only
//   end where the next byte is not one of its own, any shorter choice fails at its first byte, and backtracking
//   costs O(1) per byte consumed: the match is the unique one RE2 finds, in time linear in the entry.
// Bytes are matched as latin1 text (one character per byte). An item that can match a non-ASCII character (`.`, a
// negated class, \S \D \W) matches a run of whole UTF-8 sequences in RE2 and the same run of bytes here only when it
// repeats without bound (`*` or `+`) and is followed by an ASCII-only item or the end, which the rule above ensures
// (its follower is disjoint from it, hence ASCII-only); such an item is refused anywhere else. Captures are cut from
// the entry's bytes by the match's byte offsets and decoded as UTF-8, as re2js does. Property-tested against re2js
// (regex.test.ts).

/** A pattern's captures by group number (0: the whole match), or null when it does not match. */
export type Extractor = (input: Uint8Array) => (string | undefined)[] | null

interface CharItem {
  k: 'chars'
  set: Uint8Array
  /** Matches characters beyond ASCII (a negated set): bytes 0x80-0xff here, whole UTF-8 sequences in RE2. */
  wide: boolean
  min: number
  max: number
}
type Item = CharItem | { k: 'open'; capture: boolean } | { k: 'close' } | { k: 'end' }

const setOf = (test: (b: number) => boolean) => {
  const s = new Uint8Array(256)
  for (let b = 0; b < 256; b++) s[b] = test(b) ? 1 : 0
  return s
}
const isDigit = (b: number) => b >= 48 && b <= 57
const isSpace = (b: number) => b === 9 || b === 10 || b === 12 || b === 13 || b === 32
const isWord = (b: number) => isDigit(b) || (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || b === 95
/** RE2's Perl classes: ASCII only (the negations match every non-ASCII character). */
const PERL: Record<string, [(b: number) => boolean, boolean]> = {
  d: [isDigit, false],
  s: [isSpace, false],
  w: [isWord, false],
  D: [(b) => !isDigit(b), true],
  S: [(b) => !isSpace(b), true],
  W: [(b) => !isWord(b), true],
}
const ESCAPED_CHARS: Record<string, number> = { t: 9, n: 10, r: 13, f: 12 }
const isQuantifier = (c: string | undefined) => c !== undefined && '*+?{'.includes(c)
const isPunct = (c: string) => /^[!-/:-@[-`{-~]$/.test(c)

/** The items of a pattern in the accepted subset, or null. */
function parseFlat(p: string): Item[] | null {
  if (p[0] !== '^') return null
  const items: Item[] = []
  let depth = 0
  let i = 1
  /** One character or escape as a set; null when outside the subset. */
  const atom = (inClass: boolean): { set: Uint8Array; wide: boolean } | null => {
    const c = p[i]!
    if (c.charCodeAt(0) > 0x7f) return null
    if (c !== '\\') {
      i++
      const b = c.charCodeAt(0)
      return { set: setOf((x) => x === b), wide: false }
    }
    const e = p[i + 1]
    if (e === undefined) return null
    i += 2
    if (PERL[e]) return { set: setOf(PERL[e][0]), wide: PERL[e][1] }
    if (ESCAPED_CHARS[e] !== undefined) return { set: setOf((x) => x === ESCAPED_CHARS[e]), wide: false }
    if (isPunct(e)) return { set: setOf((x) => x === e.charCodeAt(0)), wide: false }
    void inClass
    return null
  }
  while (i < p.length) {
    const c = p[i]!
    if (c === '(') {
      if (p[i + 1] !== '?') {
        items.push({ k: 'open', capture: true })
        i++
      } else if (p[i + 2] === ':') {
        items.push({ k: 'open', capture: false })
        i += 3
      } else {
        const named = /^\(\?P?<[A-Za-z_][A-Za-z0-9_]*>/.exec(p.slice(i))
        if (!named) return null
        items.push({ k: 'open', capture: true })
        i += named[0].length
      }
      depth++
      continue
    }
    if (c === ')') {
      if (--depth < 0) return null
      items.push({ k: 'close' })
      i++
      if (isQuantifier(p[i])) return null
      continue
    }
    if (c === '$') {
      if (i !== p.length - 1 || depth !== 0) return null
      items.push({ k: 'end' })
      i++
      continue
    }
    if ('|^*+?{}'.includes(c)) return null
    let set: Uint8Array
    let wide: boolean
    if (c === '.') {
      set = setOf((b) => b !== 10)
      wide = true
      i++
    } else if (c === '[') {
      i++
      const negated = p[i] === '^'
      if (negated) i++
      if (p[i] === ']') return null
      const members = new Uint8Array(256)
      let anyWide = false
      while (i < p.length && p[i] !== ']') {
        if (p[i] === '[') return null
        const lo = atom(true)
        if (!lo) return null
        if (p[i] === '-' && p[i + 1] !== ']' && p[i + 1] !== undefined) {
          i++
          const hi = atom(true)
          if (!hi) return null
          const a = lo.set.indexOf(1)
          const z = hi.set.indexOf(1)
          if (lo.wide || hi.wide || lo.set.reduce((n, x) => n + x, 0) !== 1 || hi.set.reduce((n, x) => n + x, 0) !== 1 || a > z) return null
          for (let b = a; b <= z; b++) members[b] = 1
          continue
        }
        for (let b = 0; b < 256; b++) if (lo.set[b]) members[b] = 1
        anyWide ||= lo.wide
      }
      if (p[i] !== ']') return null
      i++
      set = negated ? setOf((b) => members[b] === 0) : members
      wide = negated || anyWide
      if (negated && anyWide) return null // a negated class of a negated Perl class: left to RE2
    } else {
      const a = atom(false)
      if (!a) return null
      set = a.set
      wide = a.wide
    }
    let min = 1
    let max = 1
    const q = p[i]
    if (q === '*' || q === '+' || q === '?') {
      min = q === '+' ? 1 : 0
      max = q === '?' ? 1 : Number.POSITIVE_INFINITY
      i++
    } else if (q === '{') {
      const m = /^\{(\d{1,4})(,(\d{0,4}))?\}/.exec(p.slice(i))
      if (!m) return null
      min = Number(m[1])
      max = m[2] === undefined ? min : m[3] === '' ? Number.POSITIVE_INFINITY : Number(m[3])
      if (max < min || min > 1000 || max > 1000) return null
      i += m[0].length
    }
    if (isQuantifier(p[i])) return null
    if (wide && !(max === Number.POSITIVE_INFINITY && min <= 1)) return null
    items.push({ k: 'chars', set, wide, min, max })
  }
  if (depth !== 0) return null
  // The linear-time rule: a repeat of varying count is followed by a mandatory, disjoint item (or by the end).
  for (let a = 0; a < items.length; a++) {
    const it = items[a]!
    if (it.k !== 'chars' || it.min === it.max) continue
    const next = items.slice(a + 1).find((x): x is CharItem => x.k === 'chars')
    if (!next) continue
    if (next.min < 1) return null
    for (let b = 0; b < 256; b++) if (it.set[b] && next.set[b]) return null
  }
  return items
}

const hex = (b: number) => `\\x${b.toString(16).padStart(2, '0')}`

/** The JavaScript RegExp source of parsed items (latin1: one character per byte). */
function jsSource(items: Item[]): string {
  let src = '^'
  for (const it of items) {
    if (it.k === 'open') src += it.capture ? '(' : '(?:'
    else if (it.k === 'close') src += ')'
    else if (it.k === 'end') src += '$'
    else {
      let cls = ''
      for (let b = 0; b < 256; b++) {
        if (!it.set[b]) continue
        let e = b
        while (e + 1 < 256 && it.set[e + 1]) e++
        cls += e === b ? hex(b) : `${hex(b)}-${hex(e)}`
        b = e
      }
      src += cls === '' ? '[^\\x00-\\xff]' : `[${cls}]`
      src += it.min === 1 && it.max === 1 ? '' : it.max === Number.POSITIVE_INFINITY ? (it.min === 0 ? '*' : it.min === 1 ? '+' : `{${it.min},}`) : `{${it.min},${it.max}}`
    }
  }
  return src
}

/** The fast extractor of a pattern, or null when the pattern is outside what it can run exactly (see above). */
export function fastExtractor(pattern: string): Extractor | null {
  const items = parseFlat(pattern)
  if (items === null) return null
  let js: RegExp
  let withIndices: RegExp
  try {
    js = new RegExp(jsSource(items))
    withIndices = new RegExp(jsSource(items), 'd')
  } catch {
    return null
  }
  return (input) => {
    const d = Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength)
    const text = d.toString('latin1')
    // ASCII bytes are their own UTF-8 text: the captures are the match's strings. Otherwise they are decoded from
    // the bytes at the match's offsets (the 'd' flag's indices, which cost more).
    if (isAscii(d)) return js.exec(text)
    const m = withIndices.exec(text)
    if (m === null) return null
    const out: (string | undefined)[] = new Array(m.length)
    for (let g = 0; g < m.length; g++) {
      const at = m.indices![g]
      out[g] = at === undefined ? undefined : d.toString('utf8', at[0], at[1])
    }
    return out
  }
}
