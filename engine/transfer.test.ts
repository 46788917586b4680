import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import type { Entry } from './entry'
import { TransferReader, TransferWriter, readEntryOut, writeEntryOut } from './transfer'
import { DurationValue, IPValue, TimeValue, type Value, parseIP } from './value'

/** Strings of every kind: ASCII, any code point, and raw UTF-16 units (lone surrogates). */
const anyString = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }))
const anyNumber = fc.oneof(fc.double(), fc.integer(), fc.maxSafeInteger(), fc.constantFrom(-0, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 2 ** 53, -(2 ** 60)))
const anyIP = fc.oneof(fc.ipV4(), fc.ipV6()).map((s) => parseIP(s)!)
const anyValue: fc.Arbitrary<Value> = fc.oneof(
  anyString,
  anyNumber,
  fc.boolean(),
  anyIP,
  anyNumber.map((n) => new TimeValue(n)),
  anyNumber.map((n) => new DurationValue(n)),
  fc.uint8Array({ maxLength: 300 }),
  fc.uint8Array({ minLength: 4, maxLength: 4 }).map((b) => new IPValue('odd text', b)),
)
const anyValues = fc.uniqueArray(fc.tuple(anyString, anyValue), { selector: ([k]) => k, maxLength: 12 }).map((kv) => new Map(kv))

/** A value as the test compares it: its class and its content (Object.is semantics for numbers). */
function shape(v: Value): unknown {
  if (typeof v === 'number') return { number: Object.is(v, -0) ? '-0' : String(v) }
  if (v instanceof IPValue) return { ip: v.text, bytes: [...v.bytes] }
  if (v instanceof TimeValue) return { time: String(v.ms), neg0: Object.is(v.ms, -0) }
  if (v instanceof DurationValue) return { duration: String(v.ns), neg0: Object.is(v.ns, -0) }
  if (v instanceof Uint8Array) return { bytes: [...v] }
  return { [typeof v]: v }
}
const shapes = (m: Map<string, Value>) => [...m].map(([k, v]) => [k, shape(v)])

describe('transfer encoding', () => {
  test('values round-trip with their types, content and order, many maps in one buffer', () => {
    fc.assert(
      fc.property(fc.array(anyValues, { maxLength: 20 }), fc.integer({ min: 1, max: 64 }), (maps, initial) => {
        const w = new TransferWriter(initial)
        for (const m of maps) w.values(m)
        const r = new TransferReader(w.finish())
        const back = maps.map(() => r.values())
        expect(r.more).toBe(false)
        expect(back.map(shapes)).toEqual(maps.map(shapes))
        for (let i = 0; i < maps.length; i++) for (const [k, v] of maps[i]!) expect(back[i]!.get(k)!.constructor).toBe(v.constructor)
      }),
      { numRuns: 300 },
    )
  })

  test('integers up to 2^53 and strings round-trip as themselves', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.maxSafeNat(), anyString)), (items) => {
        const w = new TransferWriter(1)
        for (const [n, s] of items) {
          w.uint(n)
          w.string(s)
        }
        const r = new TransferReader(w.finish())
        expect(items.map(() => [r.uint(), r.string()])).toEqual(items)
      }),
    )
  })

  test('entries out of a stage: what changed of TS, TAG, SRC and DATA comes back, the rest from the entry they came from', () => {
    const anyBase = fc.record({ ts: anyNumber, tag: anyString, src: anyString, data: fc.uint8Array({ maxLength: 100 }) })
    fc.assert(
      fc.property(
        fc.array(fc.tuple(anyBase, fc.record({ ts: fc.option(anyNumber), tag: fc.option(anyString), src: fc.option(anyString), data: fc.option(fc.uint8Array({ maxLength: 100 })) }), anyValues), { maxLength: 10 }),
        (items) => {
          const w = new TransferWriter(16)
          const outs: Entry[] = items.map(([base, change, values], i) => {
            const e: Entry = { ts: change.ts ?? base.ts, tag: change.tag ?? base.tag, src: change.src ?? base.src, data: change.data ?? base.data, values }
            writeEntryOut(w, i, e, base)
            return e
          })
          const r = new TransferReader(w.finish())
          for (let i = 0; i < items.length; i++) {
            const { index, entry } = readEntryOut(r, (k) => items[k]![0])
            expect(index).toBe(i)
            const want = outs[i]!
            expect({ ts: Object.is(entry.ts, -0) ? '-0' : String(entry.ts), tag: entry.tag, src: entry.src, data: [...entry.data], values: shapes(entry.values) }).toEqual({
              ts: Object.is(want.ts, -0) ? '-0' : String(want.ts),
              tag: want.tag,
              src: want.src,
              data: [...want.data],
              values: shapes(want.values),
            })
          }
          expect(r.more).toBe(false)
        },
      ),
      { numRuns: 200 },
    )
  })

  test('a truncated or corrupt buffer is an error, not a wrong value', () => {
    const w = new TransferWriter()
    w.values(new Map<string, Value>([['a', 'text'], ['b', 1.5]]))
    const full = w.finish()
    for (let n = 0; n < full.byteLength; n++) expect(() => new TransferReader(full.subarray(0, n)).values()).toThrow(/transfer/)
    expect(() => new TransferReader(Uint8Array.of(1, 0, 4, 0x61, 0x61, 99)).values()).toThrow('unknown value type 99')
    expect(() => new TransferReader(Uint8Array.of(1, 5, 2)).values()).toThrow('a name index points nowhere')
  })
})
