// The table renderer's answer ({Columns, Rows: [{TS, Row}]}, cells as text): sortable by any column (numbers as
// numbers when both cells are numbers, else as text), with a choice of the columns shown (the stored
// `values.columns`, all by default). Cells are text, never HTML.
import { useMemo, useState } from 'preact/hooks'
import type { RendererOptions } from './options'

export interface TableShape {
  Columns: string[]
  Rows: { TS?: string; Row: string[] }[]
}

export const isTableShape = (v: unknown): v is TableShape => typeof v === 'object' && v !== null && Array.isArray((v as TableShape).Columns) && Array.isArray((v as TableShape).Rows)

const NUMBER = /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/

/** Compares two cells: as numbers when both are numbers, else as text. */
export function compareCells(a: string, b: string): number {
  if (NUMBER.test(a) && NUMBER.test(b)) return Number(a) - Number(b)
  return a < b ? -1 : a > b ? 1 : 0
}

export function TableView({ shape, options }: { shape: TableShape; options?: RendererOptions }) {
  const [sort, setSort] = useState<{ column: number; descending: boolean } | undefined>()
  const chosen = options?.values?.columns?.filter((c) => shape.Columns.includes(c))
  const [hidden, setHidden] = useState<Set<string>>(() => new Set(chosen?.length ? shape.Columns.filter((c) => !chosen.includes(c)) : []))

  const rows = useMemo(() => {
    if (!sort) return shape.Rows
    const sign = sort.descending ? -1 : 1
    return [...shape.Rows].sort((x, y) => sign * compareCells(x.Row[sort.column] ?? '', y.Row[sort.column] ?? ''))
  }, [shape, sort])

  if (shape.Columns.length === 0) return <p class="muted">No rows.</p>
  const shown = shape.Columns.map((name, index) => ({ name, index })).filter((c) => !hidden.has(c.name))

  const toggle = (name: string) => {
    const next = new Set(hidden)
    if (next.has(name)) next.delete(name)
    else if (shown.length > 1) next.add(name) // at least one column stays
    setHidden(next)
  }
  const sortBy = (column: number) =>
    setSort((s) => (s?.column === column ? { column, descending: !s.descending } : { column, descending: false }))

  return (
    <div class="table-view">
      <details class="columns">
        <summary>Columns ({shown.length} of {shape.Columns.length})</summary>
        <fieldset>
          <legend class="muted">Columns shown</legend>
          {shape.Columns.map((name) => (
            <label key={name} class="check">
              <input type="checkbox" checked={!hidden.has(name)} onChange={() => toggle(name)} />
              {name}
            </label>
          ))}
        </fieldset>
      </details>
      {shape.Rows.length === 0 ? (
        <p class="muted">No rows.</p>
      ) : (
        <div class="scroll">
          <table class="grid results">
            <thead>
              <tr>
                {shown.map((c) => (
                  <th key={c.name} scope="col" aria-sort={sort?.column === c.index ? (sort.descending ? 'descending' : 'ascending') : undefined}>
                    <button type="button" class="sort" onClick={() => sortBy(c.index)}>
                      {c.name}
                      <span aria-hidden="true">{sort?.column === c.index ? (sort.descending ? ' ▼' : ' ▲') : ''}</span>
                    </button>
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((r, i) => (
                <tr key={i}>
                  {shown.map((c) => (
                    <td key={c.name}>{r.Row[c.index] ?? ''}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  )
}
