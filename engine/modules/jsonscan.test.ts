import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { entry, values } from './extractions.testkit'
import { type PathPart, jsonValue, pathText, walkPath } from './json'
import { MAX_DEPTH, SCAN_INVALID, SCAN_OK, SCAN_TOO_DEEP, memberValue, scanDocument, scanPlan } from './jsonscan'

/** The json module's general answer: JSON.parse over the decoded bytes, then walkPath and jsonValue per path. */
function parsed(data: Uint8Array, paths: PathPart[][]): unknown[] {
  let doc: unknown
  try {
    doc = JSON.parse(Buffer.from(data).toString('utf8'))
  } catch {
    doc = undefined
  }
  return paths.map((p) => (doc === undefined ? undefined : jsonValue(walkPath(doc, p))))
}

/** The scanner's answer; null when the document is too deep for it. */
function scanned(data: Uint8Array, paths: PathPart[][]): unknown[] | null {
  const plan = scanPlan(paths)!
  const r = scanDocument(data, plan)
  if (r === SCAN_TOO_DEEP) return null
  return paths.map((_, i) => (r === SCAN_OK ? memberValue(data, plan, i) : undefined))
}

/** Equal as values, -0 told from 0 (Object.is per element). */
function expectSame(data: Uint8Array, paths: PathPart[][], got: unknown[], want: unknown[]): void {
  const same = got.length === want.length && got.every((v, i) => Object.is(v, want[i]))
  if (!same) expect({ data: Buffer.from(data).toString('latin1'), paths, got }).toEqual({ data: Buffer.from(data).toString('latin1'), paths, got: want })
}

// Keys as written in the document (raw JSON string contents, some escaped or invalid UTF-8), drawn from a small pool
// so that paths meet them and duplicates are frequent; `a\u0062` is `ab` again, `\u00e9` is `é`.
const rawKey = fc.oneof(
  fc.constantFrom('a', 'b', 'ab', 'a\\u0062', 'é', '\\u00e9', '__proto__', 'constructor', '0', '1', 'x.y', '', 'host', '\\ud800', '\uFFFD', 'length').map((k) => Buffer.from(k)),
  fc.constantFrom(Buffer.from([0xff]), Buffer.from([0xc3]), Buffer.from([0x61, 0xe2, 0x82])),
)
// Keys of paths: the decoded forms of the pool, and some that are not in it.
const pathKey = fc.constantFrom('a', 'b', 'ab', 'é', '__proto__', 'constructor', '0', '1', 'x.y', '', 'host', '\ud800', '\uFFFD', 'a\uFFFD', 'length', 'toString', 'zz')
const pathPart: fc.Arbitrary<PathPart> = fc.oneof(pathKey.map((key) => ({ key })), fc.nat(3).map((index) => ({ index })))
const pathsArb = fc.array(fc.array(pathPart, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 5 })

