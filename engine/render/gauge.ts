// gauge and numbercard (gravwell/wiki search/gauge/gauge.md): final numbers, each with a name and a range.
//   gauge <item> [<item> ...]        numbercard <item> [<item> ...]
//   item := <value> | ( <value> [<min> <max>] ["label"] )
// min and max are numbers or names of values of the same entry; without them both are 0 (the clients choose the
// range). The name is the label, else the value's name. A keyed value (stats ... by k) gives one gauge per key, named
// by the key values (then the label or the value's name too when there are several items, or a label is given).
// A request for a time range merges, per key, the aggregates of every window within it (as table does).
// numbercard is gauge under another name: the clients show number tiles instead of dials.
// Downloads: csv (Name, Magnitude, Min, Max) and json (the array the clients read).
import { valueOf } from '../entry'
import type { Token } from '../lex'
import { quote } from '../lex'
import { type ModuleDef, argError, readFlags } from '../module'
import type { ModuleCall } from '../parse'
import { parseNumber } from '../value'
import { csvLine } from './csv'
import { type Merged, type RecordSource, cellText, collapse, valueRecord } from './records'
import { type CompiledRenderer, passAll } from './renderer'

interface GaugeItem {
  magnitude: string
  /** A constant, or the name of a value. */
  min?: number | string
  max?: number | string
  label?: string
}

export interface GaugeValue {
  Name: string
  Magnitude: number
  Min: number
  Max: number
}

function readItems(call: ModuleCall, rest: Token[]): GaugeItem[] {
  const items: GaugeItem[] = []
  let group: { start: Token; parts: Token[] } | undefined
  const close = (at: Token) => {
    const g = group!
    group = undefined
    const words = g.parts.filter((t) => t.kind === 'word')
    const labels = g.parts.filter((t) => t.kind === 'string')
    if (words.length === 0) throw argError(call, 'a gauge in parentheses needs a value', at)
    if (labels.length > 1) throw argError(call, 'a gauge has at most one label', labels[1])
    if (words.length !== 1 && words.length !== 3) throw argError(call, 'a gauge in parentheses is (value [min max] ["label"])', words[1] ?? at)
    const bound = (t: Token | undefined) => (t === undefined ? undefined : (parseNumber(t.text) ?? t.text))
    items.push({ magnitude: words[0]!.text, min: bound(words[1]), max: bound(words[2]), label: labels[0]?.text })
  }
  for (const t of rest) {
    let text = t.text
    if (t.kind === 'word' && text.startsWith('(')) {
      if (group) throw argError(call, 'parentheses do not nest', t)
      group = { start: t, parts: [] }
      text = text.slice(1)
    }
    const closes = t.kind === 'word' && text.endsWith(')')
    if (closes) text = text.slice(0, -1)
    if (group) {
      if (text !== '' || t.kind === 'string') group.parts.push({ ...t, text })
      if (closes) close(t)
    } else {
      if (closes) throw argError(call, 'a ) without (', t)
      if (t.kind !== 'word' || text === '') throw argError(call, 'expected the name of a value', t)
      items.push({ magnitude: text })
    }
  }
  if (group) throw argError(call, 'a ( is not closed', group.start)
  if (items.length === 0) throw argError(call, 'expected at least one value', call.end)
  return items
}

const itemText = (i: GaugeItem) =>
  i.min === undefined && i.label === undefined
    ? quote(i.magnitude)
    : `(${[i.magnitude, ...(i.min !== undefined ? [String(i.min), String(i.max)] : []), ...(i.label !== undefined ? [`"${i.label.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`] : [])].join(' ')})`

/** The gauges of merged rows: one per row and item that has the value. */
export function gaugeValues(rows: readonly Merged[], items: readonly GaugeItem[]): GaugeValue[] {
  const out: GaugeValue[] = []
  const bound = (m: Merged, b: number | string | undefined) => (b === undefined ? 0 : typeof b === 'number' ? b : (m.number(b) ?? 0))
  for (const m of rows) {
    const keys = m.by.map((k) => cellText(m.values.get(k))).join(' ')
    for (const i of items) {
      const magnitude = m.number(i.magnitude)
      if (magnitude === null || !Number.isFinite(magnitude)) continue
      const own = i.label ?? i.magnitude
      const Name = keys === '' ? own : items.length > 1 || i.label !== undefined ? `${keys} ${own}` : keys
      out.push({ Name, Magnitude: magnitude, Min: bound(m, i.min), Max: bound(m, i.max) })
    }
  }
  return out
}

function gaugeDef(name: 'gauge' | 'numbercard', info: string): ModuleDef {
  return {
    name,
    kind: 'render',
    info,
    examples: [`${name} count`, `${name} (mean 0 100 "Mean latency")`, `${name} mean stddev`],
    compile(call) {
      const { rest } = readFlags(call, {})
      const items = readItems(call, rest)
      const names = [...new Set(items.flatMap((i) => [i.magnitude, ...[i.min, i.max].filter((b): b is string => typeof b === 'string')]))]
      const all = async (src: RecordSource, from: number, to: number) => gaugeValues(await collapse(src, from, to), items)
      return valuesRenderer({
        name,
        text: [name, ...items.map(itemText)].join(' '),
        names,
        values: all,
        csv: { header: ['Name', 'Magnitude', 'Min', 'Max'], row: (g) => [g.Name, g.Magnitude, g.Min, g.Max] },
      })
    },
  }
}

/**
 * A renderer whose answer is one list of values (gauges, number cards, words): the entries request pages it, the
 * downloads give it whole, as JSON or as CSV with `csv`'s columns.
 */
export function valuesRenderer<T>(spec: {
  name: string
  text: string
  /** The values its records keep. */
  names: string[]
  values: (src: RecordSource, from: number, to: number) => Promise<T[]>
  csv: { header: string[]; row: (value: T) => (string | number | undefined)[] }
}): CompiledRenderer {
  return {
    name: spec.name,
    kind: 'render',
    text: spec.text,
    consumes: spec.names,
    produces: [],
    stateless: true,
    stage: () => passAll,
    record: (e) => valueRecord(e, spec.names, valueOf),
    downloads: ['json', 'csv'],
    async answer(src, req) {
      const all = await spec.values(src, req.from, req.to)
      const page = all.slice(req.first, req.last)
      return { entries: page, count: page.length, more: req.first + page.length < all.length }
    },
    download(src, format) {
      if (format !== 'csv' && format !== 'json') return undefined
      return (async function* () {
        const all = await spec.values(src, 0, 0)
        if (format === 'json') {
          yield JSON.stringify(all)
          return
        }
        yield csvLine(spec.csv.header)
        for (const v of all) yield csvLine(spec.csv.row(v))
      })()
    },
  }
}

export const gauge = gaugeDef('gauge', 'Shows final numbers as gauges: each value, or (value min max "label"); one gauge per key of a keyed value.')
export const numbercard = gaugeDef('numbercard', 'Shows final numbers as number cards: the same arguments as gauge.')
