// The search page while a search grows, and stopping a running search. The page's search socket is routed through
// Playwright (page.routeWebSocket): every message goes to the real server and back, but while the test holds the
// search, the answers to the page's entries requests are cut to the first N results and say `Finished: false`. The
// test alone decides when the search "grows" (a larger N) and when it ends (the hold is let go), so what the page
// draws at each step is checked against what was sent, with no dependence on timing: each step waits until the page
// shows it.
import { expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { describeWithServers } from '../services'
import { accessibilityViolations, BROWSER_TEST_MS, consoleWorld, eventually, expectClean, screenshot } from './harness'

/** REQ_GET_ENTRIES, the page's request for a renderer's entries (plugins/ws/protocol.ts). */
const GET_ENTRIES = 0x10

interface Hold {
  /** How many results the page is shown. */
  results: number
  finished: boolean
}

type Msg = Record<string, any>

/** An entries answer cut to the hold's first results (entries, a table's rows, a chart's points), saying what the hold says. */
function held(data: Msg, hold: Hold): Msg {
  const e = data.Entries
  const entries = Array.isArray(e)
    ? e.slice(0, hold.results)
    : e && Array.isArray(e.Rows)
      ? { ...e, Rows: e.Rows.slice(0, hold.results) }
      : e && Array.isArray(e.Values)
        ? { ...e, Values: e.Values.slice(0, hold.results) }
        : e
  const first = data.EntryRange?.First ?? 0
  return { ...data, Entries: entries, EntryCount: hold.results, Finished: hold.finished, AdditionalEntries: false, EntryRange: { ...data.EntryRange, Last: first + hold.results } }
}

/** Routes the page's search socket; the returned control holds the page's searches back (`hold`) or lets them be. */
async function routeSearches(page: Page): Promise<{ hold: Hold | null }> {
  const control = { hold: null as Hold | null }
  const subprotos = new Set<string>()
  await page.routeWebSocket(/\/api\/ws\/search$/, (ws) => {
    const server = ws.connectToServer()
    server.onMessage((raw) => {
      let m: Msg
      try {
        m = JSON.parse(typeof raw === 'string' ? raw : raw.toString())
      } catch {
        return ws.send(raw)
      }
      if (m?.type === 'search' && m.data?.OutputSearchSubproto) subprotos.add(String(m.data.OutputSearchSubproto))
      const hold = control.hold
      if (hold && subprotos.has(m?.type) && m.data?.ID === GET_ENTRIES) {
        return ws.send(JSON.stringify({ ...m, data: held(m.data, hold) }))
      }
      ws.send(raw)
    })
  })
  return control
}


const status = (page: Page) => page.locator('.search-status').innerText()
const tableRows = (page: Page) =>
  page.locator('.result table.results tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')))

/** Waits until the page's status reads `text` and its table holds `rows` rows; those rows. */
async function shows(page: Page, text: string, rows: number): Promise<string[][]> {
  return eventually(async () => {
    if ((await status(page).catch(() => '')).trim() !== text) return undefined
    const drawn = await tableRows(page)
    return drawn.length === rows ? drawn : undefined
  }, `"${text}" with ${rows} rows`)
}

