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
