// TextInterner answers exactly what decoding the bytes answers, whether it finds a text again, collides, or has
// turned itself off.
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { TextInterner, utf8Text } from './entry'

/** Byte strings drawn from a small pool (so they repeat) and fresh ones, ASCII and not, up to past the kept length. */
const texts = fc.array(fc.oneof(fc.constantFrom('web-01', 'web-02', 'GET', 'é', '', 'x'.repeat(64), 'y'.repeat(65)), fc.string({ maxLength: 80 }), fc.string({ unit: 'binary', maxLength: 20 })), { minLength: 1, maxLength: 300 })

describe('TextInterner', () => {
  test('latin1 and utf8 give what Buffer#toString and utf8Text give, in any order of repeats', () => {
    fc.assert(
      fc.property(texts, (list) => {
        const joined = Buffer.concat(list.map((t) => Buffer.from(t)))
        const interner = new TextInterner()
        let at = 0
        for (const t of list) {
          const n = Buffer.byteLength(t)
          expect(interner.utf8(joined, at, at + n)).toBe(utf8Text(joined, at, at + n))
          expect(interner.latin1(joined, at, at + n)).toBe(joined.toString('latin1', at, at + n))
          at += n
        }
      }),
      { numRuns: 100 },
    )
  })

  test('texts that collide in a slot are told apart by their bytes', () => {
    const interner = new TextInterner()
    const words = Array.from({ length: 5000 }, (_, i) => `k${i % 2500}`)
    const b = Buffer.from(words.join(''))
    let at = 0
    for (const w of words) {
      expect(interner.latin1(b, at, at + w.length)).toBe(w)
      at += w.length
    }
  })

  test('values that never repeat turn it off, and its answers stay right', () => {
    const interner = new TextInterner()
    const words = Array.from({ length: 20_000 }, (_, i) => `req-${i.toString(36)}`)
    const b = Buffer.from(words.join(''))
    let at = 0
    for (const w of words) {
      expect(interner.latin1(b, at, at + w.length)).toBe(w)
      at += w.length
    }
    expect((interner as unknown as { off: boolean }).off).toBe(true)
    const repeating = new TextInterner()
    const same = Buffer.from('web-01'.repeat(10_000))
    for (let i = 0; i < 10_000; i++) expect(repeating.latin1(same, i * 6, i * 6 + 6)).toBe('web-01')
    expect((repeating as unknown as { off: boolean }).off).toBe(false)
  })
})
