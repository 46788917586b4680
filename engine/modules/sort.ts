// sort (gravwell/wiki search/sort/sort.md): holds every entry that reaches it and passes them on at the end, ordered
// by one value.
//   sort [by <name>] [asc|desc]
// `name` is `time` (the default), `tag`, `src` (any case; also TIMESTAMP, TAG, SRC), or any enumerated value. The
// default order is descending for time and ascending for everything else. Values order as value.ts compareValues
// orders them: numbers (and text that reads as one) as numbers, IPs by their bytes, times and durations by their
// count, everything else by text. Ties keep their order of arrival (the sort is stable); entries that lack the
// value come last, in either direction.
// Turns: the flush sorts runs of SORT_RUN entries, one run per step, then merges the runs lazily (a heap of their
// heads), FLUSH_SLICE entries per step, so that a million entries never hold the event loop for one whole sort.
// Memory: at most MAX_SORT_ENTRIES entries and MAX_SORT_BYTES of their data are held; one more ends the search with
// a SearchLimitError naming the bound (sort fewer entries: filter, or count by first).
import { valueOf } from '../entry'
import type { Entry } from '../entry'
import { SearchLimitError } from '../errors'
import { quote } from '../lex'
import { FLUSH_SLICE, type ModuleDef, argError } from '../module'
import { IPValue, type Value, toNumber, valueText } from '../value'

export const MAX_SORT_ENTRIES = 1_000_000
export const MAX_SORT_BYTES = 512 * 1024 * 1024

/** Entries sorted in one step of the flush (a run); the runs are merged afterwards. */
export const SORT_RUN = 4 * FLUSH_SLICE

type Intrinsic = 'time' | 'tag' | 'src'

const INTRINSICS: Record<string, Intrinsic> = { time: 'time', timestamp: 'time', tag: 'tag', src: 'src' }

/** A held entry and its sort key, read once. */
interface Held {
  e: Entry
  /** The value, undefined when the entry lacks it. */
  v: Value | undefined
  /** Its number (null when it reads as none). */
  n: number | null
  /** Its text, read when a comparison needs it. */
  s?: string
}

function compareHeld(a: Held, b: Held): number {
  if (a.v instanceof IPValue && b.v instanceof IPValue) {
    const x = a.v.bytes
    const y = b.v.bytes
    if (x.length !== y.length) return x.length - y.length
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i]! - y[i]!
    return 0
  }
  if (a.n !== null && b.n !== null) return a.n < b.n ? -1 : a.n > b.n ? 1 : 0
  const s = (a.s ??= valueText(a.v))
  const t = (b.s ??= valueText(b.v))
  return s < t ? -1 : s > t ? 1 : 0
}

/**
 * Passes `items` to `out` in the order a stable sort by `compare` gives, as a generator that does a bounded amount
 * of work between yields: each step sorts one run of SORT_RUN items (about SORT_RUN·log2(SORT_RUN) comparisons),
 * then each step of the merge passes on FLUSH_SLICE items (about 2·log2(runs) comparisons each). Ties keep the
 * order of `items`: each run is sorted stably and the merge takes the earlier run's item first.
 */
