import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { entry, normal, refusedAt, values } from './extractions.testkit'
import { type PathPart, jsonValue, parsePath, pathName, pathText } from './json'

describe('json: arguments and normal form', () => {
  test.each([
    ['tag=x json a', 'tag=x json a'],
    ['tag=x json  a.b   c', 'tag=x json a.b c'],
    ['tag=x json groups[0] as gid', 'tag=x json groups.[0] as gid'],
    ['tag=x json groups.[0]', 'tag=x json groups.[0]'],
    ['tag=x json Metadata.[].State', 'tag=x json Metadata.[].State'],
    ['tag=x json "subfield.op" as sop', 'tag=x json "subfield.op" as sop'],
    ['tag=x json fields."search-id" fields."search-type" as type', 'tag=x json fields.search-id fields.search-type as type'],
    ['tag=x json fields."a b".c', 'tag=x json fields."a b".c'],
    ['tag=x json -e Data domain != "google.com" as dd', 'tag=x json -e Data domain != google.com as dd'],
    ['tag=x json FOO!=""', 'tag=x json FOO != ""'],
    ['tag=x json -s FOO !=""', 'tag=x json -s FOO != ""'],
    ['tag=x json status>=500 ip ~ 10.0.0.0/8', 'tag=x json status >= 500 ip ~ 10.0.0.0/8'],
    ['tag=x json "a.b"==3', 'tag=x json "a.b" == 3'],
    ['tag=x json -x groups groups uid', 'tag=x json -x groups groups uid'],
    ['tag=x json a as "my name"', 'tag=x json a as "my name"'],
    ['tag=x json msg == "say \\"hi\\" | now"', 'tag=x json msg == "say \\"hi\\" | now"'],
  ])('%s → %s, which is its own normal form', (q, expected) => {
    expect(normal(q)).toBe(expected)
    expect(normal(expected)).toBe(expected)
  })

  test.each([
    ['tag=x json', 10],
    ['tag=x json -q a', 11],
    ['tag=x json a..b', 11],
    ['tag=x json ok a[x]', 14],
    ['tag=x json a[1', 11],
    ['tag=x json a as', 15],
    ['tag=x json a ==', 15],
    ['tag=x json -e', 13],
  ])('%s is refused at %d', (q, pos) => {
    refusedAt(q, pos)
  })

  test('produces the last part of each path, or its new name; consumes -e', async () => {
    const { compileQueryNow } = await import('../query')
    const m = compileQueryNow('tag=x json -e Data a.b groups.[0] c as d').modules[0]!
    expect(m.produces).toEqual(['b', '[0]', 'd'])
    expect(m.consumes).toEqual(['Data'])
  })
})

// Keys with what paths must quote: dots, blanks, dashes, brackets, quotes.
const key = fc.oneof(fc.constantFrom('a', 'b', 'host', 'search-id', '-A', 'x.y', 'a b', 'q"t', '[0]', 'as', 'é', '=='), fc.string({ minLength: 1, maxLength: 6 }))
const leaf = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string({ maxLength: 8 }), fc.boolean(), fc.constant(null))
const { doc } = fc.letrec((tie) => ({
  doc: fc.dictionary(key, tie('node'), { maxKeys: 4 }),
  node: fc.oneof({ depthSize: 'small' }, leaf, leaf, tie('doc'), fc.array(tie('node'), { maxLength: 3 })),
}))

/** Every path to a member of the document (objects and arrays included), with the member. */
function members(v: unknown, path: PathPart[] = [], out: [PathPart[], unknown][] = []): [PathPart[], unknown][] {
  if (path.length) out.push([path, v])
  if (Array.isArray(v)) v.forEach((el, i) => members(el, [...path, { index: i }], out))
  else if (v !== null && typeof v === 'object') for (const [k, el] of Object.entries(v)) members(el, [...path, { key: k }], out)
  return out
}

