// fdg (gravwell/wiki search/fdg/fdg.md): a force-directed graph of the pairs of two values.
//   fdg [-b] [-v <value>] [-sg <value>] [-dg <value>] <source> <destination>
// Each entry (or condensed result) within the range asked for is an edge from its source value to its destination
// value (an entry missing either is left out); an edge's weight is how many there are, or with -v the sum of that
// value (a number, or text that reads as one; anything else adds 0). -b makes edges undirected: [A, B] and [B, A]
// are one edge, in the orientation first seen. -sg and -dg give a source and a destination node their group (for colouring), the first
// one seen for a node; without them every node is in group 0, named "".
// The answer is the clients' FDGSet: {nodes: [{name, group}], links: [{value, source, target}], groups: [names]}, a
// link's source and target indexes into nodes, a node's group into groups, in the order first seen.
// Memory: at most MAX_GROUPS nodes and MAX_GROUPS links per answer (further ones are left out). Downloads: json.
import { valueOf } from '../entry'
import { quote } from '../lex'
import { type ModuleDef, argError, flagsText, readFlags } from '../module'
import { parseNumber } from '../value'
import { MAX_GROUPS, type RecordSource, cellText, inRange, parseValueRecord, scan, valueRecord } from './records'
import { type CompiledRenderer, passAll } from './renderer'

export interface FdgSet {
  nodes: { name: string; group: number }[]
  links: { value: number; source: number; target: number }[]
  groups: string[]
}

interface FdgOptions {
  source: string
  destination: string
  bidirectional: boolean
  weight?: string
  sourceGroup?: string
  destinationGroup?: string
}

/** The graph of the records within [from, to). */
export async function fdgSet(src: RecordSource, from: number, to: number, o: FdgOptions): Promise<FdgSet> {
  const set: FdgSet = { nodes: [], links: [], groups: [] }
  const grouped = o.sourceGroup !== undefined || o.destinationGroup !== undefined
  if (!grouped) set.groups.push('')
  const nodeIndex = new Map<string, number>()
  const groupIndex = new Map<string, number>()
  const linkIndex = new Map<string, number>()
  const group = (name: string | undefined) => {
    if (!grouped) return 0
    const g = name ?? ''
    let i = groupIndex.get(g)
    if (i === undefined) {
      i = set.groups.length
      groupIndex.set(g, i)
      set.groups.push(g)
    }
    return i
  }
  const node = (name: string, groupName: string | undefined) => {
    let i = nodeIndex.get(name)
    if (i === undefined && set.nodes.length < MAX_GROUPS) {
      i = set.nodes.length
      nodeIndex.set(name, i)
      set.nodes.push({ name, group: group(groupName) })
    }
    return i
  }
  for await (const line of scan(src)) {
    const row = parseValueRecord(line)
    if (!inRange(row, from, to)) continue
    const s = row.values.get(o.source)
    const d = row.values.get(o.destination)
    if (s === undefined || d === undefined) continue
    const text = (name: string | undefined) => (name === undefined ? undefined : cellText(row.values.get(name)))
    const si = node(cellText(s), text(o.sourceGroup))
    const di = node(cellText(d), text(o.destinationGroup))
    if (si === undefined || di === undefined) continue
    const key = o.bidirectional && di < si ? `${di} ${si}` : `${si} ${di}`
    const w = o.weight === undefined ? 1 : row.values.get(o.weight)
    const n = typeof w === 'string' ? parseNumber(w) : w
    const add = typeof n === 'number' && Number.isFinite(n) ? n : 0
    const li = linkIndex.get(key)
    if (li !== undefined) set.links[li]!.value += add
    else if (set.links.length < MAX_GROUPS) {
      linkIndex.set(key, set.links.length)
      set.links.push({ value: add, source: si, target: di })
    }
  }
  return set
}

export const fdg: ModuleDef = {
  name: 'fdg',
  kind: 'render',
  info: 'Shows a force-directed graph of source and destination values: fdg [-b] [-v weight] [-sg group] [-dg group] <source> <destination>.',
  examples: ['fdg SrcIP DstIP', 'fdg -b -v sum -sg SrcSub -dg DstSub SrcIP DstIP'],
  compile(call) {
    const { flags, rest } = readFlags(call, { bool: ['b'], withValue: ['v', 'sg', 'dg'] })
    if (rest.length !== 2) throw argError(call, 'fdg needs two values: the source and the destination', rest[2] ?? call.end)
    for (const t of rest) if (t.kind !== 'word' || t.text === '') throw argError(call, 'expected the name of a value', t)
    const named = (f: string) => {
      const v = flags.get(f)
      return v === undefined || v === true ? undefined : v.text
    }
    const o: FdgOptions = {
      source: rest[0]!.text,
      destination: rest[1]!.text,
      bidirectional: flags.has('b'),
      weight: named('v'),
      sourceGroup: named('sg'),
      destinationGroup: named('dg'),
    }
    const names = [...new Set([o.source, o.destination, ...[o.weight, o.sourceGroup, o.destinationGroup].filter((n): n is string => n !== undefined)])]
    const r: CompiledRenderer = {
      name: 'fdg',
      kind: 'render',
      text: ['fdg', ...flagsText(flags, quote), quote(o.source), quote(o.destination)].join(' '),
      consumes: names,
      produces: [],
      stateless: true,
      stage: () => passAll,
      record: (e) => valueRecord(e, names, valueOf),
      downloads: ['json'],
      async answer(src: RecordSource, req) {
        const set = await fdgSet(src, req.from, req.to, o)
        return { entries: set, count: set.links.length, more: false }
      },
      download(src, format) {
        if (format !== 'json') return undefined
        return (async function* () {
          yield JSON.stringify(await fdgSet(src, 0, 0, o))
        })()
      },
    }
    return r
  },
}
