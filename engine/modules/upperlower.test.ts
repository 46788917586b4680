import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { IPValue } from '../value'
import { entry, normal, refusedAt, run, values } from './extractions.testkit'

describe('upper and lower', () => {
  test.each([
    ['tag=x upper', 'tag=x upper'],
    ['tag=x lower  a "b c"', 'tag=x lower a "b c"'],
  ])('%s → %s', (q, expected) => {
    expect(normal(q)).toBe(expected)
    expect(normal(expected)).toBe(expected)
  })
  test('an empty name is refused', () => refusedAt('tag=x upper a ""', 14))

  test('values and DATA change as String.prototype.toUpperCase/toLowerCase change them', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 20 }), fc.string({ maxLength: 10 }), (s, d) => {
        expect(values('tag=x upper v', [entry('d', { v: s })])).toEqual([{ v: s.toUpperCase() }])
        expect(values('tag=x lower v', [entry('d', { v: s })])).toEqual([{ v: s.toLowerCase() }])
        const [e] = run('tag=x upper', [entry(d)])
        expect(new TextDecoder().decode(e!.data)).toBe(new TextDecoder().decode(new TextEncoder().encode(d)).toUpperCase())
      }),
    )
  })

  test('typed values and missing ones stay; bytes that are no UTF-8 change only their ASCII letters', () => {
    const ip = new IPValue('10.0.0.1', Uint8Array.of(10, 0, 0, 1))
    expect(values('tag=x upper n ip nope', [entry('d', { n: 5, ip })])).toEqual([{ n: 5, ip }])
    const [e] = run('tag=x lower', [entry(Uint8Array.of(0x41, 0xff, 0x42, 0xc3))])
    expect([...e!.data]).toEqual([0x61, 0xff, 0x62, 0xc3])
    const [f] = run('tag=x upper b', [entry('d', { b: new TextEncoder().encode('straße') })])
    expect(new TextDecoder().decode(f!.values.get('b') as Uint8Array)).toBe('STRASSE')
  })
})
