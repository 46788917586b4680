// ECharts, tree-shaken: the core with only the charts and components the console draws, and the canvas renderer.
// Importing from here (never from 'echarts') keeps the unused parts out of the bundle.
import { BarChart, GaugeChart, LineChart, PieChart } from 'echarts/charts'
import { BrushComponent, GridComponent, LegendComponent, TooltipComponent } from 'echarts/components'
import * as echarts from 'echarts/core'
import { CanvasRenderer } from 'echarts/renderers'

echarts.use([LineChart, BarChart, PieChart, GaugeChart, GridComponent, TooltipComponent, LegendComponent, BrushComponent, CanvasRenderer])

export { echarts }
export type ECharts = echarts.ECharts
export type EChartsOption = echarts.EChartsCoreOption
