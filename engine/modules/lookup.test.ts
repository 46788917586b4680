import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import type { Entry } from '../entry'
import { QueryError } from '../errors'
import type { RunEnv } from '../module'
import { compileQueryNow } from '../query'
import type { Value } from '../value'
import { testEnv } from '../testing'
import { refusedAt, run } from './condensing.testkit'
import { parseCsv } from './lookup'

const encoder = new TextEncoder()
const envWith = (tables: Record<string, string>): RunEnv => testEnv({ resources: new Map(Object.entries(tables).map(([k, v]) => [k, encoder.encode(v)])) })

const entry = (values: Record<string, Value>): Entry => ({ ts: 0, tag: 'web', src: '', data: new Uint8Array(0), values: new Map(Object.entries(values)) })

/** RFC 4180 writing, done here apart from the parser: a field is quoted when it holds a comma, a quote or a line break. */
const csvField = (s: string) => (/[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s)
const csvOf = (rows: string[][], eol: string) => rows.map((r) => r.map(csvField).join(',')).join(eol) + eol

const MACS = 'mac,hostname\n40:b0:fa:d7:af:01,mobile-device-1\n64:bc:0c:87:bc:71,desktop-1\n'
const PLACES = 'name,lat,long\nAlbuquerque,35.122,-106.553\n"Santa Fe",35.6682,-105.96\nSacramento,38.527,-121.347\n'

describe('lookup: CSV', () => {
  test('parses what an RFC 4180 writer writes (quotes, commas, line breaks, CRLF or LF)', () => {
    const field = fc.string({ unit: fc.constantFrom('a', 'b', ',', '"', '\n', '\r\n', ' ', 'é'), maxLength: 8 })
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.array(fc.array(field, { minLength: 4, maxLength: 4 }), { minLength: 1, maxLength: 10 }), fc.constantFrom('\n', '\r\n'), (width, raw, eol) => {
        // A row of one empty field is a blank line, which readers skip: give each row a first field.
        const rows = raw.map((r) => [`k${r[0]}`, ...r.slice(1, width)])
        expect(parseCsv(csvOf(rows, eol))).toEqual(rows)
      }),
      { numRuns: 300 },
    )
  })

  test('a last line without its line end, and a byte order mark', () => {
    expect(parseCsv('\ufeffa,b\n1,2')).toEqual([['a', 'b'], ['1', '2']])
    expect(parseCsv('a\n\n"x ""y"""\n')).toEqual([['a'], ['x "y"']])
  })
})

describe('lookup: joining', () => {
  test('values set from the matching row, as a Map join over the same rows gives', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(fc.stringMatching(/^[a-z]{1,3}$/), fc.integer({ min: 0, max: 99 })), { selector: ([k]) => k, maxLength: 20 }),
        fc.array(fc.option(fc.stringMatching(/^[a-z]{1,3}$/), { nil: undefined }), { maxLength: 40 }),
        (table, keys) => {
          const env = envWith({ t: csvOf([['key', 'n'], ...table.map(([k, n]) => [k, String(n)])], '\n') })
          const byKey = new Map(table.map(([k, n]) => [k, String(n)]))
          const entries = () => keys.map((k) => entry(k === undefined ? {} : { k }))
          // Plain: every entry passes; matched ones get n as `num`.
          expect(run('lookup -r t k key n as num', entries(), env).map((e) => e.values.get('num'))).toEqual(keys.map((k) => (k === undefined ? undefined : byKey.get(k))))
          // -s: only the matched ones.
          expect(run('lookup -s -r t k key (n)', entries(), env).map((e) => e.values.get('k'))).toEqual(keys.filter((k) => k !== undefined && byKey.has(k)))
          // -v: only the unmatched ones (with the ones that lack k); -v -s: without those.
          expect(run('lookup -v -r t k key ()', entries(), env).map((e) => e.values.get('k'))).toEqual(keys.filter((k) => k === undefined || !byKey.has(k)))
          expect(run('lookup -v -s -r t k key', entries(), env).map((e) => e.values.get('k'))).toEqual(keys.filter((k) => k !== undefined && !byKey.has(k)))
        },
      ),
      { numRuns: 200 },
    )
  })

  test('the wiki\'s examples: one column, several columns, vectored matches', () => {
    const env = envWith({ macresolution: MACS, places: PLACES, pairs: 'a,b,c\n1,x,first\n1,y,second\n1,x,shadowed\n' })
    const [mac] = run('lookup -r macresolution SrcMAC mac hostname as devicename', [entry({ SrcMAC: '64:bc:0c:87:bc:71' })], env)
    expect(mac!.values.get('devicename')).toBe('desktop-1')
    const [city] = run('lookup -r places City name (lat long as lon)', [entry({ City: 'Santa Fe' })], env)
    expect([...city!.values]).toEqual([['City', 'Santa Fe'], ['lat', '35.6682'], ['lon', '-105.96']])
    const got = run('lookup -r pairs [p q] [a b] (c)', [entry({ p: 1, q: 'y' }), entry({ p: 1, q: 'x' }), entry({ p: 2, q: 'x' })], env)
    expect(got.map((e) => e.values.get('c'))).toEqual(['second', 'first', undefined])
  })

  test('the normal form', () => {
    expect(compileQueryNow('tag=web lookup -r places City  name (lat long as lon)').text).toBe('tag=web lookup -r places City name (lat long as lon)')
    expect(compileQueryNow('tag=web lookup -v -s -r t [a b] [x y] ()').text).toBe('tag=web lookup -v -s -r t [a b] [x y] ()')
    expect(compileQueryNow('tag=web lookup -r t a b c').modules[0]!.needs).toEqual({ resources: ['t'] })
  })

  test.each([
    ['tag=web lookup a b c', 15, 'needs a resource'],
    ['tag=web lookup -r', 17, '-r needs a value'],
    ['tag=web lookup -r t a', 21, 'expected the columns to match'],
    ['tag=web lookup -r t a b', 23, 'expected the column to extract'],
    ['tag=web lookup -r t [a b] c d', 26, '2 values to match but 1 column'],
    ['tag=web lookup -r t [a b c d', 28, 'expected "]"'],
    ['tag=web lookup -r t a b (c', 26, 'expected ")"'],
    ['tag=web lookup -r t a b ()', 24, 'nothing to extract'],
    ['tag=web lookup -r t a b c as', 28, '"as" needs a name'],
    ['tag=web lookup -r t a b c d', 26, 'unexpected "d"'],
    ['tag=web lookup -r t a b (c d as c)', 25, '"c" is set twice'],
  ])('%j is refused at %d', (query, position, reason) => {
    expect(refusedAt(query, position)).toContain(reason)
  })

  test('a column the table lacks is refused when the stage is made, at the column\'s position', () => {
    const q = compileQueryNow('tag=web lookup -r places City name (lat altitude)')
    let error: unknown
    try {
      q.modules[0]!.stage(envWith({ places: PLACES }))
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(QueryError)
    expect((error as QueryError).reason).toBe('the resource "places" has no column "altitude" (its columns: name, lat, long)')
    expect((error as QueryError).position).toBe(40)
    expect(() => q.modules[0]!.stage(envWith({ places: '' }))).toThrow('is empty')
  })
})
