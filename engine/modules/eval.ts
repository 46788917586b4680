// eval (gravwell/wiki search/eval/eval.md): a small C-style program run on each entry.
//   eval <expression>                 a filter: entries for which it is false (or zero, empty, missing) are dropped
//   eval <statements>                 assignments make values (`x = a + b;`), `if (c) {...} else {...}`, blocks,
//                                     `switch (v) { case 1: ...; break; default: ... }`, `return <expr>;` (true
//                                     passes the entry, false drops it), `x++;`, `x--;`
// Values are the entry's enumerated values by name (and TAG, SRC, TIMESTAMP, DATA; `$(any name)` for names that are
// no identifiers); an assignment sets a value on the entry, and later statements and modules read it. The operators,
// the promotions between types and what a missing value does are written down in eval/values.ts; the functions in
// eval/functions.ts (the wiki's built-ins: strings_*, math_*, json_*, path_*, hash_*, printf, in, len, casts...).
// Choices where the platform differs or is silent:
// - A lone expression filters even with a trailing `;`, unless it is a call made for its effect (delete, set_data,
//   setEnum); a program of statements passes every entry unless it returns false.
// - Loops (`for`), persistent `var` and `map`, arrays, and `x++` inside an expression are refused with
//   their position: an entry costs one pass over the program, and eval keeps no state from one entry to the next.
// - An assignment of a missing value (an operation that failed, a value the entry lacks) sets nothing.
// - `match(input, "pattern")` takes its regular expression (RE2) as a literal, compiled once with the query.
// - A `|` outside a string ends the module, as everywhere in a query (also in a comment): the bitwise or cannot be
//   written; `||` is the logical or.
// Safety: no program runs code (this is an interpreter of its own tree; nothing reaches JavaScript's eval); its size
// and nesting are bounded (parser.ts); strings it makes are bounded and the string work of one entry is budgeted
// (values.ts: past either, the search ends with a SearchLimitError naming the bound).
import { type Entry, valueOf } from '../entry'
import { QueryError, SearchLimitError } from '../errors'
import { type ModuleDef, argError } from '../module'
import type { LazyRegex } from '../regex'
import { FUNCTIONS, jsonOf } from './eval/functions'
import { lexProgram } from './eval/lexer'
import { type Expr, type Program, type Stmt, parseProgram } from './eval/parser'
import { type EV, type Work, arithmetic, bitwise, charge, compare, made, numeric, num, text, toValue, truthy } from './eval/values'

/** What an evaluation of one entry carries. */
interface Run extends Work {
  e: Entry
}

type Compiled = (r: Run) => EV
/** A statement's outcome: undefined to go on, a value when it returned, `broke` at a break (ends its switch). */
type Outcome = { returned: EV } | { broke: true } | undefined
type CompiledStmt = (r: Run) => Outcome

/**
 * Every operation is charged the length of its text (and bytes) inputs against the entry's work budget: whatever it
 * does with them (read them as a number, an IP, a duration; search, compare, copy them) is linear in them at worst,
 * and the count of operations is bounded by the program's size, so an entry costs at most WORK_BUDGET of such work.
 */
function cost(r: Run, v: EV): EV {
  if (typeof v === 'string') charge(r, v.length)
  else if (v instanceof Uint8Array) charge(r, v.byteLength)
  return v
}

/** Calls made for their effect: a lone one is a statement, not a filter. */
const EFFECTS = new Set(['delete', 'delEnum', 'set_data', 'setEnum'])

const encoder = new TextEncoder()

export interface CompiledProgram {
  filter: boolean
  run(e: Entry): boolean
  consumes: string[]
  produces: string[]
}

/**
 * Compiles an eval program: `src` is the program's text and `offset` its place in the query; `regex` compiles the
 * literal patterns of match(). Errors are QueryErrors made by `fail`.
 */
