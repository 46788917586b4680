// A search's result drawn by its renderer: the one entry point for the search page and the dashboards' tiles.
// `result` is the renderer's latest wire answer (LiveSearch.result, or any EntriesAnswer); its `Entries` is checked
// against the renderer's shape before drawing, so an answer of another shape shows a note instead of breaking.
// `renderer` is the search's renderer (text, raw, hex, pcap, table, chart, numbercard, gauge, stackgraph), or a
// chart's kind (line, area, bar, pie, donut) for a chart drawn that way.
import type { EntriesAnswer } from '../search/live'
import { CHART_KINDS, ChartView, chartKind, isChartShape } from './chart'
import { EntriesView, isEntries } from './entries'
import type { RendererOptions } from './options'
import { TableView, isTableShape } from './table'
import { Gauges, NumberCards, StackGraph, isGaugeValues, isStackSets } from './values'

export type { RendererOptions } from './options'

export interface ResultViewProps {
  renderer: string
  result: EntriesAnswer | undefined
  options?: RendererOptions
}

function Unreadable({ renderer }: { renderer: string }) {
  return <p class="muted">This answer cannot be drawn as {renderer}.</p>
}

export function ResultView({ renderer, result, options }: ResultViewProps) {
  if (!result) return <p role="status">Waiting for results…</p>
  const entries = result.Entries
  if (entries === undefined || entries === null) return <p class="muted">No results.</p>
  if ((CHART_KINDS as readonly string[]).includes(renderer) || renderer === 'chart') {
    if (!isChartShape(entries)) return isTableShape(entries) ? <TableView shape={entries} options={options} /> : <Unreadable renderer={renderer} />
    return <ChartView shape={entries} kind={chartKind(renderer, options)} options={options} />
  }
  switch (renderer) {
    case 'table':
      return isTableShape(entries) ? <TableView shape={entries} options={options} /> : <Unreadable renderer={renderer} />
    case 'numbercard':
      return isGaugeValues(entries) ? <NumberCards values={entries} options={options} /> : <Unreadable renderer={renderer} />
    case 'gauge':
      return isGaugeValues(entries) ? <Gauges values={entries} options={options} /> : <Unreadable renderer={renderer} />
    case 'stackgraph':
      return isStackSets(entries) ? <StackGraph sets={entries} options={options} /> : <Unreadable renderer={renderer} />
  }
  if (isTableShape(entries)) return <TableView shape={entries} options={options} />
  if (isEntries(entries)) return <EntriesView entries={entries} tags={result.Tags} renderer={renderer} />
  return <Unreadable renderer={renderer} />
}