export function* sortedInSlices<T>(items: readonly T[], compare: (a: T, b: T) => number, out: (item: T) => void): Generator<void> {
  const runs: T[][] = []
  for (let start = 0; start < items.length; start += SORT_RUN) {
    runs.push(items.slice(start, start + SORT_RUN).sort(compare))
    yield
  }
  const next = new Array<number>(runs.length).fill(0)
  // A binary min-heap of the runs that have items left, ordered by their next item (ties: the earlier run first).
  const heap = runs.map((_, r) => r)
  /** Moves the run at `at` down to its place (the hole method: one write per level, no swaps). */
  const siftDown = (at: number) => {
    const r = heap[at]!
    const item = runs[r]![next[r]!]!
    let i = at
    for (;;) {
      let child = 2 * i + 1
      if (child >= heap.length) break
      let c = heap[child]!
      let childItem = runs[c]![next[c]!]!
      if (child + 1 < heap.length) {
        const d = heap[child + 1]!
        const dItem = runs[d]![next[d]!]!
        const k = compare(dItem, childItem)
        if (k < 0 || (k === 0 && d < c)) {
          child++
          c = d
          childItem = dItem
        }
      }
      const k = compare(childItem, item)
      if (!(k < 0 || (k === 0 && c < r))) break
      heap[i] = c
      i = child
    }
    heap[i] = r
  }
  for (let i = (heap.length >> 1) - 1; i >= 0; i--) siftDown(i)
  let sent = 0
  while (heap.length > 0) {
    const r = heap[0]!
    out(runs[r]![next[r]!]!)
    if (++next[r]! === runs[r]!.length) {
      const last = heap.pop()!
      if (heap.length === 0) break
      heap[0] = last
    }
    siftDown(0)
    if (++sent % FLUSH_SLICE === 0) yield
  }
}

export const sort: ModuleDef = {
  name: 'sort',
  kind: 'condensing',
  info: 'Holds the entries and passes them on sorted by a value (time by default, or tag, src, any enumerated value): time descending, others ascending unless asc or desc is given.',
  examples: ['sort by count desc', 'sort by tag', 'sort asc'],
  compile(call) {
    const args = call.args
    let i = 0
    let name = 'time'
    let desc: boolean | undefined
    if (args[i]?.kind === 'word' && args[i]!.text === 'by') {
      const v = args[i + 1]
      if (!v) throw argError(call, '"by" needs the name of a value to sort by', call.end)
      if (v.text === '') throw argError(call, 'the value to sort by needs a name', v)
      name = v.text
      i += 2
    }
    const dir = args[i]
    if (dir?.kind === 'word' && (dir.text === 'asc' || dir.text === 'desc')) {
      desc = dir.text === 'desc'
      i++
    }
    if (i < args.length) {
      const extra = args[i]!
      throw argError(call, i === 0 && extra.kind === 'word' ? `expected "by <value>", "asc" or "desc", found ${JSON.stringify(extra.text)}` : `unexpected ${JSON.stringify(extra.text)}: sort takes "by <value>" and then asc or desc`, extra)
    }
    const intrinsic = INTRINSICS[name.toLowerCase()]
    const descending = desc ?? intrinsic === 'time'
    const key = intrinsic ?? name
    const text = `sort by ${quote(key)} ${descending ? 'desc' : 'asc'}`
    return {
      name: 'sort',
      kind: 'condensing',
      text,
      consumes: intrinsic ? [] : [name],
      produces: [],
      stateless: false,
      stage() {
        const held: Held[] = []
        let bytes = 0
        const read = (e: Entry): Held => {
          if (intrinsic === 'time') return { e, v: e.ts, n: e.ts }
          const v = intrinsic === 'tag' ? e.tag : intrinsic === 'src' ? e.src : valueOf(e, name)
          return { e, v, n: v instanceof IPValue ? null : toNumber(v) }
        }
        return {
          push(e) {
            bytes += e.data.byteLength
            if (held.length >= MAX_SORT_ENTRIES || bytes > MAX_SORT_BYTES)
              throw new SearchLimitError(
                `sort holds at most ${MAX_SORT_ENTRIES} entries and ${MAX_SORT_BYTES / 1024 / 1024} MiB of their data: narrow the search, or condense it first (count by, stats, unique)`,
              )
            held.push(read(e))
          },
          flush(out) {
            // entries without the value last, in either direction, in their order of arrival
            const order = (a: Held, b: Held) =>
              a.v === undefined ? (b.v === undefined ? 0 : 1) : b.v === undefined ? -1 : descending ? compareHeld(b, a) : compareHeld(a, b)
            const all = held.splice(0)
            return sortedInSlices(all, order, (h) => out(h.e))
          },
        }
      },
    }
  },
}
