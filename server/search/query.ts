// The query language of the embedded engine (README "Query language"):
//
//   tag=<name>[,<name>...] [ <stage> ( | <stage> )* ]
//   stage := grep <text> | regex <pattern> | limit <n> | count
//
// A regex pattern is RE2 syntax (re2js, a linear-time engine): matching an entry costs time in proportion to its
// size (a backtracking engine such as RegExp takes exponential time on patterns like `(a+)+$`). RE2 has no
// backreferences and no lookaround: such a pattern is refused like any other parse error. The cost per byte grows
// with the compiled program, faster than linearly in the worst case (`(?:a?){1000}a{1000}[^a]`, 3003 instructions,
// took 42 µs per byte: minutes over an entry of a few MB), so the programs of a query's regex stages together may
// hold at most MAX_REGEX_PROGRAM instructions; the worst of those takes about 0.6 µs per byte, about 2 s over the
// largest entry of the default body limit, and runs on a worker thread (match.ts), never on the event loop.
// `tag=*` selects every tag. An argument is a bare word (no blank, `|` or `"`) or a double-quoted string with
// `\"` and `\\` escapes. `count` may only be the last stage. A `|` right after the tag list is allowed. The
// normalised form (the EffectiveQuery) has single blanks, tags without repeats, and arguments quoted only
// where they must be.

import type { RE2JS } from 're2js'

/** re2js, loaded by the first regex compiled rather than at start-up (tens of ms a server without searches need not pay). */
let re2js: typeof RE2JS | undefined
const re2 = (): typeof RE2JS => (re2js ??= (require('re2js') as typeof import('re2js')).RE2JS)

export const TAG_NAME = /^[A-Za-z0-9._-]{1,128}$/
export const ALL_TAGS = '*'
const MAX_QUERY_LENGTH = 4096
const MAX_LIMIT = 1_000_000_000
/** Instructions the compiled programs of a query's regex stages may hold together (RE2JS programSize). */
export const MAX_REGEX_PROGRAM = 500

export type Stage =
  | { op: 'grep'; text: string }
  | { op: 'regex'; pattern: string }
  | { op: 'limit'; n: number }
  | { op: 'count' }

export interface Query {
  /** Tag names, without repeats, or ['*'] for every tag. */
  tags: string[]
  stages: Stage[]
}

/** A query that does not parse; `position` is the 0-based character offset of the problem in the query text. */
export class QueryError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(`${message} at position ${position}`)
  }
}

interface Token {
  kind: 'word' | 'string' | 'pipe'
  text: string
  pos: number
}

