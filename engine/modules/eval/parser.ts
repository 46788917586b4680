// The structure of an eval program (gravwell/wiki search/eval/eval.md "Syntax"), with each node's position in the
// query for errors. What this eval reads:
//   program    := statement* | expression          (a lone expression filters; see eval.ts)
//   statement  := if ( expr ) statement [ else statement ] | { statement* } | return expr ; | name = expr ;
//                 | name ++ ; | name -- ; | expr ; | ;
//                 | switch ( expr ) { (case expr : statement*)* [default : statement*] }   (C's fallthrough; break)
//   expr       := or [ ? expr : expr ]
//   precedence, loosest first: ||  &&  ^  &  == != ~ !~  < > <= >=  << >>  + -  * / %  unary - !  postfix [i] [a:b]
//   primary    := number | "string" | true | false | name | $(any name) | function ( args ) | ( expr )
// Guarantees: the program has at most MAX_NODES nodes and nests at most MAX_DEPTH deep (so neither parsing nor
// evaluating can exhaust the stack); it has no loops (`for`, `switch`, persistent `var` and `map` are refused with
// their position), so an entry costs at most one evaluation of each node. The bitwise or `|` cannot be written: the
// query splits its modules at `|`.
import type { QueryError } from '../../errors'
import type { EvalToken } from './lexer'

export type Expr =
  | { k: 'num'; v: number; float: boolean; pos: number }
  | { k: 'str'; v: string; pos: number }
  | { k: 'bool'; v: boolean; pos: number }
  | { k: 'var'; name: string; pos: number }
  | { k: 'unary'; op: '-' | '!'; e: Expr; pos: number }
  | { k: 'binary'; op: string; l: Expr; r: Expr; pos: number }
  | { k: 'cond'; c: Expr; a: Expr; b: Expr; pos: number }
  | { k: 'call'; name: string; args: Expr[]; pos: number }
  | { k: 'index'; e: Expr; i: Expr; pos: number }
  | { k: 'slice'; e: Expr; a: Expr; b: Expr; pos: number }

export type Stmt =
  | { k: 'assign'; name: string; e: Expr; pos: number }
  | { k: 'expr'; e: Expr; pos: number }
  | { k: 'if'; c: Expr; then: Stmt; else?: Stmt; pos: number }
  | { k: 'block'; body: Stmt[]; pos: number }
  | { k: 'return'; e: Expr; pos: number }
  | { k: 'switch'; e: Expr; cases: { test?: Expr; body: Stmt[] }[]; pos: number }
  | { k: 'break'; pos: number }

export interface Program {
  /** Set when the program is one expression: it filters. */
  filter?: Expr
  body: Stmt[]
}

export const MAX_DEPTH = 64
export const MAX_NODES = 2000

const KEYWORDS = new Set(['if', 'else', 'for', 'break', 'continue', 'return', 'case', 'default', 'switch', 'var', 'map', 'true', 'false'])
const UNSUPPORTED: Record<string, string> = {
  for: 'eval runs no loops here: `for` is not supported (each entry costs one pass over the program)',
  var: 'persistent variables (`var`) are not supported: eval keeps no state between entries here',
  map: 'persistent maps (`map`) are not supported: eval keeps no state between entries here',
  continue: '`continue` is only for loops, which eval does not run here',
}

const LEVELS: string[][] = [['||'], ['&&'], ['|'], ['^'], ['&'], ['==', '!=', '~', '!~'], ['<', '>', '<=', '>='], ['<<', '>>'], ['+', '-'], ['*', '/', '%']]

