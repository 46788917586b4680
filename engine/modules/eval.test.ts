import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import type { Entry } from '../entry'
import { QueryError, SearchLimitError } from '../errors'
import { compileQueryNow } from '../query'
import { IPValue, TimeValue, type Value, parseIP } from '../value'
import { ENV, run } from './condensing.testkit'

const encoder = new TextEncoder()

function entry(values: Record<string, Value> = {}, data = '', ts = 0): Entry {
  return { ts, tag: 'web', src: '192.0.2.1', data: encoder.encode(data), values: new Map(Object.entries(values)) }
}

/** The value `x` an assignment program sets on one entry (undefined: none). */
const valueOf = (program: string, values: Record<string, Value> = {}, data = '') => run(`eval ${program}`, [entry(values, data)])[0]?.values.get('x')
const passes = (program: string, values: Record<string, Value> = {}, data = '') => run(`eval ${program}`, [entry(values, data)]).length === 1

function refusal(query: string): QueryError {
  try {
    compileQueryNow(query)
  } catch (e) {
    if (e instanceof QueryError) return e
    throw e
  }
  throw new Error(`${query} compiled`)
}

// ---- a reference evaluation of arithmetic, written apart from eval: integers as BigInt, floats as numbers, the
// type carried explicitly; undefined for an integer division by zero (the whole result is then missing).
type Ref = { int: bigint } | { float: number } | undefined
type Tree = { lit: number; float: boolean } | { name: 'a' | 'b' | 'f' } | { op: '+' | '-' | '*' | '/' | '%'; l: Tree; r: Tree } | { neg: Tree }
const VARS = { a: 7, b: -3, f: 2.5 } as const
const LIMIT = 2n ** 50n

function ref(t: Tree): Ref {
  if ('lit' in t) return t.float ? { float: t.lit } : { int: BigInt(t.lit) }
  if ('name' in t) return t.name === 'f' ? { float: VARS.f } : { int: BigInt(VARS[t.name]) }
  if ('neg' in t) {
    const v = ref(t.neg)
    if (!v) return undefined
    return 'int' in v ? { int: -v.int } : { float: -v.float }
  }
  const l = ref(t.l)
  const r = ref(t.r)
  if (!l || !r) return undefined
  if ('int' in l && 'int' in r) {
    const [x, y] = [l.int, r.int]
    let z: bigint
    if (t.op === '+') z = x + y
    else if (t.op === '-') z = x - y
    else if (t.op === '*') z = x * y
    else if (y === 0n) return undefined
    else z = t.op === '/' ? x / y : x % y
    if (z > LIMIT || z < -LIMIT) throw new RangeError('out of the exact range')
    return { int: z }
  }
  const x = 'int' in l ? Number(l.int) : l.float
  const y = 'int' in r ? Number(r.int) : r.float
  const ops = { '+': x + y, '-': x - y, '*': x * y, '/': x / y, '%': x % y }
  return { float: ops[t.op] }
}

function print(t: Tree): string {
  if ('lit' in t) return t.float ? t.lit.toFixed(2) : String(t.lit)
  if ('name' in t) return t.name === 'f' ? '$(f)' : t.name
  if ('neg' in t) return `-(${print(t.neg)})`
  return `(${print(t.l)} ${t.op} ${print(t.r)})`
}

const tree: fc.Arbitrary<Tree> = fc.letrec<{ t: Tree }>((tie) => ({
  t: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ lit: fc.integer({ min: 0, max: 50 }), float: fc.constant(false) }),
    fc.record({ lit: fc.integer({ min: 0, max: 5000 }).map((n) => n / 100), float: fc.constant(true) }),
    fc.record({ name: fc.constantFrom('a' as const, 'b' as const, 'f' as const) }),
    fc.record({ op: fc.constantFrom('+' as const, '-' as const, '*' as const, '/' as const, '%' as const), l: tie('t'), r: tie('t') }),
    fc.record({ neg: tie('t') }),
  ),
})).t

