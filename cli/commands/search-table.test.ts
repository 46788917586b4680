// How `quarry search run` prints results as a table: a time column comes first whatever order the server's download
// gives the members in (a chart's windows), entries keep their fixed columns, number cards print as lines.
import { expect, test } from 'bun:test'
import { Output } from '../output'
import { resultsTable } from './search'

const out = new Output(false, false)
const lines = (text: string) => text.split('\n').map((l) => l.split(/\s{2,}/))

test('a chart whose download puts TS last prints it first, then the series in their order', () => {
  const rows = [
    { web: 3, db: 1, TS: '2026-01-01T00:00:00Z' },
    { web: 0, db: 2, TS: '2026-01-01T00:01:00Z' },
  ]
  expect(lines(resultsTable(out, rows))).toEqual([
    ['TS', 'WEB', 'DB'],
    ['2026-01-01T00:00:00Z', '3', '1'],
    ['2026-01-01T00:01:00Z', '0', '2'],
  ])
})

test('a table without a time column keeps its order; entries print TS, TAG, SRC, DATA', () => {
  expect(lines(resultsTable(out, [{ host: 'a', count: 2 }]))).toEqual([['HOST', 'COUNT'], ['a', '2']])
  const entry = { Tag: 'web', SRC: '192.0.2.1', TS: '2026-01-01T00:00:00Z', Data: Buffer.from('GET /\tok').toString('base64') }
  expect(lines(resultsTable(out, [entry]))).toEqual([['TS', 'TAG', 'SRC', 'DATA'], ['2026-01-01T00:00:00Z', 'web', '192.0.2.1', 'GET / ok']])
  expect(resultsTable(out, [])).toBe('(no results)')
})
