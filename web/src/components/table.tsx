// A list as a table: one row per item, a caption naming it (read by screen readers), scrolled sideways inside its
// own box on a narrow window rather than widening the page.
import type { ComponentChildren } from 'preact'

export interface Column<T> {
  title: string
  cell: (row: T) => ComponentChildren
}

export function DataTable<T>({ caption, rows, columns, rowKey }: { caption: string; rows: T[]; columns: Column<T>[]; rowKey: (row: T) => string | number }) {
  return (
    // focusable, so a keyboard can scroll a table wider than the window
    <div class="scroll" tabIndex={0} role="region" aria-label={caption}>
      <table class="grid">
        <caption class="sr">{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.title} scope="col">
                {c.title}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)}>
              {columns.map((c) => (
                <td key={c.title}>{c.cell(row)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