describe('eval: arithmetic against a reference evaluation', () => {
  test('generated expression trees give the reference value (integers exact, integer division truncating)', () => {
    fc.assert(
      fc.property(tree, (t) => {
        let expected: Ref
        try {
          expected = ref(t)
        } catch (e) {
          if (e instanceof RangeError) return
          throw e
        }
        // Literals print with two decimals: 0.5 prints as 0.50, so the reference reads them back the same way.
        const got = valueOf(`x = ${print(t)}`, { ...VARS })
        if (expected === undefined) expect(got).toBeUndefined()
        else if ('int' in expected) expect(got).toBe(Number(expected.int))
        else expect(Object.is(got, expected.float) || (typeof got === 'number' && Math.abs(got - expected.float) <= Math.abs(expected.float) * 1e-12)).toBe(true)
      }),
      { numRuns: 400 },
    )
  })

  test('generated comparisons and logic filter as a plain evaluation does', () => {
    const rows = fc.array(fc.record({ n: fc.integer({ min: -20, max: 20 }), f: fc.double({ min: -5, max: 5, noNaN: true }), s: fc.constantFrom('a', 'b', 'ab', '10') }), { maxLength: 40 })
    fc.assert(
      fc.property(rows, fc.integer({ min: -20, max: 20 }), fc.constantFrom('<', '>', '<=', '>=', '==', '!='), (data, k, op) => {
        const cmp = (x: number, y: number) => ({ '<': x < y, '>': x > y, '<=': x <= y, '>=': x >= y, '==': x === y, '!=': x !== y })[op]
        const entries = data.map((r) => entry({ n: r.n, f: r.f, s: r.s }))
        const got = run(`eval ( n ${op} ${k} && f < 2.5 ) || !( s != "ab" ) || s ~ "1"`, entries).map((e) => entries.indexOf(e))
        const want = data.flatMap((r, i) => ((cmp(r.n, k) && r.f < 2.5) || r.s === 'ab' || r.s.includes('1') ? [i] : []))
        expect(got).toEqual(want)
      }),
      { numRuns: 200 },
    )
  })
})

