// sort (gravwell/wiki search/sort/sort.md): holds every entry that reaches it and passes them on at the end, ordered
// by one value.
//   sort [by <name>] [asc|desc]
// `name` is `time` (the default), `tag`, `src` (any case; also TIMESTAMP, TAG, SRC), or any enumerated value. The
// default order is descending for time and ascending for everything else. Values order as value.ts compareValues
// orders them: numbers (and text that reads as one) as numbers, IPs by their bytes, times and durations by their
// count, everything else by text. Ties keep their order of arrival (the sort is stable); entries that lack the
// value come last, in either direction.
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
          *flush(out) {
            const present = held.filter((h) => h.v !== undefined)
            const missing = held.filter((h) => h.v === undefined)
            present.sort(descending ? (a, b) => compareHeld(b, a) : compareHeld)
            held.length = 0
            let sent = 0
            for (const h of [present, missing].flat()) {
              out(h.e)
              if (++sent % FLUSH_SLICE === 0) yield
            }
          },
        }
      },
    }
  },
}
