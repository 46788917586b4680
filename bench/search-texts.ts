// The entry texts of the search benchmarks (bench/search.ts ingests them, bench/search-regex.ts matches them):
// words from a small alphabet with a line break now and then, `bytes` long, deterministic per seed; a needle entry
// starts with NEEDLE.
export const NEEDLE = 'NEEDLE-7f3a'

export function entryText(seed: number, needle: boolean, bytes: number): string {
  let x = seed * 2654435761 + 1
  let s = needle ? `${NEEDLE} ` : ''
  while (s.length < bytes) {
    x = (x * 1103515245 + 12345) >>> 0
    s += `${(x % 100000).toString(36)}${x % 7 === 0 ? '\n' : ' '}`
  }
  return s.slice(0, bytes)
}
