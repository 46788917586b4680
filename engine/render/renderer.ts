// Renderers: the last module of a query. A renderer turns each entry that leaves the pipeline into one stored record
// (a line of JSON that begins with its `{"TS":` when it has a time: the results index reads it there), and shapes
// stored records into what the clients ask for (the answers of render/<name>.ts).
import type { Entry } from '../entry'
import type { CompiledModule, Stage } from '../module'
import { type Value, valueText } from '../value'

export interface CompiledRenderer extends CompiledModule {
  kind: 'render'
  /** The stored record of one final entry. */
  record(e: Entry): string
}

export function isRenderer(m: CompiledModule): m is CompiledRenderer {
  return m.kind === 'render'
}

const passAll: Stage = { push: (e, out) => out(e) }

/** The record of an entry with its values: the text and raw renderers store these, and the archive holds them. */
export function entryRecord(e: Entry): string {
  let rec = `{"TS":"${new Date(e.ts).toISOString()}","Tag":${JSON.stringify(e.tag)},"SRC":${JSON.stringify(e.src)},"Data":"${Buffer.from(e.data.buffer, e.data.byteOffset, e.data.byteLength).toString('base64')}"`
  if (e.values.size > 0) rec += `,"Enumerated":${JSON.stringify(enumerated(e.values))}`
  return `${rec}}`
}

/** The clients' EnumeratedPair list: each value's name and its text. */
export function enumerated(values: ReadonlyMap<string, Value>): { Name: string; ValueStr: string }[] {
  return [...values].map(([Name, v]) => ({ Name, ValueStr: valueText(v) }))
}

/** The renderer of a query that names none: entries as text. */
export function textRenderer(_previous: readonly CompiledModule[], name: 'text' | 'raw' = 'text', text = name): CompiledRenderer {
  return {
    name,
    kind: 'render',
    text,
    consumes: [],
    produces: [],
    stateless: true,
    stage: () => passAll,
    record: entryRecord,
  }
}

/**
 * The renderer of a query that ends in a plain `count` and names none: one record `{"Count": n}`, shown as a table
 * of one cell (what these queries answered before the engine had renderers; clients and saved searches rely on it).
 */
export function countRenderer(): CompiledRenderer {
  return {
    name: 'table',
    kind: 'render',
    text: 'table',
    consumes: ['count'],
    produces: [],
    stateless: true,
    stage: () => passAll,
    record: (e) => JSON.stringify({ Count: e.values.get('count') ?? 0 }),
  }
}