describeWithServers('web console: a search that grows, and one stopped while it runs', () => {
  const world = consoleWorld()
  const now = Date.now()
  const lines = Array.from({ length: 12 }, (_, i) => ({ ts: now - (40 - i * 3) * 60_000, host: `web-${(i * 7) % 5}`, n: i * 11 }))
  const query = 'tag=grow json host n | table host n'
  const link = `#/search?${new URLSearchParams({ q: query, start: new Date(now - 3_600_000).toISOString(), end: new Date(now + 60_000).toISOString() })}`
  let ingested: Promise<unknown> | undefined
  const ingest = () =>
    (ingested ??= world.api(
      'POST',
      '/api/ingest/json',
      lines.map((l) => ({ TS: new Date(l.ts).toISOString(), Tag: 'grow', Data: Buffer.from(JSON.stringify({ host: l.host, n: l.n })).toString('base64') })),
    ))

  test('partial results of a running search are drawn, then each step it grows, then the final result', async () => {
    await ingest()
    const opened = await world.signedIn()
    const { page } = opened
    const control = await routeSearches(page)
    control.hold = { results: 3, finished: false }
    await page.goto(`${world.url}/${link}`)
    const three = await shows(page, 'Running: 3 results so far', 3)
    await page.locator('progress[aria-label="Search progress"]').waitFor()
    await screenshot(page, 'search-growing')
    expect(await accessibilityViolations(page)).toEqual([])
    // the search grows: the page, still polling, draws the larger result
    control.hold = { results: 7, finished: false }
    const seven = await shows(page, 'Running: 7 results so far', 7)
    // it ends: the page draws the whole result and says so
    control.hold = null
    const all = await shows(page, `Finished: ${lines.length} results`, lines.length)
    expect(await page.locator('progress[aria-label="Search progress"]').count()).toBe(0)
    // each step showed the first results of the final answer, which is every line sent
    expect(three).toEqual(all.slice(0, 3))
    expect(seven).toEqual(all.slice(0, 7))
    expect(all.map(([host, n]) => `${host} ${n}`).sort()).toEqual(lines.map((l) => `${l.host} ${l.n}`).sort())
    expectClean(opened)
    await page.context().close()
  }, BROWSER_TEST_MS)

  test('a growing chart: its points drawn as they come, then all of them', async () => {
    await ingest()
    const opened = await world.signedIn()
    const { page } = opened
    const control = await routeSearches(page)
    control.hold = { results: 2, finished: false }
    const chartQuery = 'tag=grow json host | stats count by host over 10m | chart count by host'
    await page.goto(`${world.url}/#/search?${new URLSearchParams({ q: chartQuery, start: new Date(now - 3_600_000).toISOString(), end: new Date(now).toISOString() })}`)
    /** The chart's series as drawn (read through ECharts' API), once its status reads `text` and every series' point count passes `points`. */
    const drawn = (text: string, points: (n: number) => boolean) =>
      eventually(async () => {
        if ((await status(page).catch(() => '')).trim() !== text) return undefined
        const series = await page
          .locator('.result [data-chart]')
          .evaluate((el) => (el as unknown as { chart?: { getOption(): { series: { name: string; data: [number, number | null][] }[] } } }).chart?.getOption().series.map((x) => ({ name: x.name, data: x.data })))
          .catch(() => undefined)
        return series && series.length > 0 && series.every((x) => points(x.data.length)) ? series : undefined
      }, `${text} with its points`)
    const two = await drawn('Running: 2 results so far', (n) => n === 2)
    control.hold = { results: 4, finished: false }
    const four = await drawn('Running: 4 results so far', (n) => n === 4)
    control.hold = null
    const all = await eventually(async () => {
      const text = (await status(page)).trim()
      return text.startsWith('Finished') ? text : undefined
    }, 'the end')
    // the whole hour: a point per window of the range (more than the four shown before)
    const final = await drawn(all, (n) => n > 4)
    // the partial drawings were the first points of the final one; the final counts are those of the lines sent
    for (const [step, n] of [[two, 2], [four, 4]] as const)
      expect(step.map((x) => [x.name, x.data])).toEqual(final.map((x) => [x.name, x.data.slice(0, n)]))
    const want = new Map<string, number>()
    for (const l of lines) want.set(l.host, (want.get(l.host) ?? 0) + 1)
    expect(new Map(final.map((x) => [x.name, x.data.reduce((t, [, v]) => t + (v ?? 0), 0)]))).toEqual(want)
    expectClean(opened)
    await page.context().close()
  }, BROWSER_TEST_MS)

  test('Background and Stop on a running search: the API shows it kept and stopped, and the page says so', async () => {
    await ingest()
    const opened = await world.signedIn()
    const { page } = opened
    const control = await routeSearches(page)
    control.hold = { results: 4, finished: false }
    // the server's answer to the stop is passed on only once the hold says the search stopped where it was
    const stops: number[] = []
    await page.route('**/api/searchctrl/*/stop', async (route) => {
      const response = await route.fetch()
      stops.push(response.status())
      if (response.ok()) control.hold = { results: 4, finished: true }
      await route.fulfill({ response })
    })
    await page.goto(`${world.url}/${link}`)
    const partial = await shows(page, 'Running: 4 results so far', 4)
    const id = (await page.locator('.actions .muted').innerText()).match(/Search (\d+)/)![1]!

    await page.getByRole('button', { name: 'Background' }).click()
    await page.getByText(/^Backgrounded: /).waitFor()
    expect(((await world.api('GET', `/api/searchctrl/${id}/details`)) as { State: string }).State).toContain('BACKGROUNDED')
    expect((await status(page)).trim()).toBe('Running: 4 results so far')

    await page.getByRole('button', { name: 'Stop' }).click()
    const stopped = await shows(page, 'Stopped: 4 results', 4)
    expect(stops).toEqual([200])
    expect(stopped).toEqual(partial)
    await page.getByText(/^Stopped: ACTIVE/).waitFor()
    // the server's record of the search: ended (a finish time), kept (backgrounded), its results readable
    const [summary] = (await world.api('GET', `/api/searchctrl/${id}`)) as { ID: string; Finished: string }[]
    expect(summary!.ID).toBe(id)
    expect(Date.parse(summary!.Finished)).toBeGreaterThan(now - 60_000)
    const details = (await world.api('GET', `/api/searchctrl/${id}/details`)) as { State: string; ItemCount: number }
    expect(details.State).toBe('ACTIVE/BACKGROUNDED')
    expect(details.ItemCount).toBe(lines.length)
    await screenshot(page, 'search-stopped')
    expectClean(opened)
    await page.context().close()
    await world.api('DELETE', `/api/searchctrl/${id}`)
  }, BROWSER_TEST_MS)
})
