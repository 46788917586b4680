// Renderers: the last module of a query. A renderer turns each entry that leaves the pipeline into one stored record
// (a line of JSON that begins with its `{"TS":` when it has a time: the results index reads it there), and shapes
// stored records into what the clients ask for (the answers of render/<name>.ts).
import { type Entry, asBuffer } from '../entry'
import type { CompiledModule, Stage } from '../module'
import { type Value, valueText } from '../value'
import type { RecordSource, RenderAnswer, RenderRequest } from './records'

export interface CompiledRenderer extends CompiledModule {
  kind: 'render'
  /** The stored record of one final entry. */
  record(e: Entry): string
  /** The download formats it offers (SearchInfo.RenderDownloadFormats). */
  downloads: readonly string[]
  /**
   * The answer to REQ_GET_ENTRIES and REQ_TS_RANGE in the clients' shape of this renderer (Entries). Undefined for
   * the renderers of entries (text, raw, hex, pcap), which the caller answers from the records as they are.
   */
  answer?(src: RecordSource, req: RenderRequest): Promise<RenderAnswer>
  /**
   * A download in one of `downloads`, as chunks of text, over the whole range [start, end) of the search; undefined
   * for a format the records give as they are (the entries' json, csv and text).
   */
  download?(src: RecordSource, format: string, range: { start: number; end: number }): AsyncGenerator<string> | undefined
}

/** The download formats of the renderers of entries (the records as they are). */
export const ENTRY_DOWNLOADS = ['json', 'csv', 'text'] as const

export function isRenderer(m: CompiledModule): m is CompiledRenderer {
  return m.kind === 'render'
}

/** The stage of a renderer that condenses nothing. */
export const passAll: Stage = { push: (e, out) => out(e) }

/** The record of an entry with its values: the text and raw renderers store these, and the archive holds them. */
export function entryRecord(e: Entry): string {
  let rec = `{"TS":"${new Date(e.ts).toISOString()}","Tag":${JSON.stringify(e.tag)},"SRC":${JSON.stringify(e.src)},"Data":"${asBuffer(e.data).toString('base64')}"`
  if (e.values.size > 0) rec += `,"Enumerated":${JSON.stringify(enumerated(e.values))}`
  return `${rec}}`
}

/** The clients' EnumeratedPair list: each value's name and its text. */
export function enumerated(values: ReadonlyMap<string, Value>): { Name: string; ValueStr: string }[] {
  return [...values].map(([Name, v]) => ({ Name, ValueStr: valueText(v) }))
}

/** The renderer of a query that names none: entries as text. */
export function textRenderer(_previous: readonly CompiledModule[], name: 'text' | 'raw' | 'hex' | 'pcap' = 'text', text: string = name): CompiledRenderer {
  return {
    name,
    downloads: ENTRY_DOWNLOADS,
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
    downloads: ENTRY_DOWNLOADS,
    async answer(src, req) {
      const lines = await src.read(req.first, req.last)
      const ts = new Date(req.updated).toISOString()
      const Rows = lines.map((l) => ({ TS: ts, Row: [String((JSON.parse(l) as { Count?: unknown }).Count ?? '')] }))
      return { entries: { Columns: ['count'], Rows }, count: Rows.length, more: req.first + Rows.length < src.count }
    },
  }
}