const blank = fc.oneof({ weight: 6, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.constantFrom(' ', '\n', '\t', '\r', ' \r\n ') })
const stringPiece = fc.oneof(
  { weight: 12, arbitrary: fc.constant(Buffer.from('v')) },
  fc.string({ unit: 'binary', maxLength: 4 }).map((s) => Buffer.from(JSON.stringify(s).slice(1, -1))),
  fc.constantFrom('\\n', '\\"', '\\\\', '\\/', '\\b', '\\f', '\\r', '\\t', '\\u0041', '\\ud83d\\ude00', '\\udc00', '\\uD800', '\\u0000', '\u2028', '\x7f').map((s) => Buffer.from(s)),
  fc.uint8Array({ minLength: 1, maxLength: 3 }).map((b) => Buffer.from(b.map((x) => x | 0x80))),
  // Invalid inside a string: bad escapes and raw control characters.
  { weight: 1, arbitrary: fc.constantFrom('\\x', '\\u12', '\\U0041', '\x01', '\n', '\t', '\\').map((s) => Buffer.from(s)) },
)
const stringToken = fc.array(stringPiece, { maxLength: 4 }).map((p) => Buffer.concat([Buffer.from('"'), ...p, Buffer.from('"')]))
const digits = fc.stringMatching(/^[0-9]{1,25}$/)
const numberToken = fc.oneof(
  { weight: 3, arbitrary: fc.integer().map(String) },
  fc.tuple(fc.constantFrom('', '-'), fc.oneof(fc.constant('0'), fc.stringMatching(/^[1-9][0-9]{0,24}$/)), fc.option(digits), fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), digits))).map(
    ([sign, int, frac, exp]) => `${sign}${int}${frac === null ? '' : `.${frac}`}${exp === null ? '' : exp.join('')}`,
  ),
  fc.double().map((d) => JSON.stringify(d) ?? 'null'),
  fc.constantFrom('-0', '1e400', '-1e400', '1e-400', '9007199254740993', '0.1', '1E+2', '-0.0e-0'),
  // Out of JSON's grammar.
  { weight: 1, arbitrary: fc.constantFrom('01', '1.', '.5', '+1', '-', '1e', '1e+', 'NaN', 'Infinity', '-01', '0x10') },
)
const literal = fc.oneof({ weight: 6, arbitrary: fc.constantFrom('true', 'false', 'null') }, fc.constantFrom('tru', 'nul', 'True', 'nulll'))
/** Objects written member by member (so keys may repeat), blanks between tokens, sometimes a trailing comma. */
function objectOf(value: fc.Arbitrary<Buffer>, minLength: number): fc.Arbitrary<Buffer> {
  return fc
    .tuple(fc.array(fc.tuple(blank, rawKey, blank, blank, value, blank), { minLength, maxLength: 5 }), blank, fc.boolean())
    .map(([members, inner, trailingComma]) =>
      Buffer.concat([
        Buffer.from('{'),
        Buffer.from(inner),
        ...members.flatMap(([b1, k, b2, b3, v, b4], i) => [Buffer.from(`${i ? ',' : ''}${b1}"`), k, Buffer.from(`"${b2}:${b3}`), v, Buffer.from(b4)]),
        Buffer.from(trailingComma && members.length ? ',}' : '}'),
      ]),
    )
}
const { value } = fc.letrec<{ value: Buffer; object: Buffer; array: Buffer }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    stringToken,
    numberToken.map((s) => Buffer.from(s)),
    literal.map((s) => Buffer.from(s)),
    tie('object'),
    tie('array'),
  ),
  object: objectOf(tie('value'), 0),
  array: fc
    .tuple(fc.array(fc.tuple(blank, tie('value'), blank), { maxLength: 5 }), blank)
    .map(([els, inner]) => Buffer.concat([Buffer.from('['), Buffer.from(inner), ...els.flatMap(([b1, v, b2], i) => [Buffer.from(`${i ? ',' : ''}${b1}`), v, Buffer.from(b2)]), Buffer.from(']')])),
}))

// What a document may suffer: truncation, a junk byte (JSON's and other whitespace, structure, controls, a BOM,
// invalid UTF-8), a byte removed, leading and trailing whitespace.
const junk = fc.oneof(
  fc.constantFrom(' ', '\t', '\n', '\r', '\v', '\f', '\u00a0', '\ufeff', ',', ':', '"', '{', '}', '[', ']', '\\', '0', 'x', '\x00', '\x1f').map((s) => Buffer.from(s)),
  fc.uint8Array({ minLength: 1, maxLength: 2 }).map((b) => Buffer.from(b)),
)
type Mutation = { kind: 'none' } | { kind: 'truncate' | 'remove'; at: number } | { kind: 'insert'; at: number; bytes: Buffer } | { kind: 'around'; before: string; after: string }
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 5, arbitrary: fc.constant({ kind: 'none' as const }) },
  fc.nat().map((at) => ({ kind: 'truncate' as const, at })),
  fc.nat().map((at) => ({ kind: 'remove' as const, at })),
  fc.tuple(fc.nat(), junk).map(([at, bytes]) => ({ kind: 'insert' as const, at, bytes })),
  fc.tuple(blank, blank).map(([before, after]) => ({ kind: 'around' as const, before, after })),
)
function mutate(doc: Buffer, m: Mutation): Buffer {
  const at = 'at' in m ? m.at % (doc.length + 1) : 0
  switch (m.kind) {
    case 'none':
      return doc
    case 'truncate':
      return doc.subarray(0, at)
    case 'remove':
      return Buffer.concat([doc.subarray(0, at), doc.subarray(at + 1)])
    case 'insert':
      return Buffer.concat([doc.subarray(0, at), m.bytes, doc.subarray(at)])
    case 'around':
      return Buffer.concat([Buffer.from(m.before), doc, Buffer.from(m.after)])
  }
}

