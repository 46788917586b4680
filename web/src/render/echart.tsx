// One ECharts chart in a box: drawn on mount, redrawn when its option changes, resized with its box, disposed on
// unmount. The instance is kept on the box as `chart` (and ECharts' own getInstanceByDom finds it) so tests read the
// drawn series and points through ECharts' API. Tooltips are text rendered on the canvas (renderMode richText): the
// console's CSP admits no inline style, which ECharts' HTML tooltips would set.
import { useEffect, useRef } from 'preact/hooks'
import { type ECharts, type EChartsOption, echarts } from './echarts'

export interface EChartProps {
  option: EChartsOption
  /** What the chart shows, for a screen reader (the box is an image to them). */
  label: string
  /** Height in pixels (the width follows the box). */
  height?: number
  /** Called with the instance after each drawing (events are bound there). */
  onReady?: (chart: ECharts) => void
}

/** The theme's colours, read from the console's CSS variables so charts follow light and dark. */
export function themeColors(): { fg: string; muted: string; line: string } {
  const style = getComputedStyle(document.documentElement)
  const v = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback
  return { fg: v('--fg', '#1b1f24'), muted: v('--muted', '#57606a'), line: v('--line', '#d0d7de') }
}

export function EChart({ option, label, height = 320, onReady }: EChartProps) {
  const box = useRef<HTMLDivElement>(null)
  const chart = useRef<ECharts | undefined>(undefined)

  useEffect(() => {
    const el = box.current!
    const instance = echarts.init(el, undefined, { renderer: 'canvas' })
    chart.current = instance
    ;(el as HTMLDivElement & { chart?: ECharts }).chart = instance
    const observer = new ResizeObserver(() => instance.resize())
    observer.observe(el)
    return () => {
      observer.disconnect()
      instance.dispose()
      delete (el as HTMLDivElement & { chart?: ECharts }).chart
      chart.current = undefined
    }
  }, [])

  useEffect(() => {
    const instance = chart.current
    if (!instance) return
    instance.setOption({ textStyle: { color: themeColors().fg }, ...option, animation: false }, { notMerge: true })
    onReady?.(instance)
  }, [option])

  return <div ref={box} class="echart" data-chart="" role="img" aria-label={label} style={{ height: `${height}px` }} />
}
