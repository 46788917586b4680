// The stored rendererOptions of dashboard tiles, one test per option: a dashboard draws the same search in a tile
// without options and in a tile with the option, and the test reads both drawings — the ECharts option of the
// instance ECharts keeps for the box (the one echarts.getInstanceByDom returns, matched by its _echarts_instance_
// attribute), or the number card's DOM — so each option is seen to change what it should. The wire names are those of the platform's dashboards (gravwell/js-client's RendererOptions:
// XAxisSplitLine, YAxisSplitLine, Rotate, Labels, Precision, Range, Background, Stack, Smoothing, ConnectNulls,
// LogScale, Orientation, IncludeOther, values), plus ChartType.
import { expect, test } from 'bun:test'
import type { Locator } from 'playwright-core'
import { describeWithServers } from '../services'
import { BROWSER_TEST_MS, type ConsolePage, consoleWorld, expectClean, screenshot, STEP_MS } from './harness'

type Option = Record<string, any>

/** Every tile of the dashboard: [title, renderer, search index, rendererOptions]. */
const TILES: [string, string, number, Record<string, unknown>][] = [
  ['Chart', 'chart', 0, {}],
  ['Chart, no vertical lines', 'chart', 0, { XAxisSplitLine: 'no' }],
  ['Chart, no horizontal lines', 'chart', 0, { YAxisSplitLine: 'no' }],
  ['Chart, turned labels', 'chart', 0, { Rotate: 'yes' }],
  ['Bars', 'bar', 0, { Orientation: 'h' }],
  ['Bars, no value lines', 'bar', 0, { Orientation: 'h', XAxisSplitLine: 'no' }],
  ['Pie', 'pie', 0, {}],
  ['Pie, no labels', 'pie', 0, { Labels: 'no' }],
  ['Card', 'numbercard', 1, {}],
  ['Card, 3 decimals', 'numbercard', 1, { Precision: 3 }],
  ['Card, as is', 'numbercard', 1, { Precision: 'no' }],
  ['Card, no range', 'numbercard', 1, { Range: 'no' }],
  ['Card, no panel', 'numbercard', 1, { Background: 'no' }],
  ['Gauge', 'gauge', 1, {}],
  ['Gauge, no range, 1 decimal', 'gauge', 1, { Range: 'no', Precision: 1 }],
  ['Stack', 'stackgraph', 2, {}],
  ['Stack, no lines, log', 'stackgraph', 2, { XAxisSplitLine: 'no', LogScale: 'yes' }],
  ['Chart, stacked, smooth, connected, log', 'chart', 0, { Stack: 'stacked', Smoothing: 'smooth', ConnectNulls: 'yes', LogScale: 'yes' }],
  ['Chart, smooth (older place)', 'chart', 0, { values: { Smoothing: 'smooth' } }],
  ['Bars, horizontal (older place)', 'bar', 0, { values: { Orientation: 'h' } }],
  ['Chart as area', 'chart', 0, { ChartType: 'area' }],
  ['Top and other', 'chart', 3, {}],
  ['Top only', 'chart', 3, { IncludeOther: 'no' }],
  ['Table', 'table', 4, {}],
  ['Table, count only', 'table', 4, { values: { columns: ['count'] } }],
]

