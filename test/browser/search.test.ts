// The console's search page in Chromium against a real server: the four worked examples of the query language
// (docs/query-language.md) run from the page over generated entries, and what is drawn — table cells, chart series
// and points read through ECharts' own API, number cards — compared with values computed here by plain loops over
// the entries sent. Also: chart options, pie, donut, gauges and a stackgraph; a parse error shown at its position as
// it is typed and a launch refused in the server's words; background, save, stop, delete, a download; a link that
// reruns its query and one that attaches to a search; the overview's zoom; the phone-sized window; no console error
// or CSP violation, and no serious accessibility violation.
import { expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { describeWithServers } from '../services'
import { accessibilityViolations, BROWSER_TEST_MS, type ConsolePage, consoleWorld, expectClean, screenshot, STEP_MS } from './harness'

/** The four queries, exactly as docs/query-language.md writes them (checked below). */
const EXAMPLES = {
  errorsPerMinute: 'tag=syslog syslog Hostname Severity<=3 | stats count by Hostname over 1m | chart count by Hostname',
  topUrls: 'tag=access regex "\\"[A-Z]+ (?P<url>\\S+) HTTP" | stats count by url | sort by count desc | limit 10 | table url count',
  p95Latency: 'tag=api json endpoint latency | stats p95(latency) by endpoint | table endpoint p95',
  uniqueUsersPerDay: 'tag=app kv user | stats unique_count(user) over 1d | chart unique_count',
} as const

const MINUTE = 60_000
const DAY = 86_400_000
/** The data's first day: a whole UTC day, six days ago (the unique-users lines span four days from it). */
const DAY0 = Math.floor(Date.now() / DAY) * DAY - 6 * DAY
/** The syslog, access and api lines lie in one hour of the first day. */
const T0 = DAY0 + 10 * 3_600_000

/** What the functions run in the page see (this file is type-checked without the DOM library). */
interface BrowserGlobal {
  document: { querySelector(selector: string): { textContent: string | null } | null }
}

interface Line {
  ts: number
  text: string
}

const hosts = ['web-1', 'web-2', 'db-1', 'cache-1']
const syslogLines = Array.from({ length: 600 }, (_, i) => {
  const ts = T0 + i * 1_000
  const host = hosts[((i * 5 + (i >> 4)) % 7) % hosts.length]! // uneven: 95, 91, 78 and 36 errors
  const severity = (i * 7 + (i >> 3)) % 8
  const time = new Date(ts).toISOString().replace('.000Z', 'Z')
  return { ts, host, severity, text: `<${8 + severity}>1 ${time} ${host} nginx ${1000 + i} - - request ${i} finished` }
})

// URL k is requested 5 + 2k times: every count differs, so the top 10 and their order are one answer
const requests: string[] = []
for (let k = 0; k < 14; k++) for (let j = 0; j < 5 + 2 * k; j++) requests.push(`/page/${k}`)
const accessLines: Line[] = requests.map((_, i) => {
  const url = requests[(i * 101) % requests.length]!
  return { ts: T0 + i * 1_000, text: `198.51.100.${i % 250} - - [01/Jan/2026:00:00:00 +0000] "GET ${url} HTTP/1.1" 200 ${100 + i} "-" "curl/8.5"` }
})
// the permutation (101 is coprime to the count) keeps every request once
expect(new Set(requests.map((_, i) => (i * 101) % requests.length)).size).toBe(requests.length)

const endpoints = ['/api/users', '/api/orders', '/health']
const apiLines = Array.from({ length: 900 }, (_, i) => {
  const e = (i * 3 + (i >> 5)) % endpoints.length
  const latency = Math.round((5 + e * 20 + ((i * 7919) % 1000) ** 2 / (2000 + e * 500)) * 10) / 10
  const endpoint = endpoints[e]!
  return { ts: T0 + i * 2_000, endpoint, latency, text: JSON.stringify({ endpoint, latency, status: 200 }) }
})

const appLines = Array.from({ length: 4 * 48 }, (_, i) => {
  const ts = DAY0 + i * 30 * MINUTE
  const day = Math.floor(i / 48)
  const user = `u${((i * i * 7 + i * 3) % (19 - day * 4)) + day * 3}`
  return { ts, user, text: `level=info user=${user} action=login` }
})

const iso = (ms: number) => new Date(ms).toISOString()
/** A time as the page shows it (UTC, to the second). */
const showTime = (ms: number) => iso(ms).replace('T', ' ').replace(/\.\d{3}Z$/, ' UTC')

/** Opens the search page on a link that runs `query` over [start, end), and waits until its search finished. */
async function runLink(opened: ConsolePage, world: { url: string }, query: string, start: number, end: number): Promise<void> {
  const { page } = opened
  const hash = `#/search?${new URLSearchParams({ q: query, start: iso(start), end: iso(end) })}`
  await page.goto(`${world.url}/${hash}`)
  await finished(page)
}

async function finished(page: Page): Promise<void> {
  await page.locator('.search-status', { hasText: 'Finished' }).waitFor({ timeout: STEP_MS })
}

/** The drawn chart's series through ECharts' API: name and [time ms, value] points. */
async function chartSeries(page: Page, selector = '.result [data-chart]'): Promise<{ name: string; type: string; data: [number, number | null][] }[]> {
  await page.locator(selector).first().waitFor()
  return page.locator(selector).first().evaluate((el) => {
    const chart = (el as unknown as { chart: { getOption(): { series: { name: string; type: string; data: [number, number | null][] }[] } } }).chart
    return chart.getOption().series.map((s) => ({ name: s.name, type: s.type, data: s.data }))
  })
}

async function tableCells(page: Page): Promise<{ head: string[]; rows: string[][] }> {
  const table = page.locator('.result table.results')
  await table.waitFor()
  const head = await table.locator('thead th').allInnerTexts()
  const rows = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')))
  return { head: head.map((h) => h.replace(/[▲▼]/g, '').trim()), rows }
}

describeWithServers('web console: the search page', () => {
  const world = consoleWorld()

  async function ingest(tag: string, lines: Line[]) {
    for (let i = 0; i < lines.length; i += 500)
      await world.api(
        'POST',
        '/api/ingest/json',
        lines.slice(i, i + 500).map((l) => ({ TS: iso(l.ts), Tag: tag, SRC: '192.0.2.7', Data: Buffer.from(l.text).toString('base64') })),
      )
  }

  test('docs/query-language.md writes the four queries as this test runs them; the entries are ingested', async () => {
    const doc = await Bun.file(`${import.meta.dir}/../../docs/query-language.md`).text()
    for (const q of Object.values(EXAMPLES)) expect(doc.split('\n')).toContain(q)
    await ingest('syslog', syslogLines)
    await ingest('access', accessLines)
    await ingest('api', apiLines)
    await ingest('app', appLines)
  }, BROWSER_TEST_MS)

  test('errors per minute by host: one chart series per host, one point per minute, read through ECharts', async () => {
    const opened = await world.signedIn()
    const { page } = opened
    await runLink(opened, world, EXAMPLES.errorsPerMinute, T0, T0 + 10 * MINUTE)
    const want = new Map<string, number>()
    for (const l of syslogLines) {
      if (l.severity > 3) continue
      const key = `${Math.floor(l.ts / MINUTE) * MINUTE} ${l.host}`
      want.set(key, (want.get(key) ?? 0) + 1)
    }
    const series = await chartSeries(page)
    expect(series.map((s) => s.name).sort()).toEqual([...new Set(syslogLines.filter((l) => l.severity <= 3).map((l) => l.host))].sort())
    const got = new Map<string, number>()
    for (const s of series) {
      expect(s.type).toBe('line')
      expect(s.data).toHaveLength(10) // ten minutes, a point each
      for (const [t, v] of s.data) if (v !== null) got.set(`${t} ${s.name}`, v)
    }
    expect(want.size).toBeGreaterThan(20)
    expect(got).toEqual(want)
    // drawn as bars, the same points
    await page.getByLabel('Draw as').selectOption('bar')
    await page.waitForFunction(() => ((globalThis as unknown as BrowserGlobal).document.querySelector('.result [data-chart]') as unknown as { chart?: { getOption(): { series: { type: string }[] } } })?.chart?.getOption().series[0]?.type === 'bar')
    const bars = await chartSeries(page)
    expect(new Map(bars.flatMap((s) => s.data.filter(([, v]) => v !== null).map(([t, v]) => [`${t} ${s.name}`, v])))).toEqual(want)
    // a tooltip on hover is drawn on the canvas (no HTML with inline styles: expectClean sees no CSP violation)
    await page.locator('.result [data-chart]').hover()
    await screenshot(page, 'search-chart')
    expectClean(opened)
    await opened.page.context().close()
  }, BROWSER_TEST_MS)

  test('the top 10 URLs: a table of the ten most requested, most first; sorting by a column', async () => {
    const opened = await world.signedIn()
    const { page } = opened
    await runLink(opened, world, EXAMPLES.topUrls, T0 - MINUTE, T0 + 2 * 3_600_000)
    const counts = new Map<string, number>()
    for (const url of requests) counts.set(url, (counts.get(url) ?? 0) + 1)
    const want = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 10).map(([u, n]) => [u, String(n)])
    const { head, rows } = await tableCells(page)
    expect(head).toEqual(['url', 'count'])
    expect(rows).toEqual(want)
    // sorted by count, least first, then back
    await page.getByRole('button', { name: 'count' }).click()
    expect((await tableCells(page)).rows).toEqual([...want].reverse())
    // a column left out
    await page.getByText('Columns (2 of 2)').click()
    await page.getByRole('checkbox', { name: 'url' }).uncheck()
    expect((await tableCells(page)).head).toEqual(['count'])
    await screenshot(page, 'search-table')
    expectClean(opened)
    await opened.page.context().close()
  }, BROWSER_TEST_MS)

  test('p95 latency per endpoint: a row per endpoint within 1 % of the exact 95th percentile', async () => {
    const opened = await world.signedIn()
    const { page } = opened
    await runLink(opened, world, EXAMPLES.p95Latency, T0 - MINUTE, T0 + 2 * 3_600_000)
    const { head, rows } = await tableCells(page)
    expect(head).toEqual(['endpoint', 'p95'])
    expect(rows.map((r) => r[0]).sort()).toEqual([...endpoints].sort())
    for (const [endpoint, shown] of rows) {
      const sorted = apiLines.filter((l) => l.endpoint === endpoint).map((l) => l.latency).sort((a, b) => a - b)
      const exact = sorted[Math.floor(0.95 * (sorted.length - 1))]!
      expect({ endpoint, within: Math.abs(Number(shown) - exact) <= 0.01 * exact + 1e-9 }).toEqual({ endpoint: endpoint!, within: true })
    }
    expectClean(opened)
    await opened.page.context().close()
  }, BROWSER_TEST_MS)

  test('unique users per day: a chart point per UTC day; the overview zooms to a window', async () => {
    const opened = await world.signedIn()
    const { page } = opened
    await runLink(opened, world, EXAMPLES.uniqueUsersPerDay, DAY0, DAY0 + 4 * DAY)
    const perDay = new Map<number, Set<string>>()
    for (const l of appLines) {
      const day = Math.floor(l.ts / DAY) * DAY
      if (!perDay.has(day)) perDay.set(day, new Set())
      perDay.get(day)!.add(l.user)
    }
    const want = [...perDay].sort((a, b) => a[0] - b[0]).map(([day, users]) => [day, users.size])
    expect(new Set(want.map(([, n]) => n)).size).toBeGreaterThan(1)
    const [series, ...others] = await chartSeries(page)
    expect(others).toEqual([])
    expect(series!.name).toBe('unique_count')
    expect(series!.data).toEqual(want as [number, number][])
    // the overview counts every entry read over the range
    const overview = await page.locator('.overview [data-chart]').evaluate((el) => {
      const o = (el as unknown as { chart: { getOption(): { series: { data: { value: [number, number] }[] }[] } } }).chart.getOption()
      return o.series[0]!.data.map((d) => d.value[1])
    })
    expect(overview.reduce((a, b) => a + b, 0)).toBe(appLines.length)
    // dragging across the overview within the first day zooms to that window: the chart then holds that day's point
    const box = (await page.locator('.overview [data-chart]').boundingBox())!
    const [x1, x2] = await page.locator('.overview [data-chart]').evaluate(
      (el, [a, b]) => {
        const chart = (el as unknown as { chart: { convertToPixel(f: unknown, v: unknown): number[] } }).chart
        return [chart.convertToPixel({ seriesIndex: 0 }, [a, 0])[0]!, chart.convertToPixel({ seriesIndex: 0 }, [b, 0])[0]!]
      },
      [DAY0 + 0.1 * DAY, DAY0 + 0.9 * DAY],
    )
    await page.mouse.move(box.x + x1!, box.y + box.height / 2)
    await page.mouse.down()
    await page.mouse.move(box.x + (x1! + x2!) / 2, box.y + box.height / 2, { steps: 4 })
    await page.mouse.move(box.x + x2!, box.y + box.height / 2, { steps: 4 })
    await page.mouse.up()
    await page.getByRole('button', { name: 'Whole range' }).waitFor()
    await page.waitForFunction(
      (n) => {
        const chart = ((globalThis as unknown as BrowserGlobal).document.querySelector('.result [data-chart]') as unknown as { chart?: { getOption(): { series: { data: unknown[] }[] } } })?.chart
        return chart !== undefined && chart.getOption().series[0]!.data.length === n
      },
      1,
    )
    expect((await chartSeries(page))[0]!.data).toEqual([want[0]] as [number, number][])
    await page.getByRole('button', { name: 'Whole range' }).click()
    // from the keyboard: the middle half of the four days is the second and third day
    await page.getByRole('button', { name: 'Zoom in' }).focus()
    await page.keyboard.press('Enter')
    await expect(page.locator('.zoom-window').innerText()).resolves.toBe(`${showTime(DAY0 + DAY)} to ${showTime(DAY0 + 3 * DAY)}`)
    await page.waitForFunction(() => ((globalThis as unknown as BrowserGlobal).document.querySelector('.result [data-chart]') as unknown as { chart?: { getOption(): { series: { data: unknown[] }[] } } })?.chart?.getOption().series[0]?.data.length === 2)
    expect((await chartSeries(page))[0]!.data).toEqual(want.slice(1, 3) as [number, number][])
    await page.getByRole('button', { name: 'Whole range' }).click()
    await page.waitForFunction(() => ((globalThis as unknown as BrowserGlobal).document.querySelector('.result [data-chart]') as unknown as { chart?: { getOption(): { series: { data: unknown[] }[] } } })?.chart?.getOption().series[0]?.data.length === 4)
    await screenshot(page, 'search-overview')
    expectClean(opened)
    await opened.page.context().close()
  }, BROWSER_TEST_MS)

  test('chart options, pie and donut, gauges and a stackgraph: drawn through ECharts as the answer says', async () => {
    const opened = await world.signedIn()
    const { page } = opened
    const errors = syslogLines.filter((l) => l.severity <= 3)
    const perHost = new Map<string, number>()
    for (const l of errors) perHost.set(l.host, (perHost.get(l.host) ?? 0) + 1)
    // limit 3: the two largest series and `other`
    await runLink(opened, world, 'tag=syslog syslog Hostname Severity<=3 | stats count by Hostname over 1m | chart count by Hostname limit 3', T0, T0 + 10 * MINUTE)
    const ranked = [...perHost].sort((a, b) => b[1] - a[1])
    expect(ranked[1]![1]).toBeGreaterThan(ranked[2]![1]) // one answer for the two largest
    const names = (await chartSeries(page)).map((s) => s.name)
    expect(names.sort()).toEqual([ranked[0]![0], ranked[1]![0], 'other'].sort())
    const option = (selector = '.result [data-chart]') =>
      page.locator(selector).first().evaluate((el) => {
        const o = (el as unknown as { chart: { getOption(): Record<string, any> } }).chart.getOption()
        return { series: o.series, xAxis: o.xAxis, yAxis: o.yAxis } as { series: any[]; xAxis: any[]; yAxis: any[] }
      })
    await page.locator('summary', { hasText: 'Chart options' }).click()
    for (const label of ['Stacked', 'Smooth lines', 'Connect gaps', 'Logarithmic scale']) await page.getByLabel(label).check()
    await page.waitForFunction(() => ((globalThis as unknown as BrowserGlobal).document.querySelector('.result [data-chart]') as unknown as { chart: { getOption(): { yAxis: { type: string }[] } } }).chart.getOption().yAxis[0]!.type === 'log')
    const styled = await option()
    for (const s of styled.series) expect({ stack: s.stack, smooth: s.smooth, connectNulls: s.connectNulls }).toEqual({ stack: 'total', smooth: true, connectNulls: true })
    await page.getByLabel('Leave out "other"').check()
    await page.waitForFunction(() => ((globalThis as unknown as BrowserGlobal).document.querySelector('.result [data-chart]') as unknown as { chart: { getOption(): { series: unknown[] } } }).chart.getOption().series.length === 2)
    expect((await chartSeries(page)).map((s) => s.name).sort()).toEqual([ranked[0]![0], ranked[1]![0]].sort())
    await page.getByLabel('Leave out "other"').uncheck()
    // horizontal bars: time on the vertical axis
    await page.getByLabel('Draw as').selectOption('bar')
    await page.getByLabel('Horizontal bars').check()
    await page.waitForFunction(() => ((globalThis as unknown as BrowserGlobal).document.querySelector('.result [data-chart]') as unknown as { chart: { getOption(): { yAxis: { type: string }[] } } }).chart.getOption().yAxis[0]!.type === 'time')
    expect((await option()).series.every((s) => s.type === 'bar')).toBe(true)
    // a pie: each series' total over the range; a donut: the same with a hole
    await page.getByLabel('Draw as').selectOption('pie')
    await page.waitForFunction(() => ((globalThis as unknown as BrowserGlobal).document.querySelector('.result [data-chart]') as unknown as { chart: { getOption(): { series: { type: string }[] } } }).chart.getOption().series[0]!.type === 'pie')
    const pie = (await option()).series[0]
    const otherTotal = ranked.slice(2).reduce((sum, [, n]) => sum + n, 0)
    expect(new Map(pie.data.map((d: { name: string; value: number }) => [d.name, d.value]))).toEqual(new Map([[ranked[0]![0], ranked[0]![1]], [ranked[1]![0], ranked[1]![1]], ['other', otherTotal]]))
    await page.getByLabel('Draw as').selectOption('donut')
    await page.waitForFunction(() => Array.isArray(((globalThis as unknown as BrowserGlobal).document.querySelector('.result [data-chart]') as unknown as { chart: { getOption(): { series: { radius: unknown }[] } } }).chart.getOption().series[0]!.radius))
    await screenshot(page, 'search-donut')

    // a gauge per host: the number of its errors
    await runLink(opened, world, 'tag=syslog syslog Hostname Severity<=3 | stats count by Hostname | gauge count', T0, T0 + 10 * MINUTE)
    await page.locator('.gauges [data-chart]').first().waitFor()
    const gauges = await page.locator('.gauges [data-chart]').evaluateAll((els) =>
      els.map((el) => (el as unknown as { chart: { getOption(): { series: { type: string; data: { name: string; value: number }[] }[] } } }).chart.getOption().series[0]!),
    )
    expect(gauges.every((g) => g.type === 'gauge')).toBe(true)
    expect(new Map(gauges.map((g) => [g.data[0]!.name, g.data[0]!.value]))).toEqual(perHost)

    // a stackgraph: a bar per host made of its severities
    await runLink(opened, world, 'tag=syslog syslog Hostname Severity<=3 | stats count by Hostname Severity | stackgraph Hostname Severity count', T0, T0 + 10 * MINUTE)
    // "Finished" may show while the page still holds the gauges (charts too, without axes): wait for the bars' axis
    await page.waitForFunction(() => {
      const el = (globalThis as unknown as BrowserGlobal).document.querySelector('.result [data-chart]') as unknown as { chart?: { getOption(): { yAxis?: { data?: unknown[] }[] } } } | null
      return Array.isArray(el?.chart?.getOption().yAxis?.[0]?.data)
    })
    const stack = await option()
    const hostsShown: string[] = stack.yAxis[0].data
    const got = new Map<string, number>()
    for (const s of stack.series) s.data.forEach((v: number | null, i: number) => v !== null && got.set(`${hostsShown[i]} ${s.name}`, v))
    const want = new Map<string, number>()
    for (const l of errors) want.set(`${l.host} ${l.severity}`, (want.get(`${l.host} ${l.severity}`) ?? 0) + 1)
    expect(got).toEqual(want)
    await screenshot(page, 'search-stackgraph')
    expectClean(opened)
    await opened.page.context().close()
  }, BROWSER_TEST_MS)

  test('a number card shows the count of the entries', async () => {
    const opened = await world.signedIn()
    const { page } = opened
    await runLink(opened, world, 'tag=api json latency | stats count | numbercard count', T0 - MINUTE, T0 + 2 * 3_600_000)
    await expect(page.locator('.card .card-name').allInnerTexts()).resolves.toEqual(['count'])
    expect(await page.locator('.card .card-value').innerText()).toBe(apiLines.length.toLocaleString('en-US'))
    expectClean(opened)
    await opened.page.context().close()
  }, BROWSER_TEST_MS)

  test('a parse error is shown at its position as the query is typed; nothing runs', async () => {
    const opened = await world.signedIn()
    const { page } = opened
    await page.getByRole('link', { name: 'Search', exact: true }).click()
    const before = ((await world.api('GET', '/api/searchctrl')) as unknown[]).length
    const query = 'tag=api json endpoint | limit 0'
    await page.getByLabel('Query').fill(query)
    const alert = page.locator('#query-error')
    await alert.waitFor()
    const position = query.lastIndexOf('0')
    expect(await alert.getAttribute('data-position')).toBe(String(position))
    // the server's own message (POST /api/parse answers the same as the socket)
    const parsed = (await world.api('POST', '/api/parse', { SearchString: query })) as { ParseError: string }
    expect(await alert.locator('span').innerText()).toBe(parsed.ParseError)
    const mark = (await alert.locator('pre').innerText()).split('\n')
    expect(mark[0]).toBe(query)
    expect(mark[1]!.indexOf('^')).toBe(position)
    await expect(page.getByLabel('Query').getAttribute('aria-invalid')).resolves.toBe('true')
    // a module is suggested after a pipe; picking it completes the word
    await page.getByLabel('Query').fill('tag=api json endpoint | stat')
    await page.getByRole('button', { name: 'stats', exact: true }).click()
    await expect(page.getByLabel('Query').inputValue()).resolves.toBe('tag=api json endpoint | stats')
    await screenshot(page, 'search-parse-error')
    expect(((await world.api('GET', '/api/searchctrl')) as unknown[]).length).toBe(before)
    expectClean(opened)
    await opened.page.context().close()
  }, BROWSER_TEST_MS)

  test('save, stop and delete a search; download its table as csv through a plain link', async () => {
    const opened = await world.signedIn()
    const { page } = opened
    await runLink(opened, world, EXAMPLES.p95Latency, T0 - MINUTE, T0 + 2 * 3_600_000)
    const id = (await page.locator('.actions .muted').innerText()).match(/Search (\d+)/)![1]!
    // stop: the search stops growing (it is finished here: a stop changes nothing but is accepted)
    await page.getByRole('button', { name: 'Stop' }).click()
    await page.getByText(/^Stopped/).waitFor()
    // a download of the renderer's csv: the browser fetches the link with the token cookie
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download csv' }).click()])
    const csv = await Bun.file((await download.path())!).text()
    const lines = csv.trimEnd().split('\r\n')
    expect(lines[0]).toBe('endpoint,p95')
    expect(lines.slice(1).map((l) => l.split(',')[0]).sort()).toEqual([...endpoints].sort())
    // background: the server keeps it without a client
    await page.getByRole('button', { name: 'Background' }).click()
    await page.getByText(/^Backgrounded: /).waitFor()
    expect(((await world.api('GET', `/api/searchctrl/${id}/details`)) as { State: string }).State).toContain('BACKGROUNDED')
    // save: the server holds it as saving or saved
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByText(/^Saved: /).waitFor()
    const details = (await world.api('GET', `/api/searchctrl/${id}/details`)) as { State: string }
    expect(details.State).toMatch(/SAV/)
    await screenshot(page, 'search-saved')
    // delete: gone from the server and from the page
    await page.getByRole('button', { name: 'Delete' }).click()
    await page.getByText('Type a query and run it.').waitFor()
    const listed = (await world.api('GET', '/api/searchctrl')) as { ID: string }[]
    expect(listed.map((s) => s.ID)).not.toContain(id)
    expectClean(opened)
    await opened.page.context().close()
  }, BROWSER_TEST_MS)

  test('a link with a search id attaches to that search and draws it; a refused launch shows the server\'s words', async () => {
    const opened = await world.signedIn()
    const { page } = opened
    const { SearchID } = (await world.api('POST', '/api/searchctrl/launch', {
      SearchString: EXAMPLES.p95Latency,
      SearchStart: iso(T0 - MINUTE),
      SearchEnd: iso(T0 + 2 * 3_600_000),
    })) as { SearchID: string }
    await page.goto(`${world.url}/#/search?id=${SearchID}`)
    await finished(page)
    const { head, rows } = await tableCells(page)
    expect(head).toEqual(['endpoint', 'p95'])
    expect(rows.map((r) => r[0]).sort()).toEqual([...endpoints].sort())
    await expect(page.getByLabel('Query').inputValue()).resolves.toBe(EXAMPLES.p95Latency)
    expect(await page.locator('.actions .muted').innerText()).toContain(`Search ${SearchID}`)
    // a link whose query the server refuses at launch: its message, and no search
    const before = ((await world.api('GET', '/api/searchctrl')) as unknown[]).length
    const bad = 'tag=api json endpoint | limit 0'
    await page.goto(`${world.url}/#/search?${new URLSearchParams({ q: bad, start: iso(T0), end: iso(T0 + MINUTE) })}`)
    const refusal = page.locator('.search-result .error')
    await refusal.waitFor()
    const parsed = (await world.api('POST', '/api/parse', { SearchString: bad })) as { ParseError: string }
    expect(await refusal.innerText()).toBe(parsed.ParseError)
    expect(((await world.api('GET', '/api/searchctrl')) as unknown[]).length).toBe(before)
    expectClean(opened)
    await opened.page.context().close()
  }, BROWSER_TEST_MS)

  test('run from the editor: the query and range go into the URL, and that link reruns it', async () => {
    const opened = await world.signedIn()
    const { page } = opened
    await page.goto(`${world.url}/#/search`)
    await page.getByLabel('Query').fill('tag=app kv user | stats count | numbercard count')
    await page.getByLabel('Time range').selectOption('-30d')
    await page.getByRole('button', { name: 'Run' }).click()
    await finished(page)
    expect(await page.locator('.card .card-value').innerText()).toBe(appLines.length.toLocaleString('en-US'))
    const url = page.url()
    expect(new URL(url).hash).toContain('start=-30d')
    const again = await world.signedIn()
    await again.page.goto(url)
    await finished(again.page)
    expect(await again.page.locator('.card .card-value').innerText()).toBe(appLines.length.toLocaleString('en-US'))
    expectClean(opened)
    expectClean(again)
    await opened.page.context().close()
    await again.page.context().close()
  }, BROWSER_TEST_MS)

  test('entries as text with their values; a phone-sized window; no serious accessibility violation', async () => {
    const opened = await world.signedIn(undefined, undefined, { width: 390, height: 800 })
    const { page } = opened
    await runLink(opened, world, 'tag=app kv user', DAY0, DAY0 + 4 * DAY)
    const entries = page.locator('.entries .entry')
    await expect(entries.count()).resolves.toBe(100) // the first page
    const first = await entries.first().innerText()
    // one of the lines sent, with its tag and its enumerated value
    expect(appLines.some((l) => first.includes(l.text) && first.includes(l.user))).toBe(true)
    expect(first).toContain('app')
    await page.getByRole('button', { name: 'Next 100' }).click()
    await page.waitForFunction(() => (globalThis as unknown as BrowserGlobal).document.querySelector('.pager .muted')?.textContent?.startsWith('Entries 101'))
    await screenshot(page, 'search-entries-phone')
    expect(await accessibilityViolations(page)).toEqual([])
    const wide = await world.signedIn()
    await runLink(wide, world, EXAMPLES.errorsPerMinute, T0, T0 + 10 * MINUTE)
    expect(await accessibilityViolations(wide.page)).toEqual([])
    expectClean(opened)
    expectClean(wide)
    await opened.page.context().close()
    await wide.page.context().close()
  }, BROWSER_TEST_MS)
})
