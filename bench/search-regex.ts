// Matching cost of the search stages (server/search/runner.ts Pipeline), in process, no HTTP: see bench/README.md.
//
//   bun run bench/search-regex.ts [entries] [rounds]      (defaults: 200000 entries of 1 KiB, 3 rounds)
//
// On the entries bench/search.ts ingests (1 KiB of words, 1 in 100 holding NEEDLE-7f3a), each round times for every
// pattern below, over every entry:
//   grep            Buffer.includes of the needle's bytes (the grep stage, unchanged)
//   RegExp          TextDecoder + RegExp.test: the regex stage before (a backtracking engine)
//   RE2             compileRegex(pattern).test(bytes): the regex stage now (re2js, linear time, on the UTF-8 bytes)
// then, once: one pathological entry (n a's and a b against `(a+)+$`) with both engines, and the worst single
// entries RE2 meets (2.5 MiB of letters against patterns RE2 cannot reduce to a literal scan).
// Medians of the rounds are printed; entries/s and MB/s (10^6 bytes of entry data per second).
import { MATCH_BATCH } from '../server/search/runner'
import { MatchPool } from '../server/search/match'
import { compileRegex } from '../engine/regex'
import { NEEDLE, entryText } from './search-texts'

const count = Number(process.argv[2] ?? 200_000)
const rounds = Number(process.argv[3] ?? 3)
const ENTRY_BYTES = 1024

const text = (seed: number, needle: boolean) => entryText(seed, needle, ENTRY_BYTES)

const entries = Array.from({ length: count }, (_, i) => Buffer.from(text(i, i % 100 === 0)))
const bytes = entries.reduce((n, e) => n + e.byteLength, 0)
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

function time(match: (d: Buffer) => boolean): { ms: number; hits: number } {
  const times: number[] = []
  let hits = 0
  for (let r = 0; r < rounds; r++) {
    const start = performance.now()
    hits = 0
    for (const e of entries) if (match(e)) hits++
    times.push(performance.now() - start)
  }
  return { ms: median(times), hits }
}

/** The regex stage as searches run it now: batches of MATCH_BATCH entries matched on a worker thread (match.ts). */
async function timeOnWorker(pattern: string): Promise<{ ms: number; hits: number }> {
  const pool = new MatchPool(1, 600_000)
  const stages = [{ op: 'regex' as const, pattern }]
  await pool.run(stages, [Buffer.from('warm up')]) // start the worker and compile: not what a batch costs
  const times: number[] = []
  let hits = 0
  for (let r = 0; r < rounds; r++) {
    const start = performance.now()
    hits = 0
    for (let i = 0; i < entries.length; i += MATCH_BATCH) for (const n of await pool.run(stages, entries.slice(i, i + MATCH_BATCH))) if (n === 1) hits++
    times.push(performance.now() - start)
  }
  pool.close()
  return { ms: median(times), hits }
}

const row = (name: string, { ms, hits }: { ms: number; hits: number }) =>
  console.log(`| ${name} | ${hits} | ${ms.toFixed(0)} ms | ${Math.round((count / ms) * 1000).toLocaleString('en')} | ${(bytes / ms / 1000).toFixed(0)} |`)

console.log(`${count} entries of ${ENTRY_BYTES} bytes, ${rounds} rounds (medians), Bun ${Bun.version}\n`)
console.log('| stage | hits | time | entries/s | MB/s |\n|---|---|---|---|---|')
const needle = Buffer.from(NEEDLE)
row(`grep ${NEEDLE}`, time((d) => d.includes(needle)))
const decoder = new TextDecoder()
for (const pattern of [NEEDLE, 'NEEDLE-[0-9a-f]{4}', '(?i)needle-7F3A', '\\b[a-z]{4}\\d \\w+\\n', '(a+)+$', '^[0-9a-z]+ [0-9a-z]+$']) {
  const js = new RegExp(pattern.replace('(?i)', ''), pattern.startsWith('(?i)') ? 'i' : '')
  const re2 = compileRegex(pattern)
  row(`regex \`${pattern}\`: RegExp (before)`, time((d) => js.test(decoder.decode(d))))
  row(`regex \`${pattern}\`: RE2 on this thread`, time((d) => re2.test(d)))
  row(`regex \`${pattern}\`: RE2 on a worker, batches of ${MATCH_BATCH} (now)`, await timeOnWorker(pattern))
}

