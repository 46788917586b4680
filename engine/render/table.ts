// table (gravwell/wiki search/table/table.md): the values of each entry as a row.
//   table [-nt] [<column> ...]
// Columns are enumerated values or the built-ins TAG, SRC, TIMESTAMP, DATA; without any, every enumerated value is a
// column, in the order they first appear (in the rows answered: a page of plain entries names the values of that page).
// Rows of a condensing module (stats) are one per key: a request for a time range (a zoom) merges the aggregates of
// every window of a key within the range into one row, so the table shows the statistic over that range. Rows of
// plain entries are answered as they are, those whose time lies in the range.
// -nt (non-temporal) is accepted and changes nothing: condensing modules already condense. Saving a table as a
// resource (-save, -update, -delete, -csv, -format) is not supported and refused.
// Downloads: csv (a header row of the columns, then one row each; numbers stay numbers) and json (an array of
// objects, one per row, column name to value).
import { valueOf } from '../entry'
import { quote } from '../lex'
import { type ModuleDef, argError, readFlags } from '../module'
import { csvLine } from './csv'
import { type Cell, Merged, type RecordSource, type RenderRequest, cellText, collapse, parseValueRecord, scan, valueRecord } from './records'
import { type CompiledRenderer, passAll } from './renderer'

/** The columns of rows without named columns: every value name, in the order they first appear. */
export function allColumns(rows: readonly { values: Map<string, Cell> }[]): string[] {
  const seen = new Set<string>()
  for (const r of rows) for (const n of r.values.keys()) seen.add(n)
  return [...seen]
}

/**
 * The rows of a table within [from, to): plain entries by position (within the range when the source can find them
 * there) without reading the others; else every record, grouped (at most MAX_GROUPS rows).
 */
async function tableRows(src: RecordSource, req: Pick<RenderRequest, 'first' | 'last' | 'from' | 'to'>): Promise<{ rows: Merged[]; more: boolean; paged: boolean }> {
  const head = src.count > 0 ? (await src.read(0, 1))[0] : undefined
  const plain = head !== undefined && parseValueRecord(head).span === undefined
  const toRows = (lines: string[]) =>
    lines.map((l) => {
      const r = parseValueRecord(l)
      return new Merged(r.ts, r)
    })
  if (plain && req.from === 0 && req.to === 0) {
    const rows = toRows(await src.read(req.first, req.last))
    return { rows, more: req.first + rows.length < src.count, paged: true }
  }
  if (plain && src.readWithin) {
    const { lines, more } = await src.readWithin(req.from, req.to, req.first, req.last)
    return { rows: toRows(lines), more, paged: true }
  }
  const rows = await collapse(src, req.from, req.to)
  return { rows, more: rows.length > req.last, paged: false }
}

/** Every row of a table, for a download: plain entries streamed as they are stored; grouped rows collapsed. */
async function* downloadRows(src: RecordSource): AsyncGenerator<{ values: Map<string, Cell> }> {
  const head = src.count > 0 ? (await src.read(0, 1))[0] : undefined
  if (head !== undefined && parseValueRecord(head).span === undefined) {
    for await (const line of scan(src)) yield parseValueRecord(line)
    return
  }
  yield* await collapse(src, 0, 0)
}

export const table: ModuleDef = {
  name: 'table',
  kind: 'render',
  info: 'Shows values as a table: the named columns, or every value when none is named. Rows of stats are one per key, merged over the time range shown.',
  examples: ['table', 'table host count', 'table -nt source count'],
  compile(call) {
    const { flags, rest } = readFlags(call, { bool: ['nt', 'csv'], withValue: ['save', 'update', 'delete', 'format'] })
    for (const f of ['save', 'update', 'delete', 'format', 'csv'])
      if (flags.has(f)) throw argError(call, `-${f}: saving a table as a resource is not supported`, call.args.find((t) => t.text === `-${f}`))
    const columns = rest.map((t) => {
      if (t.text === '') throw argError(call, 'a column needs a name', t)
      return t.text
    })
    const named = columns.length > 0 ? columns : undefined
    const text = ['table', ...(flags.has('nt') ? ['-nt'] : []), ...columns.map(quote)].join(' ')
    const r: CompiledRenderer = {
      name: 'table',
      kind: 'render',
      text,
      consumes: columns,
      produces: [],
      stateless: true,
      stage: () => passAll,
      record: (e) => valueRecord(e, named, valueOf),
      downloads: ['csv', 'json'],
      async answer(src, req) {
        const { rows, more, paged } = await tableRows(src, req)
        const page = paged ? rows : rows.slice(req.first, req.last)
        const cols = named ?? allColumns(page)
        const Rows = page.map((m) => ({ TS: new Date(m.ts).toISOString(), Row: cols.map((c) => cellText(m.values.get(c))) }))
        return { entries: { Columns: cols, Rows }, count: Rows.length, more }
      },
      download(src, format) {
        if (format !== 'csv' && format !== 'json') return undefined
        return (async function* () {
          // without named columns, a first pass finds them all (the header comes first)
          let cols = named
          if (!cols) {
            const seen = new Set<string>()
            for await (const row of downloadRows(src)) for (const n of row.values.keys()) seen.add(n)
            cols = [...seen]
          }
          if (format === 'csv') yield csvLine(cols)
          else yield '['
          let first = true
          for await (const m of downloadRows(src)) {
            if (format === 'csv') yield csvLine(cols.map((c) => m.values.get(c) ?? ''))
            else yield `${first ? '' : ','}${JSON.stringify(Object.fromEntries(cols.map((c) => [c, m.values.get(c) ?? ''])))}`
            first = false
          }
          if (format === 'json') yield ']'
        })()
      },
    }
    return r
  },
}
