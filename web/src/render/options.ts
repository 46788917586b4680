// The stored `rendererOptions` of a dashboard tile (the spec's keys and values), as the renderers read them. Every
// key is optional; an absent key means the renderer's default, noted per key.
export interface RendererOptions {
  /** 'no' hides the vertical grid lines (shown by default). */
  XAxisSplitLine?: string
  /** 'no' hides the horizontal grid lines (shown by default). */
  YAxisSplitLine?: string
  /** 'no' leaves out a chart's `other` series (the series past its limit, merged); shown by default. */
  IncludeOther?: string
  /** 'stacked' stacks the series of a line, area or bar chart; 'grouped' (default) does not. */
  Stack?: string
  /** 'smooth' draws curved lines; 'normal' (default) straight ones. */
  Smoothing?: string
  /** 'h' lays bars horizontally; 'v' (default) vertically. */
  Orientation?: string
  /** 'yes' draws a line through missing points; 'no' (default) breaks it there. */
  ConnectNulls?: string
  /** Number cards and gauges: 'no' shows numbers as they are; a count of decimals fixes them; default: at most 2. */
  Precision?: string | number
  /** 'yes' draws the value axis on a logarithmic scale; 'no' (default) a linear one. */
  LogScale?: string
  /** Gauges and number cards: 'no' hides the range (min to max). */
  Range?: string
  /** 'yes' turns the time axis' labels. */
  Rotate?: string
  /** 'no' hides a pie's labels. */
  Labels?: string
  /** 'no' draws number cards without their panel. */
  Background?: string
  /** A chart's kind: line (default), area, bar, pie or donut (also given as the tile's renderer name). */
  ChartType?: string
  values?: { Smoothing?: string; Orientation?: string; columns?: string[] }
}

/** The option's value, from the top level or from `values` (where older dashboards keep some). */
export function optionOf(o: RendererOptions | undefined, key: 'Smoothing' | 'Orientation'): string | undefined {
  return o?.[key] ?? o?.values?.[key]
}

/** A number for a card or a gauge, as Precision asks. */
export function formatNumber(n: number, precision: RendererOptions['Precision']): string {
  if (!Number.isFinite(n)) return String(n)
  if (precision === 'no') return String(n)
  const digits = precision === undefined || precision === '' ? undefined : Number(precision)
  if (digits !== undefined && Number.isInteger(digits) && digits >= 0 && digits <= 20)
    return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
  return n.toLocaleString('en-US', { maximumFractionDigits: 2 })
}
