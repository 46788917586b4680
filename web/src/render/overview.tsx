// The overview histogram of a search: the entries read per window of its whole range, as bars. Dragging across it
// selects a window, clicking a bar selects that bar's window: either calls `onZoom(start, end)`. The window shown
// (a zoom) is marked on the bars.
import { useMemo } from 'preact/hooks'
import type { Overview } from '../search/live'
import { EChart, themeColors } from './echart'
import type { ECharts, EChartsOption } from './echarts'

export interface OverviewProps {
  overview: Overview
  /** The zoomed window, marked on the histogram. */
  window?: { start: number; end: number }
  onZoom?: (start: number, end: number) => void
}

export function overviewOption(o: Overview, window?: { start: number; end: number }): EChartsOption {
  const { muted, line, fg } = themeColors()
  const inWindow = (t: number) => !window || (t + o.windowMs > window.start && t < window.end)
  return {
    grid: { left: 8, right: 16, top: 8, bottom: 4, containLabel: true },
    tooltip: { renderMode: 'richText', trigger: 'axis' },
    xAxis: { type: 'time', min: o.start, max: o.end, axisLabel: { color: muted, hideOverlap: true }, axisLine: { lineStyle: { color: line } } },
    yAxis: { type: 'value', axisLabel: { color: muted }, splitLine: { lineStyle: { color: line } }, minInterval: 1 },
    brush: { xAxisIndex: 0, brushType: 'lineX', brushMode: 'single', transformable: false, brushStyle: { borderColor: fg, color: 'rgba(120,120,120,0.2)' } },
    series: [
      {
        type: 'bar',
        name: 'entries',
        barCategoryGap: '10%',
        barWidth: '90%',
        data: o.counts.map((n, i) => {
          const t = o.start + i * o.windowMs
          return { value: [t + o.windowMs / 2, n], itemStyle: { opacity: inWindow(t) ? 1 : 0.35 } }
        }),
      },
    ],
  }
}

export function OverviewChart({ overview, window, onZoom }: OverviewProps) {
  const option = useMemo(() => overviewOption(overview, window), [overview, window])
  const total = overview.counts.reduce((a, b) => a + b, 0)
  function bind(chart: ECharts) {
    chart.off('brushEnd')
    chart.off('click')
    // dragging selects a window: the brush is on as soon as the chart is drawn
    chart.dispatchAction({ type: 'takeGlobalCursor', key: 'brush', brushOption: { brushType: 'lineX', brushMode: 'single' } })
    chart.on('brushEnd', (e: unknown) => {
      const area = (e as { areas?: { coordRange?: number[] }[] }).areas?.[0]
      const range = area?.coordRange
      if (range && range.length === 2 && onZoom) {
        chart.dispatchAction({ type: 'brush', areas: [] })
        onZoom(Math.min(range[0]!, range[1]!), Math.max(range[0]!, range[1]!))
      }
    })
    chart.on('click', (e: unknown) => {
      const i = (e as { dataIndex?: number }).dataIndex
      if (typeof i === 'number' && onZoom) onZoom(overview.start + i * overview.windowMs, overview.start + (i + 1) * overview.windowMs)
    })
  }
  return (
    <div class="overview">
      <EChart option={option} height={110} onReady={bind} label={`overview: ${total} entries read over the range, in ${overview.counts.length} windows`} />
    </div>
  )
}