export function parseProgram(tokens: EvalToken[], fail: (reason: string, pos: number) => QueryError): Program {
  let i = 0
  let depth = 0
  let nodes = 0
  /** Switch statements around the statement being read (break is allowed inside one). */
  let switches = 0
  const peek = (o = 0) => tokens[Math.min(i + o, tokens.length - 1)]!
  const isOp = (t: EvalToken, text: string) => t.kind === 'op' && t.text === text
  const describe = (t: EvalToken) => (t.kind === 'eof' ? 'the end of the program' : JSON.stringify(t.text))
  const expect = (text: string): EvalToken => {
    const t = peek()
    if (!isOp(t, text)) throw fail(`expected ${JSON.stringify(text)}, found ${describe(t)}`, t.pos)
    i++
    return t
  }
  const node = (pos: number) => {
    if (++nodes > MAX_NODES) throw fail(`the program is too long: more than ${MAX_NODES} operations`, pos)
  }
  const enter = (pos: number) => {
    if (++depth > MAX_DEPTH) throw fail(`the program nests more than ${MAX_DEPTH} deep`, pos)
  }

  function expression(): Expr {
    const t = peek()
    enter(t.pos)
    const c = binary(0)
    let out = c
    if (isOp(peek(), '?')) {
      const q = peek()
      i++
      const a = expression()
      expect(':')
      const b = expression()
      node(q.pos)
      out = { k: 'cond', c, a, b, pos: q.pos }
    }
    depth--
    return out
  }

  function binary(level: number): Expr {
    if (level >= LEVELS.length) return unary()
    let l = binary(level + 1)
    for (;;) {
      const t = peek()
      if (t.kind !== 'op' || !LEVELS[level]!.includes(t.text)) return l
      i++
      const r = binary(level + 1)
      node(t.pos)
      l = { k: 'binary', op: t.text, l, r, pos: t.pos }
    }
  }

  function unary(): Expr {
    const t = peek()
    if (isOp(t, '-') || isOp(t, '!')) {
      i++
      enter(t.pos)
      const e = unary()
      depth--
      node(t.pos)
      return { k: 'unary', op: t.text as '-' | '!', e, pos: t.pos }
    }
    return postfix()
  }

  function postfix(): Expr {
    let e = primary()
    while (isOp(peek(), '[')) {
      const t = peek()
      i++
      const a = expression()
      if (isOp(peek(), ':')) {
        i++
        const b = expression()
        expect(']')
        node(t.pos)
        e = { k: 'slice', e, a, b, pos: t.pos }
      } else {
        expect(']')
        node(t.pos)
        e = { k: 'index', e, i: a, pos: t.pos }
      }
    }
    const after = peek()
    if (isOp(after, '++') || isOp(after, '--')) throw fail(`${after.text} is a statement here (write \`x${after.text};\`), not part of an expression`, after.pos)
    return e
  }

  function primary(): Expr {
    const t = peek()
    node(t.pos)
    if (t.kind === 'number') {
      i++
      const v = /^0[xX]/.test(t.text) ? Number.parseInt(t.text.slice(2), 16) : Number(t.text)
      if (!Number.isFinite(v)) throw fail(`the number ${t.text} is out of range`, t.pos)
      return { k: 'num', v, float: t.float === true, pos: t.pos }
    }
    if (t.kind === 'string') {
      i++
      return { k: 'str', v: t.text, pos: t.pos }
    }
    if (t.kind === 'ident') {
      i++
      // $(name) is always a value, whatever its text.
      const raw = tokens[i - 1]!.end - t.pos !== t.text.length
      if (!raw && (t.text === 'true' || t.text === 'false')) return { k: 'bool', v: t.text === 'true', pos: t.pos }
      if (!raw && KEYWORDS.has(t.text)) throw fail(UNSUPPORTED[t.text] ?? `unexpected keyword ${JSON.stringify(t.text)}`, t.pos)
      if (!raw && isOp(peek(), '(')) {
        i++
        enter(t.pos)
        const args: Expr[] = []
        if (!isOp(peek(), ')')) {
          for (;;) {
            args.push(expression())
            if (isOp(peek(), ',')) i++
            else break
          }
        }
        expect(')')
        depth--
        return { k: 'call', name: t.text, args, pos: t.pos }
      }
      return { k: 'var', name: t.text, pos: t.pos }
    }
    if (isOp(t, '(')) {
      i++
      const e = expression()
      expect(')')
      return e
    }
    if (isOp(t, '{')) throw fail('arrays are not supported', t.pos)
    throw fail(`expected a value, found ${describe(t)}`, t.pos)
  }

  function statement(): Stmt {
    const t = peek()
    enter(t.pos)
    const s = statementBody(t)
    depth--
    return s
  }

  function statementBody(t: EvalToken): Stmt {
    if (t.kind === 'ident' && tokens[i + 1] && t.end - t.pos === t.text.length) {
      if (t.text === 'if') {
        i++
        expect('(')
        const c = expression()
        expect(')')
        const then = statement()
        let otherwise: Stmt | undefined
        if (peek().kind === 'ident' && peek().text === 'else') {
          i++
          otherwise = statement()
        }
        node(t.pos)
        return { k: 'if', c, then, else: otherwise, pos: t.pos }
      }
      if (t.text === 'return') {
        i++
        const e = expression()
        expect(';')
        return { k: 'return', e, pos: t.pos }
      }
      if (t.text === 'switch') {
        i++
        expect('(')
        const e = expression()
        expect(')')
        expect('{')
        const cases: { test?: Expr; body: Stmt[] }[] = []
        switches++
        while (!isOp(peek(), '}')) {
          const c = peek()
          if (c.kind === 'ident' && (c.text === 'case' || c.text === 'default')) {
            if (cases.at(-1) && !cases.at(-1)!.test) throw fail('default must be the last case of a switch', c.pos)
            i++
            const test = c.text === 'case' ? expression() : undefined
            expect(':')
            cases.push({ test, body: [] })
            continue
          }
          if (c.kind === 'eof') throw fail('expected "}" to close the switch', c.pos)
          if (cases.length === 0) throw fail('expected "case" or "default" in the switch', c.pos)
          cases.at(-1)!.body.push(statement())
        }
        i++
        switches--
        node(t.pos)
        return { k: 'switch', e, cases, pos: t.pos }
      }
      if (t.text === 'break') {
        if (switches === 0) throw fail('`break` outside a switch (eval runs no loops here)', t.pos)
        i++
        end()
        return { k: 'break', pos: t.pos }
      }
      if (t.text === 'case' || t.text === 'default') throw fail(`${t.text} outside a switch`, t.pos)
      if (t.text === 'else') throw fail('else without if', t.pos)
      if (UNSUPPORTED[t.text]) throw fail(UNSUPPORTED[t.text]!, t.pos)
      const next = peek(1)
      if (isOp(next, '=')) {
        if (KEYWORDS.has(t.text)) throw fail(`${t.text} is a reserved word and cannot be assigned`, t.pos)
        i += 2
        const e = expression()
        end()
        node(t.pos)
        return { k: 'assign', name: t.text, e, pos: t.pos }
      }
      if (isOp(next, '++') || isOp(next, '--')) {
        i += 2
        end()
        node(t.pos)
        const one: Expr = { k: 'num', v: 1, float: false, pos: next.pos }
        return { k: 'assign', name: t.text, e: { k: 'binary', op: next.text[0]!, l: { k: 'var', name: t.text, pos: t.pos }, r: one, pos: next.pos }, pos: t.pos }
      }
    } else if (t.kind === 'ident' && isOp(peek(1), '=')) {
      // $(any name) = expr
      i += 2
      const e = expression()
      end()
      node(t.pos)
      return { k: 'assign', name: t.text, e, pos: t.pos }
    }
    if (isOp(t, '{')) {
      i++
      const body: Stmt[] = []
      while (!isOp(peek(), '}')) {
        if (peek().kind === 'eof') throw fail('expected "}" to close the block', peek().pos)
        body.push(statement())
      }
      i++
      return { k: 'block', body, pos: t.pos }
    }
    if (isOp(t, ';')) {
      i++
      return { k: 'block', body: [], pos: t.pos }
    }
    const e = expression()
    if (isOp(peek(), '=')) throw fail('only a value name can be assigned to', peek().pos)
    end()
    return { k: 'expr', e, pos: t.pos }
  }

  /** A statement ends with `;`, or with the program (the last one may leave it out). */
  function end(): void {
    const t = peek()
    if (isOp(t, ';')) i++
    else if (t.kind !== 'eof') throw fail(`expected ";" after the statement, found ${describe(t)}`, t.pos)
  }

  if (peek().kind === 'eof') throw fail('eval needs an expression or statements', peek().pos)
  const body: Stmt[] = []
  while (peek().kind !== 'eof') {
    const t = peek()
    if (isOp(t, '}')) throw fail('"}" without a block to close', t.pos)
    body.push(statement())
  }
  const only = body.length === 1 ? body[0]! : undefined
  return only?.k === 'expr' ? { filter: only.e, body } : { body }
}