describe('eval: the language', () => {
  test.each<[string, Record<string, Value>, Value | undefined]>([
    ['x = a + b', { a: 1, b: '2' }, 3],
    ['x = a + b', { a: '1', b: '2' }, '12'],
    ['x = "n=" + a', { a: 5 }, 'n=5'],
    ['x = a - b', { a: '10', b: '4' }, 6],
    ['x = 7 / 2', {}, 3],
    ['x = 7.0 / 2', {}, 3.5],
    ['x = -7 % 3', {}, -1],
    ['x = 1 / 0', {}, undefined],
    ['x = missing + 1', {}, undefined],
    ['x = 0x10 + 1', {}, 17],
    ['x = 6 & 3 ^ 1', {}, 3],
    ['x = 1 << 10', {}, 1024],
    ['x = a > 2 ? "big" : "small"', { a: 3 }, 'big'],
    ['x = in(a, "x", "y")', { a: 'y' }, true],
    ['x = has(a) && !has(b)', { a: 1 }, true],
    ['x = len(DATA)', {}, 11],
    ['x = strings_toupper(a)', { a: 'abc' }, 'ABC'],
    ['x = strings_trim(a, "xy")', { a: 'xyhixy' }, 'hi'],
    ['x = strings_trimprefix(a, "/api")', { a: '/api/users' }, '/users'],
    ['x = strings_hasprefix(a, "ab") && strings_hassuffix(a, "yz")', { a: 'abcxyz' }, true],
    ['x = strings_replace(a, "o", "0", -1)', { a: 'foo boo' }, 'f00 b00'],
    ['x = strings_replace(a, "o", "0", 2)', { a: 'foo boo' }, 'f00 boo'],
    ['x = strings_count(a, "o")', { a: 'foo boo' }, 4],
    ['x = strings_index(a, "b")', { a: 'foo boo' }, 4],
    ['x = a[1:3]', { a: 'potato' }, 'ot'],
    ['x = a[0]', { a: 'potato' }, 'p'],
    ['x = printf("%s=%05.1f %d%%", a, 3.14159, 42)', { a: 'pi' }, 'pi=003.1 42%'],
    ['x = printf("%-4s|%4d|%x", "ab", 7, 255)', {}, 'ab  |   7|ff'],
    ['x = int("42") + toInt("8")', {}, 50],
    ['x = float(1) / 4', {}, 0.25],
    ['x = type(a)', { a: 1.5 }, 'float'],
    ['x = json_get(json_set("{}", "k", a), "k")', { a: 'v' }, 'v'],
    ['x = path_base(a)', { a: '/var/log/syslog/' }, 'syslog'],
    ['x = path_clean(a)', { a: '/../a/b/../././/c' }, '/a/c'],
    ['x = hash_md5("abc")', {}, '900150983cd24fb0d6963f7d28e17f72'],
    ['x = base64_decode(base64_encode(a))', { a: 'héllo' }, 'héllo'],
    ['x = pretty_size(1234567)', {}, '1.18 MB'],
    ['x = pretty_count(1234567)', {}, '1.23 M'],
    ['x = math_pow(2, 10)', {}, 1024],
    ['x = round(-2.5)', {}, -3],
    ['x = match(a, "^\\d+ ms$")', { a: '25 ms' }, true],
    ['x = ip_in_cidr(a, "10.0.0.0/8")', { a: '10.1.2.3' }, true],
    ['x = $(odd name!) * 2', { 'odd name!': 21 }, 42],
    ['if (a == "bar") { x = 1; } else if (a == "baz") { x = 2; } else { x = 3; }', { a: 'baz' }, 2],
    ['x = 1; x++; x++', {}, 3],
    ['switch (a) { case 1: x = "one"; break; case 2: x = "two"; default: x = "other"; }', { a: 1 }, 'one'],
    ['switch (a) { case 1: x = "one"; break; case 2: x = "two"; default: x = "other"; }', { a: '2' }, 'other'],
    ['switch (a) { case 1: x = "one"; break; case 2: x = "two"; default: x = "other"; }', { a: 5 }, 'other'],
    ['switch (a) { case 1: x = "one"; break; case 2: x = "two"; break; }', { a: 2 }, 'two'],
    ['switch (a) { case 1: x = "one"; }', { a: 2 }, undefined],
    ['switch (int(foo)) { case 1: x = "started at the first case"; case 2: x = x + " and continued into the second case"; }', { foo: '1' }, 'started at the first case and continued into the second case'],
    ['x = TAG + "/" + SRC', {}, 'web/192.0.2.1'],
    ['/* a comment */ x = 1 // another\n', {}, 1],
    ['x = printf("%d", 1.0 / 0)', {}, '+Inf'],
    ['x = strings_toupper(base64_decode(a)) + "!"', { a: '%%%' }, '!'],
    ['x = has(evs_to_json)', {}, false],
  ])('%s', (program, values, expected) => {
    expect(valueOf(program, values, 'hello world')).toEqual(expected as never)
  })

  test('IPs, times and durations compare and compute as such', () => {
    const ip = parseIP('10.0.0.9')!
    expect(passes('a > "10.0.0.10"', { a: ip })).toBe(false)
    expect(passes('a < "10.0.0.10"', { a: ip })).toBe(true)
    expect(passes('a ~ "10.0.0.0/24"', { a: ip })).toBe(true)
    expect(passes('a == "10.0.0.9"', { a: ip })).toBe(true)
    const t = new TimeValue(Date.parse('2026-01-01T00:00:00Z'))
    expect(valueOf('x = a + "1h30m"', { a: t })?.toString()).toBe('2026-01-01T01:30:00Z')
    expect(valueOf('x = (a + "90s") - a', { a: t })?.toString()).toBe('1m30s')
    expect(valueOf('x = ip(a)', { a: '::ffff:1.2.3.4' })).toBeInstanceOf(IPValue)
  })

  test('a lone expression filters; statements pass every entry unless they return false', () => {
    const entries = [1, 2, 3, 4].map((n) => entry({ n }))
    expect(run('eval n % 2 == 0', entries).map((e) => e.values.get('n'))).toEqual([2, 4])
    expect(run('eval n % 2 == 0;', entries).map((e) => e.values.get('n'))).toEqual([2, 4])
    expect(run('eval y = n * 10', entries).map((e) => e.values.get('y'))).toEqual([10, 20, 30, 40])
    expect(run('eval if (n > 2) { return false; } y = n', entries).map((e) => e.values.get('y'))).toEqual([1, 2])
    expect(run('eval switch (n) { case 2: return false; case 3: y = 3; break; default: y = 0; }', entries).map((e) => e.values.get('y'))).toEqual([0, 3, 0])
    expect(run('eval delete(n)', entries).map((e) => e.values.has('n'))).toEqual([false, false, false, false])
    expect(run('eval missing == 1 || missing != 1', entries)).toEqual([])
    expect(run('eval set_data(printf("n is %d", n))', [entry({ n: 5 })]).map((e) => new TextDecoder().decode(e.data))).toEqual(['n is 5'])
  })

  test('the normal form keeps the program, with single blanks, and compiles to itself', () => {
    const q = compileQueryNow('tag=web eval   x =  a+1 ;\n  // note\n y = "a  b" || c')
    expect(q.text).toBe('tag=web eval x = a+1 ; y = "a  b" || c')
    expect(compileQueryNow(q.text).text).toBe(q.text)
    expect(q.modules[0]!.produces).toEqual(['x', 'y'])
    expect(q.modules[0]!.consumes).toEqual(['a', 'c'])
    // `||` is no pipe for the query: eval reads it, and other modules get it as text.
    expect(compileQueryNow('tag=web grep a||b | eval x || y').modules.map((m) => m.text)).toEqual(['grep "a||b"', 'eval x || y'])
  })
})

