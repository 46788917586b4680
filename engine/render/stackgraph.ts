// stackgraph (gravwell/wiki search/stackgraph/stackgraph.md): horizontal bars made of stacked parts.
//   stackgraph <bar> <part> <magnitude>
// Each distinct value of <bar> is a bar; each value of <part> within it a part of size <magnitude>. A request for a
// time range merges, per key, the aggregates of every window within it (as table does); bars come in the order their
// first record came, parts likewise.
// Downloads: csv (Key, Label, Value) and json (the array the clients read).
import { valueOf } from '../entry'
import { quote } from '../lex'
import { type ModuleDef, argError, readFlags } from '../module'
import { csvLine } from './csv'
import { type Merged, type RecordSource, cellText, collapse, valueRecord } from './records'
import { type CompiledRenderer, passAll } from './renderer'

export interface StackGraphSet {
  Key: string
  Values: { Label: string; Value: number }[]
}

export function stackSets(rows: readonly Merged[], bar: string, part: string, magnitude: string): StackGraphSet[] {
  const bars = new Map<string, StackGraphSet>()
  for (const m of rows) {
    const value = m.number(magnitude)
    if (value === null || !Number.isFinite(value)) continue
    const key = cellText(m.values.get(bar))
    let set = bars.get(key)
    if (!set) bars.set(key, (set = { Key: key, Values: [] }))
    set.Values.push({ Label: cellText(m.values.get(part)), Value: value })
  }
  return [...bars.values()]
}

export const stackgraph: ModuleDef = {
  name: 'stackgraph',
  kind: 'render',
  info: 'Shows horizontal bars of stacked parts: stackgraph <bar> <part> <magnitude>, three names of values.',
  examples: ['stackgraph Src Port sum'],
  compile(call) {
    const { rest } = readFlags(call, {})
    if (rest.length !== 3) throw argError(call, 'stackgraph needs three values: the bar, the part and the magnitude', rest[3] ?? call.end)
    for (const t of rest) if (t.text === '') throw argError(call, 'a value needs a name', t)
    const [bar, part, magnitude] = rest.map((t) => t.text) as [string, string, string]
    const all = async (src: RecordSource, from: number, to: number) => stackSets(await collapse(src, from, to), bar, part, magnitude)
    const r: CompiledRenderer = {
      name: 'stackgraph',
      kind: 'render',
      text: `stackgraph ${quote(bar)} ${quote(part)} ${quote(magnitude)}`,
      consumes: [bar, part, magnitude],
      produces: [],
      stateless: true,
      stage: () => passAll,
      record: (e) => valueRecord(e, [bar, part, magnitude], valueOf),
      downloads: ['json', 'csv'],
      async answer(src, req) {
        const sets = await all(src, req.from, req.to)
        const page = sets.slice(req.first, req.last)
        return { entries: page, count: page.length, more: req.first + page.length < sets.length }
      },
      download(src, format) {
        if (format !== 'csv' && format !== 'json') return undefined
        return (async function* () {
          const sets = await all(src, 0, 0)
          if (format === 'json') {
            yield JSON.stringify(sets)
            return
          }
          yield csvLine(['Key', 'Label', 'Value'])
          for (const s of sets) for (const v of s.Values) yield csvLine([s.Key, v.Label, v.Value])
        })()
      },
    }
    return r
  },
}
