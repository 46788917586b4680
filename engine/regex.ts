// Regular expressions of queries: RE2 syntax (re2js, a linear-time engine): matching an entry costs time in
// proportion to its size (a backtracking engine such as RegExp takes exponential time on patterns like `(a+)+$`).
// RE2 has no backreferences and no lookaround: such a pattern is refused like any other parse error. The cost per
// byte grows with the compiled program, faster than linearly in the worst case (`(?:a?){1000}a{1000}[^a]`, 3003
// instructions, took 42 µs per byte), so the programs of a query's regular expressions together may hold at most
// MAX_REGEX_PROGRAM instructions (boundRegexes): the worst of those takes about 0.6 µs per byte.
// Compiling some patterns of a few KB takes seconds: the server compiles them on a worker with a budget first
// (server/search/match.ts), and only then does a LazyRegex compile here.
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
