// CSV (RFC 4180) of the value renderers' downloads. A cell a spreadsheet would run as a formula (OWASP "CSV
// injection": text starting with =, +, -, @, a tab or a CR) gets a leading apostrophe, shown as text and never
// evaluated; numbers stay as they are (a negative number is a number to a spreadsheet, not a formula), whether the
// value is a number or text that is exactly a decimal number.
import type { Cell } from './records'

const FORMULA_START = /^[=+\-@\t\r]/
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/

export function csvCell(value: Cell | null | undefined): string {
  if (value === undefined || value === null) return ''
  let s = typeof value === 'number' ? String(value) : value
  if (typeof value === 'string' && FORMULA_START.test(s) && !DECIMAL.test(s)) s = `'${s}`
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s
}

export const csvLine = (cells: readonly (Cell | null | undefined)[]) => `${cells.map(csvCell).join(',')}\r\n`