describeWithServers('web console: each renderer option of a dashboard tile', () => {
  const world = consoleWorld()
  // latency values 1, 2 and 4 ms: a mean of 2.333…, with as many decimals as a number can hold
  const now = Date.now()
  const latencies = [1, 2, 4, 1, 2, 4]
  const hosts = ['web-1', 'web-2', 'web-1', 'web-3', 'web-1', 'web-2']
  const mean = latencies.reduce((a, b) => a + b, 0) / latencies.length
  let shown: Promise<ConsolePage> | undefined

  /** The dashboard, opened once for every test of the file, with each tile drawn. */
  const dashboard = () =>
    (shown ??= (async () => {
      await world.api(
        'POST',
        '/api/ingest/json',
        latencies.map((latency, i) => ({ TS: new Date(now - (30 - i * 4) * 60_000).toISOString(), Tag: 'opts', Data: Buffer.from(JSON.stringify({ host: hosts[i], latency })).toString('base64') })),
      )
      const id = (await world.api('POST', '/api/dashboards', {
        Name: 'Options',
        Description: '',
        Data: {
          version: 2,
          timeframe: { durationString: 'PT1H', timeframe: 'PT1H', start: null, end: null },
          searches: [
            { alias: 'per host', query: 'tag=opts json host | stats count by host over 10m | chart count by host' },
            { alias: 'mean', query: 'tag=opts json latency | stats mean(latency) | numbercard (mean 0 10 "mean latency")' },
            { alias: 'stack', query: 'tag=opts json host latency | stats count by host latency | stackgraph host latency count' },
            { alias: 'top', query: 'tag=opts json host | stats count by host over 10m | chart count by host limit 2' },
            { alias: 'table', query: 'tag=opts json host | stats count by host | table host count' },
          ],
          tiles: TILES.map(([title, renderer, searchesIndex, rendererOptions], i) => ({ id: i + 1, title, renderer, span: { col: 4, row: 4 }, searchesIndex, rendererOptions })),
        },
      })) as number
      const opened = await world.signedIn()
      await opened.page.goto(`${world.url}/#/dashboards/${id}`)
      for (const [title, renderer] of TILES) {
        const tile = opened.page.getByRole('article', { name: title, exact: true })
        await tile.locator('.tile-body[data-finished="yes"]').waitFor({ timeout: STEP_MS })
        await tile.locator(renderer === 'numbercard' ? '.card' : renderer === 'table' ? 'table' : '[data-chart]').first().waitFor({ timeout: STEP_MS })
      }
      await screenshot(opened.page, 'dashboard-options')
      return opened
    })())

  const tile = async (title: string): Promise<Locator> => (await dashboard()).page.getByRole('article', { name: title, exact: true })

  /** The ECharts option drawn in a tile, read through ECharts' own getInstanceByDom. */
  async function option(title: string): Promise<Option> {
    const box = (await tile(title)).locator('[data-chart]').first()
    return box.evaluate((el) => {
      const instance = (el as unknown as { chart: { id: string; getOption(): unknown } }).chart
      // the instance ECharts keeps for the box: getInstanceByDom looks it up by this attribute
      if ((el as unknown as { getAttribute(n: string): string | null }).getAttribute('_echarts_instance_') !== instance.id) throw new Error('not the box\'s ECharts instance')
      return JSON.parse(JSON.stringify(instance.getOption()))
    })
  }

  test('XAxisSplitLine "no": no vertical grid lines on a chart, none along the value axis of horizontal bars and of a stackgraph', async () => {
    expect((await option('Chart')).xAxis[0].splitLine.show).toBe(true)
    const off = await option('Chart, no vertical lines')
    expect(off.xAxis[0].splitLine.show).toBe(false)
    expect(off.yAxis[0].splitLine.show).toBe(true)
    // horizontal bars: the x axis holds the values, the y axis the time
    const bars = await option('Bars')
    expect([bars.xAxis[0].type, bars.yAxis[0].type, bars.xAxis[0].splitLine.show]).toEqual(['value', 'time', true])
    const barsOff = await option('Bars, no value lines')
    expect([barsOff.xAxis[0].splitLine.show, barsOff.yAxis[0].splitLine.show]).toEqual([false, true])
    expect((await option('Stack')).xAxis[0].splitLine.show).toBe(true)
    expect((await option('Stack, no lines, log')).xAxis[0].splitLine.show).toBe(false)
  }, BROWSER_TEST_MS)

  test('YAxisSplitLine "no": no horizontal grid lines', async () => {
    expect((await option('Chart')).yAxis[0].splitLine.show).toBe(true)
    const off = await option('Chart, no horizontal lines')
    expect([off.xAxis[0].splitLine.show, off.yAxis[0].splitLine.show]).toEqual([true, false])
  }, BROWSER_TEST_MS)

  test('Rotate "yes": the time axis labels turned', async () => {
    expect((await option('Chart')).xAxis[0].axisLabel.rotate).toBe(0)
    expect((await option('Chart, turned labels')).xAxis[0].axisLabel.rotate).toBe(45)
  }, BROWSER_TEST_MS)

  test('Labels "no": a pie without its labels, the same slices', async () => {
    const pie = await option('Pie')
    const bare = await option('Pie, no labels')
    expect(pie.series[0].label.show).toBe(true)
    expect(bare.series[0].label.show).toBe(false)
    const counts = new Map<string, number>()
    for (const h of hosts) counts.set(h, (counts.get(h) ?? 0) + 1)
    for (const o of [pie, bare]) expect(new Map(o.series[0].data.map((d: { name: string; value: number }) => [d.name, d.value]))).toEqual(counts)
  }, BROWSER_TEST_MS)

  test('Precision: two decimals by default, a given count of decimals, "no" for the number as it is', async () => {
    const value = async (title: string) => (await tile(title)).locator('.card-value').innerText()
    expect(await value('Card')).toBe(mean.toFixed(2))
    expect(await value('Card, 3 decimals')).toBe(mean.toFixed(3))
    // as it is: every digit the number has (the server's mean, within a rounding of the last bit)
    const exact = await value('Card, as is')
    expect(exact.length).toBeGreaterThan(12)
    expect(Math.abs(Number(exact) - mean)).toBeLessThan(1e-12)
    // a gauge's number too: its detail formatter, called in the page
    const detail = await (await tile('Gauge, no range, 1 decimal')).locator('[data-chart]').evaluate((el, n) => {
      const o = (el as unknown as { chart: { getOption(): { series: { detail: { formatter: (v: number) => string } }[] } } }).chart.getOption()
      return o.series[0]!.detail.formatter(n)
    }, mean)
    expect(detail).toBe(mean.toFixed(1))
  }, BROWSER_TEST_MS)

  test('Range "no": a number card without its min to max, a gauge without its scale', async () => {
    expect(await (await tile('Card')).locator('.card-range').innerText()).toBe('0 to 10')
    await (await tile('Card, no range')).locator('.card-value').waitFor()
    expect(await (await tile('Card, no range')).locator('.card-range').count()).toBe(0)
    const gauge = await option('Gauge')
    const plain = await option('Gauge, no range, 1 decimal')
    expect([gauge.series[0].min, gauge.series[0].max, gauge.series[0].axisLabel.show]).toEqual([0, 10, true])
    expect(plain.series[0].axisLabel.show).toBe(false)
    expect(plain.series[0].data[0].value).toBeCloseTo(mean, 10)
  }, BROWSER_TEST_MS)

  test('Background "no": number cards without their panel', async () => {
    const look = (l: Locator) =>
      l.locator('.card').first().evaluate((el) => {
        const style = (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string; borderTopColor: string } }).getComputedStyle(el)
        return { background: style.backgroundColor, border: style.borderTopColor }
      })
    const panel = await look(await tile('Card'))
    const bare = await look(await tile('Card, no panel'))
    expect(panel.background).not.toBe('rgba(0, 0, 0, 0)')
    expect(bare).toEqual({ background: 'rgba(0, 0, 0, 0)', border: 'rgba(0, 0, 0, 0)' })
    expect(await (await tile('Card, no panel')).locator('.card-value').innerText()).toBe(mean.toFixed(2))
  }, BROWSER_TEST_MS)

  test('LogScale "yes" on a stackgraph: a logarithmic value axis', async () => {
    expect((await option('Stack')).xAxis[0].type).toBe('value')
    expect((await option('Stack, no lines, log')).xAxis[0].type).toBe('log')
  }, BROWSER_TEST_MS)

  test('Stack, Smoothing, ConnectNulls, LogScale on a chart; Smoothing and Orientation also under values', async () => {
    const plain = await option('Chart')
    for (const x of plain.series) expect([x.stack, x.smooth, x.connectNulls]).toEqual([undefined, false, false])
    expect(plain.yAxis[0].type).toBe('value')
    const styled = await option('Chart, stacked, smooth, connected, log')
    expect(styled.series.length).toBe(plain.series.length)
    for (const x of styled.series) expect([x.stack, x.smooth, x.connectNulls]).toEqual(['total', true, true])
    expect(styled.yAxis[0].type).toBe('log')
    for (const x of (await option('Chart, smooth (older place)')).series) expect(x.smooth).toBe(true)
    const older = await option('Bars, horizontal (older place)')
    expect([older.xAxis[0].type, older.yAxis[0].type]).toEqual(['value', 'time'])
    expect(older.series.every((x: Option) => x.type === 'bar')).toBe(true)
  }, BROWSER_TEST_MS)

  test('ChartType: a chart tile drawn as an area chart', async () => {
    expect((await option('Chart')).series.every((x: Option) => x.type === 'line' && x.areaStyle === undefined)).toBe(true)
    expect((await option('Chart as area')).series.every((x: Option) => x.type === 'line' && x.areaStyle !== undefined)).toBe(true)
  }, BROWSER_TEST_MS)

  test('IncludeOther "no": the chart without its other series', async () => {
    const counts = new Map<string, number>()
    for (const h of hosts) counts.set(h, (counts.get(h) ?? 0) + 1)
    const top = [...counts].sort((a, b) => b[1] - a[1])[0]![0]
    expect((await option('Top and other')).series.map((x: Option) => x.name).sort()).toEqual([top, 'other'].sort())
    expect((await option('Top only')).series.map((x: Option) => x.name)).toEqual([top])
  }, BROWSER_TEST_MS)

  test('values.columns: a table showing the columns named', async () => {
    const head = async (title: string) => (await (await tile(title)).locator('thead th').allInnerTexts()).map((h) => h.replace(/[▲▼]/g, '').trim())
    expect(await head('Table')).toEqual(['host', 'count'])
    expect(await head('Table, count only')).toEqual(['count'])
    // nothing on the dashboard logged an error or broke the CSP
    expectClean(await dashboard())
  }, BROWSER_TEST_MS)
})