describe('eval: refusals and bounds', () => {
  test('any sequence of tokens either is refused with a QueryError or runs without any other error', () => {
    const vocabulary = ['x', '=', 'a', 'b', '1', '2.5', '"s"', '+', '-', '*', '/', '%', '==', '<', '&&', '||', '!', '~', '(', ')', ';', ',', '?', ':', '[', ']', '{', '}', 'if', 'else', 'return', 'switch', 'case', 'default', 'break', 'len', 'printf', 'strings_replace', 'json_set', 'in', 'int', 'DATA', '$(a b)', '<<', '^', '++']
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...vocabulary), { minLength: 1, maxLength: 25 }), (words) => {
        let q
        try {
          q = compileQueryNow(`tag=web eval ${words.join(' ')}`)
        } catch (e) {
          expect(e).toBeInstanceOf(QueryError)
          expect((e as QueryError).position).toBeGreaterThanOrEqual(13)
          return
        }
        const stage = q.modules[0]!.stage(ENV)
        stage.push(entry({ a: 3, b: 'text', 'a b': 1 }, 'data'), () => {})
      }),
      { numRuns: 2000 },
    )
  })

  test.each([
    ['tag=web eval', 12, 'needs an expression'],
    ['tag=web eval x = (1 + ', 21, 'expected a value'],
    ['tag=web eval foo(1)', 13, 'unknown function "foo"'],
    ['tag=web eval len(1, 2)', 13, 'len takes 1 argument'],
    ['tag=web eval x = = 3', 17, 'expected a value, found "="'],
    ['tag=web eval for (i = 0; i < 3; i++) { x = i; }', 13, 'no loops'],
    ['tag=web eval var n = 0;', 13, 'persistent variables'],
    ['tag=web eval x = 1; break;', 20, 'outside a switch'],
    ['tag=web eval switch (a) { x = 1; }', 26, 'expected "case"'],
    ['tag=web eval switch (a) { default: x = 1; case 2: x = 2; }', 42, 'default must be the last'],
    ['tag=web eval x = 1 /* open', 19, 'unterminated /* comment'],
    ['tag=web eval x = match(a, b)', 26, 'literal'],
    ['tag=web eval x = match(a, "(")', 26, 'invalid regular expression'],
    ['tag=web eval x = a++ + 1', 18, 'statement'],
    ['tag=web eval x = {1, 2}', 17, 'arrays'],
    ['tag=web eval true = 1', 13, 'reserved'],
    ['tag=web eval 1 +', 16, 'expected a value'],
    ['tag=web eval x = 1 @ 2', 19, 'unexpected character'],
  ])('%j is refused at %d', (query, position, reason) => {
    const e = refusal(query)
    expect(e.reason).toContain(reason)
    expect(e.position).toBe(position)
    expect(e.module).toBe('eval')
  })

  test('nesting and size are bounded at parse time', () => {
    const deep = `tag=web eval x = ${'('.repeat(70)}1${')'.repeat(70)}`
    expect(refusal(deep).reason).toContain('nests more than')
    const long = `tag=web eval x = 1${'+1'.repeat(2001)}`
    expect(refusal(long).reason).toContain('too long')
    expect(valueOf(`x = 1${'+1'.repeat(900)}`)).toBe(901)
  })

  test('strings are bounded, and so is the string work of one entry', () => {
    const big = 'a'.repeat(3 * 1024 * 1024)
    expect(() => valueOf('x = DATA + DATA', {}, big)).toThrow(SearchLimitError)
    const mb = 'b'.repeat(1024 * 1024)
    const calls = Array.from({ length: 70 }, () => 'strings_index(DATA, "zz")').join(' + ')
    expect(() => valueOf(`x = ${calls}`, {}, mb)).toThrow(SearchLimitError)
    const comparisons = Array.from({ length: 70 }, (_, i) => `DATA == "${i}"`).join(' || ')
    expect(() => passes(comparisons, {}, mb)).toThrow(SearchLimitError)
    expect(passes(comparisons.split(' || ').slice(0, 10).join(' || '), {}, mb)).toBe(false)
    expect(() => valueOf('x = strings_replace(DATA, "b", "bbbbbbbbbb", -1)', {}, mb)).toThrow(SearchLimitError)
    expect(valueOf('x = len(printf("%1000000d", 1))')).toBe(1000)
  })
})