/** Every path to a member of a parsed document, objects and arrays included. */
function members(v: unknown, path: PathPart[] = [], out: PathPart[][] = []): PathPart[][] {
  if (path.length) out.push(path)
  if (Array.isArray(v)) v.forEach((el, i) => members(el, [...path, { index: i }], out))
  else if (v !== null && typeof v === 'object') for (const k of Object.keys(v)) members((v as Record<string, unknown>)[k], [...path, { key: k }], out)
  return out
}

describe('jsonscan: the same answer as JSON.parse, walkPath and jsonValue', () => {
  test('generated documents (escapes, invalid UTF-8, duplicate keys, odd numbers), mutated, with generated paths', () => {
    let valid = 0
    let found = 0
    fc.assert(
      fc.property(fc.oneof({ weight: 3, arbitrary: objectOf(value, 1) }, value), mutation, pathsArb, fc.nat(), (doc, m, extra, pick) => {
        // Paths to members of the document as generated (before the mutation), when it is valid, and generated ones.
        let before: unknown
        try {
          before = JSON.parse(doc.toString('utf8'))
        } catch {}
        const all = members(before)
        const paths = [...(all.length ? [all[pick % all.length]!, all[(pick >> 8) % all.length]!] : []), ...extra]
        const data = mutate(doc, m)
        const want = parsed(data, paths)
        const got = scanned(data, paths)
        expect(got).not.toBeNull()
        expectSame(data, paths, got!, want)
        if (scanDocument(data, scanPlan(paths)!) === SCAN_OK) valid++
        if (want.some((v) => v !== undefined)) found++
      }),
      { numRuns: 4000 },
    )
    // The generators reach both valid and refused documents, and paths that find members.
    expect(valid).toBeGreaterThan(600)
    expect(valid).toBeLessThan(3500)
    expect(found).toBeGreaterThan(300)
  }, 120_000)

  test('fc.jsonValue and fc.json documents, every member path and missing ones, mutated', () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue().map((v) => JSON.stringify(v)), fc.json()), mutation, pathsArb, (text, m, extra) => {
        const doc = Buffer.from(text)
        const paths = [...members(JSON.parse(text)).slice(0, 20), ...extra]
        const data = mutate(doc, m)
        const got = scanned(data, paths)
        expect(got).not.toBeNull()
        expectSame(data, paths, got!, parsed(data, paths))
      }),
      { numRuns: 3000 },
    )
  }, 120_000)

  test('nesting up to MAX_DEPTH is scanned, deeper is left to JSON.parse; the module answers the same either way', () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { minLength: 1, maxLength: MAX_DEPTH + 40 }), value, fc.nat(3), (opens, inner, cut) => {
        // Objects `{"a":…}` and arrays `[…]` nested around a generated value.
        const head = opens.map((o) => (o ? '{"a":' : '[')).join('')
        const tail = opens.map((o) => (o ? '}' : ']')).reverse().join('')
        const data = Buffer.concat([Buffer.from(head), inner, Buffer.from(tail.slice(0, tail.length - (cut === 0 ? 1 : 0)))])
        const full: PathPart[] = opens.map((o) => (o ? { key: 'a' } : { index: 0 }))
        const paths = [full, full.slice(0, 1 + (cut % full.length)), [...full, { key: 'a' }], [...full.slice(0, -1), { index: 1 }]]
        const want = parsed(data, paths)
        const got = scanned(data, paths)
        if (opens.length > MAX_DEPTH) expect(got).toBeNull()
        else expectSame(data, paths, got!, want)
        // Through the module: the scanner or, past MAX_DEPTH, JSON.parse.
        const q = `tag=x json ${paths.map((p, i) => `${pathText(p)} as v${i}`).join(' ')}`
        const [vals] = values(q, [entry(data)])
        const expected: Record<string, unknown> = {}
        want.forEach((v, i) => v !== undefined && (expected[`v${i}`] = v))
        expect(vals).toEqual(expected as never)
      }),
      { numRuns: 400 },
    )
  }, 120_000)

  test('the cases the brief names, one by one', () => {
    const cases: [string | Buffer, PathPart[], unknown][] = [
      ['{"a":1,"a":2}', [{ key: 'a' }], 2],
      ['{"a":{"b":1},"a":{"c":2}}', [{ key: 'a' }, { key: 'b' }], undefined],
      ['{"a":{"b":1},"a":5}', [{ key: 'a' }, { key: 'b' }], undefined],
      ['{"a":{"b":1},"a\\u0062":5,"\\u0061":{"b":3}}', [{ key: 'a' }, { key: 'b' }], 3],
      ['{"__proto__":{"x":1}}', [{ key: '__proto__' }, { key: 'x' }], 1],
      ['{"a":1}', [{ key: 'constructor' }], undefined],
      ['{"a":-0}', [{ key: 'a' }], -0],
      ['{"a":1e400}', [{ key: 'a' }], Number.POSITIVE_INFINITY],
      ['{"a":"\\ud800"}', [{ key: 'a' }], '\ud800'],
      [Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xe2, 0x82, 0x22, 0x7d]), [{ key: 'a' }], '\ufffd\ufffd'],
      ['{"a":"x\ty"}', [{ key: 'a' }], undefined],
      ['{"a":1} x', [{ key: 'a' }], undefined],
      ['\ufeff{"a":1}', [{ key: 'a' }], undefined],
      ['\u00a0{"a":1}', [{ key: 'a' }], undefined],
      [' \t\r\n{"a":1}\n', [{ key: 'a' }], 1],
      ['{"a":null}', [{ key: 'a' }], 'null'],
      ['{"a":{"2":1,"b":[1, {"c" : true}],"1":0}}', [{ key: 'a' }], '{"1":0,"2":1,"b":[1,{"c":true}]}'],
      ['[5,[6,7]]', [{ index: 1 }, { index: 0 }], 6],
      ['{"0":1}', [{ index: 0 }], undefined],
      ['[1]', [{ key: '0' }], undefined],
      ['', [{ key: 'a' }], undefined],
    ]
    for (const [doc, path, want] of cases) {
      const data = typeof doc === 'string' ? Buffer.from(doc) : doc
      expectSame(data, [path], parsed(data, [path]), [want])
      expectSame(data, [path], scanned(data, [path])!, [want])
    }
    expect(scanDocument(Buffer.from('{"a":1,}'), scanPlan([[{ key: 'a' }]])!)).toBe(SCAN_INVALID)
    // DATA that is a plain Uint8Array viewing part of a larger buffer (as a segment's entries may be).
    const segment = new TextEncoder().encode('xx{"a":"é","b":[1,2]}yy')
    const view = segment.subarray(2, segment.length - 2)
    expect(values('tag=x json a b.[1] b', [entry(view)])).toEqual([{ a: 'é', '[1]': 2, b: '[1,2]' }])
    expect(scanPlan([[{ key: 'a' }, { any: true }]])).toBeNull()
  })
})