export function compileProgram(
  src: string,
  offset: number,
  fail: (reason: string, pos: number) => QueryError,
  regex: (pattern: string, pos: number) => LazyRegex,
): CompiledProgram & { program: Program } {
  const program = parseProgram(lexProgram(src, offset, fail), fail)
  const consumes = new Set<string>()
  const produces = new Set<string>()

  /** A name given as the argument of has/delete: the bare name, a string literal, or any expression's text. */
  const nameArg = (a: Expr): Compiled => {
    if (a.k === 'var' || a.k === 'str') {
      const name = a.k === 'var' ? a.name : a.v
      return () => name
    }
    const f = expr(a)
    return (r) => text(cost(r, f(r)))
  }

  function call(x: Extract<Expr, { k: 'call' }>): Compiled {
    const args = x.args
    const arity = (min: number, max: number) => {
      if (args.length < min || args.length > max)
        throw fail(`${x.name} takes ${min === max ? min : max === Number.POSITIVE_INFINITY ? `at least ${min}` : `${min} to ${max}`} argument${max === 1 ? '' : 's'}, not ${args.length}`, x.pos)
    }
    switch (x.name) {
      case 'has':
      case 'hasEnum': {
        arity(1, 1)
        const name = nameArg(args[0]!)
        return (r) => valueOf(r.e, text(name(r))) !== undefined
      }
      case 'delete':
      case 'delEnum': {
        arity(1, 1)
        const name = nameArg(args[0]!)
        return (r) => {
          r.e.values.delete(text(name(r)))
          return undefined
        }
      }
      case 'setEnum': {
        arity(2, 2)
        const name = nameArg(args[0]!)
        const value = expr(args[1]!)
        if (args[0]!.k === 'str') produces.add(args[0]!.v)
        return (r) => {
          const v = toValue(value(r))
          if (v !== undefined) r.e.values.set(text(name(r)), v)
          return undefined
        }
      }
      case 'indirect': {
        arity(1, 1)
        const name = expr(args[0]!)
        return (r) => {
          const n = text(cost(r, name(r)))
          return valueOf(r.e, n) ?? n
        }
      }
      case 'set_data': {
        arity(1, 1)
        const value = expr(args[0]!)
        return (r) => {
          const v = cost(r, value(r))
          if (v === undefined) return undefined
          r.e.data = v instanceof Uint8Array ? v : encoder.encode(made(r, text(v)))
          return undefined
        }
      }
      case 'evs_to_json': {
        arity(0, 0)
        return (r) => {
          const obj: Record<string, unknown> = Object.create(null)
          for (const [k, v] of r.e.values) obj[k] = jsonOf(v)
          return made(r, JSON.stringify(obj))
        }
      }
      case 'match': {
        arity(2, 2)
        const pattern = args[1]!
        if (pattern.k !== 'str') throw fail('match needs its regular expression as a literal "string"', pattern.pos)
        const re = regex(pattern.v, pattern.pos)
        const input = expr(args[0]!)
        return (r) => {
          const v = input(r)
          if (v === undefined) return false
          const s = v instanceof Uint8Array ? v : text(v)
          charge(r, s.length)
          return re.re.test(s)
        }
      }
    }
    if (!Object.hasOwn(FUNCTIONS, x.name)) throw fail(`unknown function ${JSON.stringify(x.name)}`, x.pos)
    const def = FUNCTIONS[x.name]!
    arity(def.min, def.max)
    const fs = args.map(expr)
    // A function that fails on its input (a malformed encoding, a number out of range) gives a missing value; only
    // the bounds end the search.
    return (r) => {
      const values = fs.map((f) => cost(r, f(r)))
      try {
        return def.fn(values, r)
      } catch (e) {
        if (e instanceof SearchLimitError) throw e
        return undefined
      }
    }
  }

  function expr(x: Expr): Compiled {
    switch (x.k) {
      case 'num': {
        const v = num(x.v, x.float)
        return () => v
      }
      case 'str': {
        const v = x.v
        return () => v
      }
      case 'bool': {
        const v = x.v
        return () => v
      }
      case 'var': {
        const name = x.name
        consumes.add(name)
        return (r) => valueOf(r.e, name)
      }
      case 'unary': {
        const f = expr(x.e)
        if (x.op === '!') return (r) => !truthy(f(r))
        return (r) => {
          const n = numeric(cost(r, f(r)))
          return n === null ? undefined : n.float ? num(-n.n, true) : 0 - n.n
        }
      }
      case 'cond': {
        const c = expr(x.c)
        const a = expr(x.a)
        const b = expr(x.b)
        return (r) => (truthy(c(r)) ? a(r) : b(r))
      }
      case 'call':
        return call(x)
      case 'index': {
        const f = expr(x.e)
        const i = expr(x.i)
        return (r) => {
          const s = text(cost(r, f(r)))
          const n = numeric(cost(r, i(r)))
          if (n === null || n.float || n.n < 0 || n.n >= s.length) return undefined
          return s[n.n]
        }
      }
      case 'slice': {
        const f = expr(x.e)
        const a = expr(x.a)
        const b = expr(x.b)
        return (r) => {
          const s = text(cost(r, f(r)))
          const from = numeric(cost(r, a(r)))
          const to = numeric(cost(r, b(r)))
          if (from === null || to === null) return undefined
          const start = Math.max(0, Math.trunc(from.n))
          const end = Math.min(s.length, Math.trunc(to.n))
          return start >= end ? '' : made(r, s.slice(start, end))
        }
      }
      case 'binary': {
        const l = expr(x.l)
        const rhs = expr(x.r)
        const op = x.op
        switch (op) {
          case '&&':
            return (r) => truthy(l(r)) && truthy(rhs(r))
          case '||':
            return (r) => truthy(l(r)) || truthy(rhs(r))
          case '+':
          case '-':
          case '*':
          case '/':
          case '%':
            return (r) => arithmetic(op, cost(r, l(r)), cost(r, rhs(r)), r)
          case '&':
          case '|':
          case '^':
          case '<<':
          case '>>':
            return (r) => bitwise(op, cost(r, l(r)), cost(r, rhs(r)))
          default:
            return (r) => compare(op, cost(r, l(r)), cost(r, rhs(r)), r)
        }
      }
    }
  }

  function stmt(s: Stmt): CompiledStmt {
    switch (s.k) {
      case 'assign': {
        const f = expr(s.e)
        const name = s.name
        produces.add(name)
        return (r) => {
          const v = toValue(f(r))
          if (v !== undefined) r.e.values.set(name, v)
          return undefined
        }
      }
      case 'expr': {
        const f = expr(s.e)
        return (r) => {
          f(r)
          return undefined
        }
      }
      case 'if': {
        const c = expr(s.c)
        const then = stmt(s.then)
        const otherwise = s.else ? stmt(s.else) : () => undefined
        return (r) => (truthy(c(r)) ? then(r) : otherwise(r))
      }
      case 'block': {
        const body = s.body.map(stmt)
        return (r) => {
          for (const b of body) {
            const out = b(r)
            if (out) return out
          }
          return undefined
        }
      }
      case 'return': {
        const f = expr(s.e)
        return (r) => ({ returned: f(r) })
      }
      case 'break': {
        const broke: Outcome = { broke: true }
        return () => broke
      }
      case 'switch': {
        // The first case whose expression equals the switch's (==) runs, then the ones after it (C's fallthrough)
        // until a break; default runs when none equals.
        const subject = expr(s.e)
        const tests = s.cases.map((c) => (c.test ? expr(c.test) : undefined))
        const bodies = s.cases.map((c) => c.body.map(stmt))
        return (r) => {
          const v = cost(r, subject(r))
          let from = tests.findIndex((t) => t !== undefined && compare('==', v, cost(r, t(r)), r))
          if (from < 0) from = tests.findIndex((t) => t === undefined)
          if (from < 0) return undefined
          for (let k = from; k < bodies.length; k++) {
            for (const b of bodies[k]!) {
              const out = b(r)
              if (out) return 'broke' in out ? undefined : out
            }
          }
          return undefined
        }
      }
    }
  }

  const only = program.filter
  const isFilter = only !== undefined && !(only.k === 'call' && EFFECTS.has(only.name))
  let run: (e: Entry) => boolean
  if (isFilter) {
    const f = expr(only)
    run = (e) => truthy(f({ e, spent: 0 }))
  } else {
    const body = stmt({ k: 'block', body: program.body, pos: offset })
    run = (e) => {
      const out = body({ e, spent: 0 })
      return out === undefined || !('returned' in out) || truthy(out.returned)
    }
  }
  return { program, filter: isFilter, run, consumes: [...consumes], produces: [...produces] }
}

