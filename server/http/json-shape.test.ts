// jsonShapeProblem finds the end of each string with indexOf (a long base64 field is one search, not a step per
// character): the answer must be the same as the plain character walk's on any text, valid JSON or not.
import { expect, test } from 'bun:test'
import { jsonShapeProblem, type ShapeProblem } from './json-shape'

/** The walk as it was: one character at a time, a backslash skipping the next one. */
function byCharacter(text: string, maxDepth: number, maxValues: number): ShapeProblem {
  const kinds = new Uint8Array(maxDepth + 2)
  const n = text.length
  let depth = 0
  let values = 0
  let prev = 0
  let i = 0
  while (i < n) {
    const c = text.charCodeAt(i)
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
      i++
      continue
    }
    if (c === 0x22) {
      const isKey = kinds[depth] === 1 && (prev === 0x7b || prev === 0x2c)
      if (!isKey && ++values > maxValues) return { problem: 'values' }
      i++
      while (i < n) {
        const d = text.charCodeAt(i)
        if (d === 0x5c) i += 2
        else if (d === 0x22) {
          i++
          break
        } else i++
      }
      prev = 0x22
      continue
    }
    if (c === 0x7b || c === 0x5b) {
      if (++depth > maxDepth) return { problem: 'depth' }
      if (++values > maxValues) return { problem: 'values' }
      kinds[depth] = c === 0x7b ? 1 : 2
      prev = c
      i++
      continue
    }
    if (c === 0x7d || c === 0x5d) {
      if (depth > 0) depth--
      prev = c
      i++
      continue
    }
    if (c === 0x2c || c === 0x3a) {
      prev = c
      i++
      continue
    }
    if (++values > maxValues) return { problem: 'values' }
    while (i < n) {
      const d = text.charCodeAt(i)
      if (d === 0x2c || d === 0x5d || d === 0x7d || d === 0x3a || d === 0x20 || d === 0x0a || d === 0x0d || d === 0x09) break
      i++
    }
    prev = 0x30
  }
  return undefined
}

test('the same answer as the character walk on generated text, escapes and unclosed strings included', () => {
  // A fixed generator (no Math.random): the same texts on every run.
  let x = 0x2545f491
  const next = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0) >>> 8
  const alphabet = ['"', '\\', '\\', '{', '}', '[', ']', ',', ':', ' ', 'a', '1', '"', '\\"', '\\\\']
  let differing = 0
  let problems = 0
  for (let k = 0; k < 20_000; k++) {
    const len = next() % 40
    let text = ''
    for (let j = 0; j < len; j++) text += alphabet[next() % alphabet.length]
    for (const [depth, values] of [[3, 5], [64, 1_000]] as const) {
      const want = byCharacter(text, depth, values)
      if (want) problems++
      if (JSON.stringify(jsonShapeProblem(text, depth, values)) !== JSON.stringify(want)) differing++
    }
  }
  expect(differing).toBe(0)
  // The texts reach both answers, so the comparison covers refusals as well as passes.
  expect(problems).toBeGreaterThan(1_000)
})

test('strings with escaped quotes and backslash runs end where JSON.parse says they end', () => {
  for (const value of ['a"b', 'a\\', '\\"', 'x'.repeat(5000) + '\\\\"', '"'.repeat(9), '[[[[']) {
    const text = JSON.stringify([value, [[{ k: value }]]])
    expect(jsonShapeProblem(text, 3, 10)).toEqual({ problem: 'depth' })
    expect(jsonShapeProblem(text, 4, 10)).toBeUndefined()
  }
})
