// unique (gravwell/wiki search/unique/unique.md): passes the first entry of each distinct key and drops the others.
//   unique [-maxtracked <n>] [-maxsize <MB>] [<name>...] [over <duration>]
// The key is the combination of the named values (their text: 80 and "80" are one key), or without names the
// entry's DATA (by a 64-bit hash and its length: two different DATA with the same hash, about one chance in 2^64 per
// pair, would count as one). An entry that lacks one of the named values is dropped (it has no key). With `over`,
// keys are distinct per time window (the windows of the entries' time; entries come in time order, so the keys of a
// window are let go when the next one starts).
// Memory: at most -maxtracked keys (default RunEnv.maxTracked) and -maxsize MB of key text (default
// DEFAULT_MAX_KEY_MB) per window; one more ends the search with a SearchLimitError naming the flag to raise.
// first and last (firstlast.ts) read their keys the same way.
import { type Entry, valueOf } from '../entry'
import { SearchLimitError } from '../errors'
import { quote } from '../lex'
import { type ModuleDef, argError, readFlags } from '../module'
import type { ModuleCall } from '../parse'
import { parseDuration, valueText } from '../value'

export const DEFAULT_MAX_KEY_MB = 256
const MAX_TRACKED_LIMIT = 100_000_000

export interface KeyOptions {
  names: string[]
  /** Keys tracked at most (-maxtracked), or undefined for RunEnv.maxTracked. */
  maxTracked?: number
  /** Bytes of keys (and held entries, for last) at most (-maxsize in MB). */
  maxBytes: number
  /** Window length in ms (`over`), 0 for none. */
  overMs: number
  /** The flags and arguments as the normal form writes them. */
  text: string[]
}

/** Reads `[-maxtracked n] [-maxsize MB] [name...] [over <duration>]` (unique, first, last). */
export function readKeyOptions(call: ModuleCall, allowOver: boolean): KeyOptions {
  const { flags, rest } = readFlags(call, { withValue: ['maxtracked', 'maxsize'] })
  const text: string[] = []
  let maxTracked: number | undefined
  let maxBytes = DEFAULT_MAX_KEY_MB * 1024 * 1024
  const tracked = flags.get('maxtracked')
  if (tracked && tracked !== true) {
    if (!/^\d+$/.test(tracked.text) || Number(tracked.text) < 1 || Number(tracked.text) > MAX_TRACKED_LIMIT)
      throw argError(call, `-maxtracked needs a whole number from 1 to ${MAX_TRACKED_LIMIT}`, tracked)
    maxTracked = Number(tracked.text)
    text.push(`-maxtracked ${maxTracked}`)
  }
  const size = flags.get('maxsize')
  if (size && size !== true) {
    if (!/^\d+$/.test(size.text) || Number(size.text) < 1 || Number(size.text) > 1024 * 1024)
      throw argError(call, '-maxsize needs a whole number of megabytes from 1 to 1048576', size)
    maxBytes = Number(size.text) * 1024 * 1024
    text.push(`-maxsize ${size.text}`)
  }
  const names: string[] = []
  let overMs = 0
  let overText = ''
  for (let i = 0; i < rest.length; i++) {
    const t = rest[i]!
    if (allowOver && t.kind === 'word' && t.text === 'over') {
      const d = rest[i + 1]
      if (!d) throw argError(call, '"over" needs a duration (1h, 5m, 1d)', call.end)
      const ns = parseDuration(d.text)
      if (ns === null || ns < 1_000_000) throw argError(call, `"over" needs a duration of at least 1ms (1h, 5m, 1d), not ${JSON.stringify(d.text)}`, d)
      if (i + 2 < rest.length) throw argError(call, '"over <duration>" comes last', rest[i + 2])
      overMs = Math.floor(ns / 1_000_000)
      overText = d.text
      break
    }
    if (t.text === '') throw argError(call, 'a value name cannot be empty', t)
    if (names.includes(t.text)) throw argError(call, `${JSON.stringify(t.text)} is named twice`, t)
    names.push(t.text)
  }
  text.push(...names.map(quote))
  if (overMs) text.push(`over ${quote(overText)}`)
  return { names, maxTracked, maxBytes, overMs, text }
}

/** The key of an entry: the named values' texts, or its DATA's hash; null when a named value is missing. */
export function keyOf(e: Entry, names: readonly string[]): string | null {
  if (names.length === 0) return `${e.data.byteLength}:${Bun.hash.wyhash(e.data)}`
  if (names.length === 1) {
    const v = valueOf(e, names[0]!)
    return v === undefined ? null : valueText(v)
  }
  const parts: string[] = []
  for (const n of names) {
    const v = valueOf(e, n)
    if (v === undefined) return null
    parts.push(valueText(v))
  }
  return JSON.stringify(parts)
}

/** The set of keys seen, with its bounds. */
export class KeyTracker {
  private bytes = 0
  readonly seen = new Set<string>()
  constructor(
    private readonly module: string,
    private readonly maxTracked: number,
    private readonly maxBytes: number,
  ) {}
  /** True when the key is new (and now tracked). */
  add(key: string): boolean {
    if (this.seen.has(key)) return false
    if (this.seen.size >= this.maxTracked)
      throw new SearchLimitError(`${this.module}: more than ${this.maxTracked} distinct keys (the bound -maxtracked sets): raise -maxtracked, or narrow the search`)
    this.bytes += key.length * 2
    if (this.bytes > this.maxBytes)
      throw new SearchLimitError(`${this.module}: its keys take more than ${this.maxBytes / 1024 / 1024} MB (the bound -maxsize sets): raise -maxsize, or narrow the search`)
    this.seen.add(key)
    return true
  }
  clear(): void {
    this.seen.clear()
    this.bytes = 0
  }
}

export const unique: ModuleDef = {
  name: 'unique',
  kind: 'processing',
  info: 'Passes the first entry of each distinct combination of the named values (without names: of the entry\'s DATA) and drops the rest; `over <duration>` makes keys distinct per time window.',
  examples: ['unique DstPort DstIP', 'unique', 'unique -maxtracked 5000 user over 1h'],
  compile(call) {
    const opts = readKeyOptions(call, true)
    return {
      name: 'unique',
      kind: 'processing',
      text: ['unique', ...opts.text].join(' '),
      consumes: opts.names,
      produces: [],
      stateless: false,
      stage(env) {
        const keys = new KeyTracker('unique', opts.maxTracked ?? env.maxTracked, opts.maxBytes)
        let window = Number.NEGATIVE_INFINITY
        return {
          push(e, out) {
            if (opts.overMs) {
              const w = Math.floor(e.ts / opts.overMs)
              if (w > window) {
                keys.clear()
                window = w
              }
            }
            const key = keyOf(e, opts.names)
            if (key !== null && keys.add(key)) out(e)
          },
        }
      },
    }
  },
}