/** The program's normal form: its tokens as written, one blank where the source had blanks or comments. */
function normalText(src: string, offset: number, fail: (reason: string, pos: number) => QueryError): string {
  const tokens = lexProgram(src, offset, fail)
  let out = ''
  let prevEnd = -1
  for (const t of tokens) {
    if (t.kind === 'eof') break
    if (prevEnd >= 0 && t.pos > prevEnd) out += ' '
    out += src.slice(t.pos - offset, t.end - offset)
    prevEnd = t.end
  }
  return out
}

export const evalModule: ModuleDef = {
  name: 'eval',
  kind: 'processing',
  info: 'Runs a C-style expression or program on each entry: a lone expression filters (comparisons, && || !, arithmetic, functions such as strings_tolower, len, in, printf, math_*, json_*), assignments set new values (x = a + b;), with if / else and return.',
  examples: ['eval ( status >= 500 || latency > 1.5 )', 'eval kb = bytes / 1024.0', 'eval in(Appname, "indexer", "webserver")', 'eval if (code == 404) { kind = "missing"; } else { kind = "other"; }'],
  compile(call, ctx) {
    const fail = (reason: string, pos: number) => new QueryError(reason, pos, call.index, call.name)
    if (call.args.length === 0) throw argError(call, 'eval needs an expression or statements', call.end)
    const compiled = compileProgram(call.argText, call.argPos, fail, (pattern, pos) => ctx.regex(pattern, pos))
    const text = `eval ${normalText(call.argText, call.argPos, fail)}`
    return {
      name: 'eval',
      kind: compiled.filter ? 'filter' : 'processing',
      text,
      consumes: compiled.consumes,
      produces: compiled.produces,
      stateless: true,
      stage() {
        return {
          push(e, out) {
            if (compiled.run(e)) out(e)
          },
        }
      },
    }
  },
}
