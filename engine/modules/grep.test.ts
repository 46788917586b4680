import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { runQuery } from '../testing'

const lines = (n: number) => fc.sample(fc.string({ unit: fc.constantFrom('a', 'b', 'A', 'B', ' ', '*', '_', '-') , maxLength: 12 }), { numRuns: n, seed: 7 })

const wordAt = (s: string, w: string) => {
  const isWord = (c: string | undefined) => c !== undefined && /[A-Za-z0-9_]/.test(c)
  for (let i = s.indexOf(w); i >= 0; i = s.indexOf(w, i + 1)) if (!isWord(s[i - 1]) && !isWord(s[i + w.length])) return true
  return false
}

describe('grep', () => {
  const data = lines(400)
  const grep = (q: string) => runQuery(`tag=t ${q}`, data.map((d) => ({ data: d }))).out.map((e) => Buffer.from(e.data).toString())

  test.each([
    ['grep ab', (s: string) => s.includes('ab')],
    ['grep -v ab', (s: string) => !s.includes('ab')],
    ['grep -i ab', (s: string) => s.toLowerCase().includes('ab')],
    ['grep ab ba', (s: string) => s.includes('ab') || s.includes('ba')],
    ['grep -s ab ba', (s: string) => s.includes('ab') && s.includes('ba')],
    ['grep -v -s ab ba', (s: string) => !(s.includes('ab') && s.includes('ba'))],
    ['grep a*b', (s: string) => /a.*b/s.test(s)],
    ['grep -simple a*b', (s: string) => s.includes('a*b')],
    ['grep "a\\*b"', (s: string) => s.includes('a*b')],
    ['grep -w ab', (s: string) => wordAt(s, 'ab')],
  ])('%s passes what a plain loop passes', (q, keep) => {
    expect(grep(q)).toEqual(data.filter(keep))
  })

  test('-e reads a value instead of DATA; an entry without it does not pass', () => {
    const { out } = runQuery('tag=t regex "^(?P<k>[a-z]+)=" | grep -e k ab', [{ data: 'ab=1' }, { data: 'cd=ab' }, { data: 'xx' }])
    expect(out.map((e) => Buffer.from(e.data).toString())).toEqual(['ab=1'])
  })

  test('printf escapes match binary bytes', () => {
    const { out } = runQuery('tag=t grep "\\x01\\x02"', [{ data: Uint8Array.of(0, 1, 2, 3) }, { data: Uint8Array.of(1, 3, 2) }])
    expect(out).toHaveLength(1)
  })
})