console.log('\nOne pathological entry, `(a+)+$` on n a\'s and a b:\n\n| n | RegExp | RE2 |\n|---|---|---|')
for (const n of [16, 20, 24, 26, 30, 10_000]) {
  const entry = Buffer.from(`${'a'.repeat(n)}b`)
  const js = /(a+)+$/
  let jsMs = 'not run (exponential: ~2^n steps)'
  if (n <= 26) {
    const start = performance.now()
    js.test(entry.toString())
    jsMs = `${(performance.now() - start).toFixed(1)} ms`
  }
  const re2 = compileRegex('(a+)+$')
  const start = performance.now()
  re2.test(entry)
  console.log(`| ${n} | ${jsMs} | ${(performance.now() - start).toFixed(2)} ms |`)
}

console.log('\nThe worst single entries for RE2: 2.5 MiB of letters, no match:\n\n| pattern | RE2 |\n|---|---|')
const huge = Buffer.alloc(5 << 19)
for (let i = 0; i < huge.length; i++) huge[i] = 97 + ((i * 7919) % 26)
for (const pattern of ['needle', '[a-q][^u-z]{13}x', '[a-q][^u-z]{50}[0-9]', '[a-z]{500}[0-9]', '[a-z]{1000}[0-9]', '(?:[a-m][n-z]|[n-z][a-m]){200}[0-9]']) {
  const re2 = compileRegex(pattern)
  const start = performance.now()
  const hit = re2.test(huge)
  console.log(`| \`${pattern}\` | ${(performance.now() - start).toFixed(0)} ms${hit ? ' (match)' : ''} |`)
}

// Named extraction (docs/query-language.md): the access-log pattern's six captures from every line of
// bench/engine-data.ts's access log, by re2js (the regex module's extraction before) and by LazyRegex.exec (now: the
// linear-time RegExp path where the pattern allows it, engine/regex.ts fastExtractor), in the same rounds.
{
  const { ACCESS_PATTERN, accessLine } = await import('./engine-data')
  const { LazyRegex } = await import('../engine/regex')
  const lines = Array.from({ length: count }, (_, i) => Buffer.from(accessLine(i)))
  const lineBytes = lines.reduce((n, e) => n + e.byteLength, 0)
  const re2 = compileRegex(ACCESS_PATTERN)
  const lazy = new LazyRegex(ACCESS_PATTERN, 0)
  const ways: Record<string, (d: Buffer) => number> = {
    're2js matcher + groups (before)': (d) => {
      const m = re2.matcher(d)
      if (!m.find()) return 0
      for (let g = 1; g <= 6; g++) m.group(g)
      return 1
    },
    'LazyRegex.exec (now)': (d) => (lazy.exec(d) === null ? 0 : 1),
  }
  const times: Record<string, number[]> = {}
  for (let r = 0; r < rounds + 1; r++)
    for (const [name, f] of Object.entries(ways)) {
      const start = performance.now()
      let hits = 0
      for (const d of lines) hits += f(d)
      if (hits !== count) throw new Error(`${name}: ${hits} matches of ${count}`)
      if (r > 0) (times[name] ??= []).push(performance.now() - start) // round 0 warms up
    }
  console.log(`\nNamed extraction, access-log pattern, ${count} lines (${(lineBytes / 1e6).toFixed(0)} MB), medians of ${rounds} rounds after a warm-up:\n\n| way | time | MB/s |\n|---|---|---|`)
  for (const [name, xs] of Object.entries(times)) {
    const ms = median(xs)
    console.log(`| ${name} | ${ms.toFixed(0)} ms | ${(lineBytes / ms / 1000).toFixed(0)} |`)
  }
}
