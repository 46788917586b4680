// server/runtime/lazy-numeric.ts against Elysia's own t.Integer and t.Numeric: the same schema, and the same decoding (value
// or error) for every input, under a range of options; and it is what `t` gives once the app is imported.
import { describe, expect, test } from 'bun:test'
import { t } from 'elysia'
import { Value } from '@sinclair/typebox/value'
import { elysiaInteger, elysiaNumeric, lazyInteger, lazyNumeric } from './lazy-numeric'

const OPTIONS = [undefined, {}, { minimum: 1 }, { minimum: 0, maximum: 10 }, { exclusiveMinimum: 0 }, { multipleOf: 5 }, { description: 'an id', default: 3 }]
const INPUTS: unknown[] = [0, 1, 5, 10, 11, -1, 2.5, '0', '1', '5', '12', '-3', '2.5', '1e3', '', ' ', 'abc', 'NaN', 'Infinity', null, true, [], {}, undefined]

/** The decoded value, or the error's class and message. */
function decode(schema: Parameters<typeof Value.Decode>[0], input: unknown) {
  try {
    return { value: Value.Decode(schema, input) }
  } catch (e) {
    return { error: `${(e as Error).constructor.name}: ${(e as Error).message}` }
  }
}

describe('lazily compiled t.Integer and t.Numeric', () => {
  for (const [name, ours, theirs] of [
    ['Integer', lazyInteger, elysiaInteger],
    ['Numeric', lazyNumeric, elysiaNumeric],
  ] as const)
    test(`${name}: the same schema and the same decoding as Elysia's`, () => {
      for (const options of OPTIONS) {
        const a = ours(options as never)
        const b = theirs(options as never)
        expect(JSON.stringify(a)).toBe(JSON.stringify(b))
        expect(Object.getOwnPropertySymbols(a).map(String)).toEqual(Object.getOwnPropertySymbols(b).map(String))
        for (const input of INPUTS) expect([options, input, decode(a, input)]).toEqual([options, input, decode(b, input)])
      }
    })

  test('the app uses them: t.Integer and t.Numeric are the lazy ones once server/app.ts is imported', async () => {
    await import('../app')
    expect(t.Integer as unknown).toBe(lazyInteger)
    expect(t.Numeric as unknown).toBe(lazyNumeric)
  })
})