describe('json: extraction checked against the document it was serialised from', () => {
  test('every member of generated documents comes back as its value, numbers as numbers', () => {
    fc.assert(
      fc.property(doc, (generated) => {
        // What the line holds (JSON has no -0: it is written 0).
        const d = JSON.parse(JSON.stringify(generated))
        const all = members(d).slice(0, 12)
        if (all.length === 0) return
        const q = `tag=x json ${all.map(([p], i) => `${pathText(p)} as v${i}`).join(' ')}`
        const [got] = values(q, [JSON.stringify(d)])
        const expected: Record<string, unknown> = {}
        all.forEach(([, v], i) => (expected[`v${i}`] = jsonValue(v)))
        expect(got).toEqual(expected)
      }),
      { numRuns: 1000 },
    )
  })

  test('paths written back read as the same parts; the default name is the last part', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(key.map((k) => ({ key: k }) as PathPart), fc.nat(50).map((index) => ({ index }) as PathPart)), { minLength: 1, maxLength: 4 }), (parts) => {
        expect(parsePath(pathText(parts))).toEqual(parts)
        const q = `tag=x json ${pathText(parts)}`
        expect(normal(normal(q))).toBe(normal(q))
        const last = parts.at(-1)!
        expect(pathName(parts)).toBe('key' in last ? last.key : `[${(last as { index: number }).index}]`)
      }),
    )
  })

  test('a missing member sets nothing and keeps the entry; [] takes the first element that has the rest', () => {
    const data = '{"uid":1,"groups":[17,3],"Metadata":[{"Value":"john"},{"Value":"Albuquerque","State":"NM"}],"o":{"k":[1,{"z":2}]}}'
    expect(values('tag=x json uid groups.[1] as g Metadata.[0].Value as user Metadata.[].State nope o', [data])).toEqual([
      { uid: 1, g: 3, user: 'john', State: 'NM', o: '{"k":[1,{"z":2}]}' },
    ])
    expect(values('tag=x json groups[0] as gid', [data])).toEqual([{ gid: 17 }])
    expect(values('tag=x json a', ['not json', '{"a":true}', '{"a":null}'])).toEqual([{}, { a: true }, { a: 'null' }])
  })
})

describe('json: filters, strict mode, -e and -x as json.md says', () => {
  const entries = ['{"A": "B", "FOO": ""}', '{"A": "Z"}']
  test.each([
    ['json FOO!=""', [{ A: 'Z' }]],
    ['json -s FOO', [{ A: 'B', FOO: '' }]],
    ['json FOO', [{ A: 'B', FOO: '' }, { A: 'Z' }]],
    ['json -s FOO!=""', []],
    ['json FOO==""', [{ A: 'B', FOO: '' }]],
    ['json FOO!~"x"', [{ A: 'B', FOO: '' }, { A: 'Z' }]],
    ['json FOO~""', [{ A: 'B', FOO: '' }]],
  ])('%s', (q, expected) => {
    // A is extracted by a first json so the entries can be told apart.
    expect(values(`tag=x json A | ${q}`, entries)).toEqual(expected as never)
  })

  test('numeric and subnet filters on generated numbers, against a plain comparison', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -1000, max: 1000 }), { maxLength: 30 }), fc.integer({ min: -1000, max: 1000 }), (ns, k) => {
        const docs = ns.map((n) => JSON.stringify({ n, ip: `10.0.${n & 255}.1` }))
        expect(values(`tag=x json n > ${k}`, docs).map((v) => v.n)).toEqual(ns.filter((n) => n > k))
        expect(values(`tag=x json n<=${k}`, docs).map((v) => v.n)).toEqual(ns.filter((n) => n <= k))
        expect(values(`tag=x json n == ${k}`, docs).map((v) => v.n)).toEqual(ns.filter((n) => n === k))
        expect(values('tag=x json ip ~ 10.0.0.0/20 n', docs).map((v) => v.n)).toEqual(ns.filter((n) => (n & 255) < 16))
      }),
      { numRuns: 50 },
    )
  })

  test('-e reads a value instead of DATA; an entry without it keeps going without values', () => {
    const e = entry('<x/>', { Data: '{ "domain": "gravwell.io" }' })
    expect(values('tag=x json -e Data domain as dd', [e])).toEqual([{ Data: '{ "domain": "gravwell.io" }', dd: 'gravwell.io' }])
    expect(values('tag=x json -e Data domain != "gravwell.io" as dd', [entry('<x/>', { Data: '{ "domain": "gravwell.io" }' })])).toEqual([])
    expect(values('tag=x json -e Nope domain', ['{"domain":"a"}'])).toEqual([{}])
  })

  test('-x expands an array into one entry per element, the rest intact', () => {
    expect(values('tag=x json -x groups groups uid', ['{ "uid": 1, "groups": [17,3] }', '{"uid":2,"groups":[]}', '{"uid":3,"groups":5}'])).toEqual([
      { groups: 17, uid: 1 },
      { groups: 3, uid: 1 },
      { uid: 2 },
      { groups: 5, uid: 3 },
    ])
    expect(values('tag=x json foo.bar | json -x bar', ['{"foo":{"bar":[{"a":1},"s"]}}'])).toEqual([{ bar: '{"a":1}' }, { bar: 's' }])
  })
})
