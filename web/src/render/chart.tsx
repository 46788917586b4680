// The chart renderer's answer ({Names, KeyComps, Categories, Values}: one point per time window, one value per
// series, null where a series had nothing) drawn as a line, area, bar, pie or donut chart with ECharts, the stored
// rendererOptions applied. Line, area and bar charts draw every point as [time in ms, value] on a time axis; pie
// and donut draw each series' sum over the points.
import { useMemo } from 'preact/hooks'
import { EChart, themeColors } from './echart'
import type { EChartsOption } from './echarts'
import { type RendererOptions, optionOf } from './options'

export interface ChartShape {
  Names: string[]
  KeyComps?: { Keys: string[] }[]
  Categories?: string[]
  Values: { TS: string; Data: (number | null)[] }[]
}

export const CHART_KINDS = ['line', 'area', 'bar', 'pie', 'donut'] as const
export type ChartKind = (typeof CHART_KINDS)[number]

export function isChartShape(v: unknown): v is ChartShape {
  const o = v as ChartShape
  return typeof o === 'object' && o !== null && Array.isArray(o.Names) && Array.isArray(o.Values)
}

/** The chart's kind: a renderer named line/area/bar/pie/donut, else ChartType, else line. */
export function chartKind(renderer: string, options?: RendererOptions): ChartKind {
  const named = [renderer, options?.ChartType].find((k) => (CHART_KINDS as readonly string[]).includes(k ?? '')) as ChartKind | undefined
  return named ?? 'line'
}

/** The series drawn: all of them, without the `other` series (the rest past the chart's limit) when IncludeOther is 'no'. */
export function shownSeries(shape: ChartShape, options?: RendererOptions): number[] {
  const all = shape.Names.map((_, i) => i)
  if (options?.IncludeOther !== 'no') return all
  return all.filter((i) => !(shape.KeyComps?.[i]?.Keys.length === 1 && shape.KeyComps[i]!.Keys[0] === 'other' && shape.Names[i]!.startsWith('other')))
}

/** The ECharts option of a chart answer. */
export function chartOption(shape: ChartShape, kind: ChartKind, options: RendererOptions = {}): EChartsOption {
  const { fg, muted, line } = themeColors()
  const series = shownSeries(shape, options)
  const legend = { type: 'scroll', bottom: 0, textStyle: { color: muted } }
  const tooltip = { renderMode: 'richText', trigger: kind === 'pie' || kind === 'donut' ? 'item' : 'axis' }
  if (kind === 'pie' || kind === 'donut') {
    const data = series.map((i) => ({ name: shape.Names[i]!, value: shape.Values.reduce((sum, v) => sum + (v.Data[i] ?? 0), 0) }))
    return {
      tooltip,
      legend,
      series: [
        {
          type: 'pie',
          name: shape.Categories?.join(', ') ?? '',
          radius: kind === 'donut' ? ['40%', '68%'] : '68%',
          label: { show: options.Labels !== 'no', color: fg },
          data,
        },
      ],
    }
  }
  const horizontal = optionOf(options, 'Orientation') === 'h' && kind === 'bar'
  const stacked = options.Stack === 'stacked'
  const timeAxis = {
    type: 'time',
    axisLabel: { color: muted, rotate: options.Rotate === 'yes' ? 45 : 0, hideOverlap: true },
    axisLine: { lineStyle: { color: line } },
    splitLine: { show: (horizontal ? options.YAxisSplitLine : options.XAxisSplitLine) !== 'no', lineStyle: { color: line } },
  }
  const valueAxis = {
    type: options.LogScale === 'yes' ? 'log' : 'value',
    axisLabel: { color: muted },
    splitLine: { show: (horizontal ? options.XAxisSplitLine : options.YAxisSplitLine) !== 'no', lineStyle: { color: line } },
  }
  return {
    tooltip,
    legend,
    grid: { left: 8, right: 16, top: 16, bottom: 40, containLabel: true },
    xAxis: horizontal ? valueAxis : timeAxis,
    yAxis: horizontal ? timeAxis : valueAxis,
    series: series.map((i) => {
      const points = shape.Values.map((v) => {
        const t = Date.parse(v.TS)
        const y = v.Data[i] ?? null
        return horizontal ? [y, t] : [t, y]
      })
      return {
        type: kind === 'bar' ? 'bar' : 'line',
        name: shape.Names[i]!,
        data: points,
        stack: stacked ? 'total' : undefined,
        smooth: kind !== 'bar' && optionOf(options, 'Smoothing') === 'smooth',
        connectNulls: options.ConnectNulls === 'yes',
        areaStyle: kind === 'area' ? {} : undefined,
        showSymbol: shape.Values.length <= 60,
      }
    }),
  }
}

export function ChartView({ shape, kind, options }: { shape: ChartShape; kind: ChartKind; options?: RendererOptions }) {
  const option = useMemo(() => chartOption(shape, kind, options), [shape, kind, options])
  if (shape.Names.length === 0 || shape.Values.length === 0) return <p class="muted">No points in this range.</p>
  const label = `${kind} chart of ${shape.Names.length} series (${shape.Names.slice(0, 8).join(', ')}${shape.Names.length > 8 ? ', …' : ''}) over ${shape.Values.length} points`
  return <EChart option={option} label={label} />
}
