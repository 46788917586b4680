// wordcloud (gravwell/wiki search/wordcloud/wordcloud.md): words sized by a magnitude.
//   wordcloud <value> [by <key> ...]
// The magnitude is normally keyed (stats ... by k): each key is a word (several keys joined by a space), sized by
// its value, merged over every window of the range asked for (as gauge does). `by` names a subset of the keys: the
// results are condensed again in the renderer, the aggregates of every key sharing those values merged (the stats
// op's own merge: a count is summed, a mean weighted). A plain entry (no stats before) is a word of its own, as in
// gauge. The clients read the words as gauge values ({Name, Magnitude, Min, Max}, Min and Max 0).
// Memory: at most MAX_GROUPS words per answer. Downloads: csv (Name, Magnitude) and json (the array the clients read).
import { quote } from '../lex'
import { type ModuleDef, argError, readFlags } from '../module'
import { gaugeValues, valuesRenderer } from './gauge'
import { MAX_GROUPS, Merged, type RecordSource, collapse, inRange, parseValueRecord, scan } from './records'

/** The records within [from, to) grouped by the values of `keys` alone, their aggregates merged per group. */
async function regroup(src: RecordSource, from: number, to: number, keys: readonly string[]): Promise<Merged[]> {
  const groups = new Map<string, Merged>()
  const out: Merged[] = []
  for await (const line of scan(src)) {
    const row = parseValueRecord(line)
    if (!inRange(row, from, to)) continue
    const sub = { ...row, by: [...keys] }
    const key = JSON.stringify(keys.map((k) => row.values.get(k) ?? null))
    const g = groups.get(key)
    if (g) g.add(sub)
    else if (out.length < MAX_GROUPS) {
      const m = new Merged(row.ts, sub)
      groups.set(key, m)
      out.push(m)
    }
  }
  return out
}

export const wordcloud: ModuleDef = {
  name: 'wordcloud',
  kind: 'render',
  info: 'Shows a keyed value as a word cloud: each key a word sized by the value; `by` condenses again by some of the keys.',
  examples: ['wordcloud count', 'wordcloud count by Hostname'],
  compile(call) {
    const { rest } = readFlags(call, {})
    const magnitude = rest[0]
    if (!magnitude || magnitude.kind !== 'word') throw argError(call, 'expected the name of a value (the size of each word)', magnitude ?? call.end)
    let keys: string[] = []
    if (rest.length > 1) {
      if (rest[1]!.kind !== 'word' || rest[1]!.text !== 'by') throw argError(call, 'expected "by" and the keys to condense by', rest[1])
      keys = rest.slice(2).map((t) => {
        if (t.kind !== 'word') throw argError(call, 'expected the name of a key', t)
        return t.text
      })
      if (keys.length === 0) throw argError(call, 'expected at least one key after "by"', call.end)
    }
    const items = [{ magnitude: magnitude.text }]
    const names = [magnitude.text, ...keys]
    const words = async (src: RecordSource, from: number, to: number) =>
      gaugeValues(keys.length > 0 ? await regroup(src, from, to, keys) : await collapse(src, from, to), items)
    return valuesRenderer({
      name: 'wordcloud',
      text: ['wordcloud', quote(magnitude.text), ...(keys.length > 0 ? ['by', ...keys.map(quote)] : [])].join(' '),
      names,
      values: words,
      csv: { header: ['Name', 'Magnitude'], row: (w) => [w.Name, w.Magnitude] },
    })
  },
}
