import { describe, expect, test } from 'bun:test'
import { valueText } from '../value'
import { runQuery } from '../testing'

const methods = ['GET', 'POST', 'PUT']
const lines = Array.from({ length: 300 }, (_, i) => `${i % 7 === 0 ? 'noise ' : ''}${methods[i % 3]} /p/${i % 11} took ${(i * 37) % 500} ms`)

describe('regex', () => {
  test('named captures become values; entries that do not match are dropped', () => {
    const { out } = runQuery('tag=t regex "^(?P<method>[A-Z]+) (?P<path>\\S+) took (?P<ms>\\d+) ms"', lines.map((data) => ({ data })))
    const expected = lines.flatMap((l) => {
      const m = /^([A-Z]+) (\S+) took (\d+) ms/.exec(l)
      return m ? [[m[1], m[2], m[3]]] : []
    })
    expect(out.map((e) => ['method', 'path', 'ms'].map((k) => valueText(e.values.get(k))))).toEqual(expected)
  })

  test('inline filters on captures, numbers compared as numbers, and `as` renames', () => {
    const { out } = runQuery('tag=t regex "took (?P<ms>\\d+) ms" ms > 250 as took', lines.map((data) => ({ data })))
    const expected = lines.filter((l) => Number(/took (\d+) ms/.exec(l)![1]) > 250)
    expect(out.map((e) => Buffer.from(e.data).toString())).toEqual(expected)
    expect(out.every((e) => Number(e.values.get('took')) > 250 && !e.values.has('ms'))).toBe(true)
  })

  test('-v passes what does not match, -p passes everything and sets values where it matches', () => {
    expect(runQuery('tag=t regex -v ^noise', lines.map((data) => ({ data }))).out).toHaveLength(lines.filter((l) => !l.startsWith('noise')).length)
    const p = runQuery('tag=t regex -p "^(?P<m>GET)"', lines.map((data) => ({ data }))).out
    expect(p).toHaveLength(lines.length)
    expect(p.filter((e) => e.values.has('m'))).toHaveLength(lines.filter((l) => l.startsWith('GET')).length)
  })

  test('text records carry the values as Enumerated', () => {
    const { records } = runQuery('tag=t regex "(?P<m>GET)"', [{ data: 'GET /', ts: Date.parse('2026-01-01T00:00:00Z') }])
    expect(JSON.parse(records[0]!)).toEqual({ TS: '2026-01-01T00:00:00.000Z', Tag: 'test', SRC: '', Data: Buffer.from('GET /').toString('base64'), Enumerated: [{ Name: 'm', ValueStr: 'GET' }] })
  })
})
