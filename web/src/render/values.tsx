// The renderers of final numbers: numbercard (a tile per value: its name and its number), gauge (a dial per value
// from Min to Max; a range of 0 to 0 is chosen from the number) and stackgraph (horizontal bars of stacked parts).
import { useMemo } from 'preact/hooks'
import { EChart, themeColors } from './echart'
import type { EChartsOption } from './echarts'
import { type RendererOptions, formatNumber } from './options'

export interface GaugeValue {
  Name: string
  Magnitude: number
  Min: number
  Max: number
}

export interface StackSet {
  Key: string
  Values: { Label: string; Value: number }[]
}

export const isGaugeValues = (v: unknown): v is GaugeValue[] => Array.isArray(v) && v.every((g) => typeof g === 'object' && g !== null && 'Magnitude' in g)
export const isStackSets = (v: unknown): v is StackSet[] => Array.isArray(v) && v.every((g) => typeof g === 'object' && g !== null && 'Key' in g && Array.isArray((g as StackSet).Values))

const showsRange = (g: GaugeValue, options?: RendererOptions) => options?.Range !== 'no' && g.Max > g.Min

export function NumberCards({ values, options }: { values: GaugeValue[]; options?: RendererOptions }) {
  if (values.length === 0) return <p class="muted">No values.</p>
  return (
    <ul class={`cards${options?.Background === 'no' ? ' bare' : ''}`}>
      {values.map((v) => (
        <li key={v.Name} class="card">
          <span class="card-name">{v.Name}</span>
          <strong class="card-value">{formatNumber(v.Magnitude, options?.Precision)}</strong>
          {showsRange(v, options) && (
            <span class="muted card-range">
              {formatNumber(v.Min, options?.Precision)} to {formatNumber(v.Max, options?.Precision)}
            </span>
          )}
        </li>
      ))}
    </ul>
  )
}

/** A round upper bound for a gauge without a range: the next 1, 2 or 5 times a power of ten. */
export function niceMax(n: number): number {
  if (!(n > 0)) return 1
  const p = 10 ** Math.floor(Math.log10(n))
  for (const m of [1, 2, 5, 10]) if (m * p >= n) return m * p
  return 10 * p
}

function gaugeOption(g: GaugeValue, options?: RendererOptions): EChartsOption {
  const { fg, muted } = themeColors()
  const min = g.Max > g.Min ? g.Min : 0
  const max = g.Max > g.Min ? g.Max : niceMax(g.Magnitude)
  return {
    series: [
      {
        type: 'gauge',
        name: g.Name,
        min,
        max,
        progress: { show: true },
        axisLabel: { color: muted, show: options?.Range !== 'no' },
        detail: { color: fg, fontSize: 20, formatter: (v: number) => formatNumber(v, options?.Precision) },
        title: { color: muted },
        data: [{ name: g.Name, value: g.Magnitude }],
      },
    ],
  }
}

function Gauge({ value, options }: { value: GaugeValue; options?: RendererOptions }) {
  const option = useMemo(() => gaugeOption(value, options), [value, options])
  return (
    <li class="gauge">
      <EChart option={option} height={220} label={`${value.Name}: ${formatNumber(value.Magnitude, options?.Precision)}`} />
    </li>
  )
}

export function Gauges({ values, options }: { values: GaugeValue[]; options?: RendererOptions }) {
  if (values.length === 0) return <p class="muted">No values.</p>
  return (
    <ul class="gauges">
      {values.map((v) => (
        <Gauge key={v.Name} value={v} options={options} />
      ))}
    </ul>
  )
}

export function stackOption(sets: StackSet[], options?: RendererOptions): EChartsOption {
  const { muted, line } = themeColors()
  const labels = [...new Set(sets.flatMap((s) => s.Values.map((v) => v.Label)))]
  const keys = sets.map((s) => s.Key)
  return {
    tooltip: { renderMode: 'richText', trigger: 'item' },
    legend: { type: 'scroll', bottom: 0, textStyle: { color: muted } },
    grid: { left: 8, right: 16, top: 8, bottom: 40, containLabel: true },
    xAxis: { type: options?.LogScale === 'yes' ? 'log' : 'value', axisLabel: { color: muted }, splitLine: { show: options?.XAxisSplitLine !== 'no', lineStyle: { color: line } } },
    yAxis: { type: 'category', data: keys, axisLabel: { color: muted } },
    series: labels.map((label) => ({
      type: 'bar',
      name: label,
      stack: 'parts',
      data: sets.map((s) => s.Values.find((v) => v.Label === label)?.Value ?? null),
    })),
  }
}

export function StackGraph({ sets, options }: { sets: StackSet[]; options?: RendererOptions }) {
  const option = useMemo(() => stackOption(sets, options), [sets, options])
  if (sets.length === 0) return <p class="muted">No values.</p>
  return <EChart option={option} height={Math.max(160, 40 + sets.length * 28)} label={`stacked bars of ${sets.length} keys`} />
}