function tokenize(src: string): Token[] {
  const tokens: Token[] = []
  let i = 0
  while (i < src.length) {
    const c = src[i]!
    if (/\s/.test(c)) {
      i++
    } else if (c === '|') {
      tokens.push({ kind: 'pipe', text: '|', pos: i++ })
    } else if (c === '"') {
      const start = i++
      let text = ''
      for (;;) {
        if (i >= src.length) throw new QueryError('unterminated quoted string', start)
        const d = src[i]!
        if (d === '"') break
        if (d === '\\') {
          const e = src[i + 1]
          if (e !== '"' && e !== '\\') throw new QueryError('unknown escape (only \\" and \\\\)', i)
          text += e
          i += 2
        } else {
          text += d
          i++
        }
      }
      i++
      tokens.push({ kind: 'string', text, pos: start })
    } else {
      const start = i
      while (i < src.length && !/[\s|"]/.test(src[i]!)) i++
      tokens.push({ kind: 'word', text: src.slice(start, i), pos: start })
    }
  }
  return tokens
}

/** A regex stage's pattern and the position of its argument in the query text. */
export interface RegexArg {
  pattern: string
  pos: number
}

/**
 * A parsed query, its regexes compiled and bounded here, on the calling thread (tests, benches). The server compiles
 * them on a worker instead (parseQueryText, then boundRegexes): some patterns of a few KB take seconds to compile.
 */
export function parseQuery(src: string): Query {
  const { query, regexes } = parseQueryText(src)
  boundRegexes(regexes.map((r) => ({ ...r, size: compileRegex(r.pattern, r.pos).programSize() })))
  return query
}

/**
 * Refuses regexes whose programs (`size`: RE2JS programSize, or the error that compiling one gave) are more than
 * MAX_REGEX_PROGRAM instructions together, at the position of the one that goes over.
 */
export function boundRegexes(regexes: readonly (RegexArg & { size: number | Error })[]): void {
  let program = 0
  for (const r of regexes) {
    if (r.size instanceof Error) throw new QueryError(`invalid regular expression, RE2 syntax (${r.size.message})`, r.pos)
    program += r.size
    if (program > MAX_REGEX_PROGRAM)
      throw new QueryError(
        `the regular expressions of the query compile to ${program} instructions, more than the ${MAX_REGEX_PROGRAM} allowed (a long repeat such as {1000} costs one per repeat): shorten them`,
        r.pos,
      )
  }
}

/** A query parsed for its syntax; its regexes are not compiled yet (see parseQuery). */
export function parseQueryText(src: string): { query: Query; regexes: RegexArg[] } {
  if (src.length > MAX_QUERY_LENGTH) throw new QueryError(`the query is longer than ${MAX_QUERY_LENGTH} characters`, MAX_QUERY_LENGTH)
  const tokens = tokenize(src)
  const first = tokens[0]
  if (!first) throw new QueryError('empty query: expected tag=<name>', 0)
  if (first.kind !== 'word' || !first.text.startsWith('tag=')) throw new QueryError('a query starts with tag=<name>', first.pos)
  const tags: string[] = []
  let offset = first.pos + 4
  for (const name of first.text.slice(4).split(',')) {
    if (name === ALL_TAGS) tags.push(name)
    else if (!TAG_NAME.test(name)) throw new QueryError(`invalid tag name ${JSON.stringify(name)}`, offset)
    else if (!tags.includes(name)) tags.push(name)
    offset += name.length + 1
  }
  if (tags.includes(ALL_TAGS) && tags.length > 1) throw new QueryError('tag=* cannot be combined with other tags', first.pos + 4)

  const stages: Stage[] = []
  const regexes: RegexArg[] = []
  let i = 1
  if (tokens[i]?.kind === 'pipe' && tokens[i + 1]) i++
  while (i < tokens.length) {
    const t = tokens[i]!
    if (t.kind !== 'word') throw new QueryError('expected a stage (grep, regex, limit, count)', t.pos)
    const args: Token[] = []
    i++
    while (i < tokens.length && tokens[i]!.kind !== 'pipe') args.push(tokens[i++]!)
    const end = i < tokens.length ? tokens[i]!.pos : src.length
    const one = (): Token => {
      if (args.length === 0) throw new QueryError(`${t.text} needs an argument`, end)
      if (args.length > 1) throw new QueryError(`${t.text} takes one argument (quote text with blanks)`, args[1]!.pos)
      return args[0]!
    }
    if (stages.at(-1)?.op === 'count') throw new QueryError('count must be the last stage', t.pos)
    switch (t.text) {
      case 'grep': {
        const a = one()
        if (a.text === '') throw new QueryError('grep needs a non-empty text', a.pos)
        stages.push({ op: 'grep', text: a.text })
        break
      }
      case 'regex': {
        const a = one()
        regexes.push({ pattern: a.text, pos: a.pos })
        stages.push({ op: 'regex', pattern: a.text })
        break
      }
      case 'limit': {
        const a = one()
        if (a.kind !== 'word' || !/^\d+$/.test(a.text) || Number(a.text) < 1 || Number(a.text) > MAX_LIMIT)
          throw new QueryError(`limit needs a whole number from 1 to ${MAX_LIMIT}`, a.pos)
        stages.push({ op: 'limit', n: Number(a.text) })
        break
      }
      case 'count':
        if (args.length > 0) throw new QueryError('count takes no argument', args[0]!.pos)
        stages.push({ op: 'count' })
        break
      default:
        throw new QueryError(`unknown stage ${JSON.stringify(t.text)} (grep, regex, limit, count)`, t.pos)
    }
    if (i < tokens.length) {
      // tokens[i] is a pipe: a stage must follow it
      if (i + 1 >= tokens.length) throw new QueryError('expected a stage after |', tokens[i]!.pos + 1)
      i++
    }
  }
  return { query: { tags, stages }, regexes }
}

/**
 * The compiled RE2 form of a regex stage's pattern. A pattern RE2 cannot compile (bad syntax, backreferences,
 * lookaround, a repeat count over 1000) is a QueryError at `pos`, the position of the argument in the query.
 */
export function compileRegex(pattern: string, pos = 0): RE2JS {
  try {
    return re2().compile(pattern)
  } catch (e) {
    throw new QueryError(`invalid regular expression, RE2 syntax (${e instanceof Error ? e.message : e})`, pos)
  }
}

function quote(text: string): string {
  return /^[^\s|"\\]+$/.test(text) ? text : `"${text.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`
}

/** The normalised text of a parsed query; parsing it again gives the same query. */
export function formatQuery(q: Query): string {
  const stages = q.stages.map((s) => {
    switch (s.op) {
      case 'grep':
        return `grep ${quote(s.text)}`
      case 'regex':
        return `regex ${quote(s.pattern)}`
      case 'limit':
        return `limit ${s.n}`
      case 'count':
        return 'count'
    }
  })
  const head = `tag=${q.tags.join(',')}`
  return stages.length ? `${head} ${stages.join(' | ')}` : head
}
