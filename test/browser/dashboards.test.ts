// The console's dashboards: the list (own, shared, global), creating one and editing its searches, tiles and
// layout through the browser (read back from the API), the tiles laid out by span, sharing and deleting; no console
// error or CSP violation; axe on the list, a dashboard and the editor; screenshots.
import { describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { durationMs, durationText, gridColumns, rangeOf, readData } from '../../web/src/dashboards/model'
import { describeWithServers } from '../services'
import { accessibilityViolations, BROWSER_TEST_MS, consoleWorld, eventually, expectClean, screenshot } from './harness'

const USER = 'dana'
const USER_PASSWORD = 'dana-password-1'

interface Dashboard {
  ID: number
  Name: string
  Description: string
  UID: number
  GIDs: number[]
  Global: boolean
  Data: {
    version?: number
    timeframe?: { durationString?: string | null; timeframe?: string; start?: string | null; end?: string | null }
    searches: { alias?: string | null; query?: string; searchID?: string | number; reference?: { id: string; type: string } }[]
    tiles: { id: number; title: string; renderer: string; span: { col: number; row: number; x?: number; y?: number }; searchesIndex: number; rendererOptions: Record<string, unknown> }[]
    [other: string]: unknown
  }
}


const section = (page: Page, title: string) => page.locator('div', { has: page.getByRole('heading', { name: title, exact: true }) }).last()

describeWithServers('web console dashboards', () => {
  const world = consoleWorld()
  let people: Promise<{ uid: number; gid: number }> | undefined
  /** dana, a non-admin member of the group ops (made once, for whichever test runs first). */
  const setUp = () =>
    (people ??= (async () => {
      const uid = (await world.api('POST', '/api/users', { User: USER, Pass: USER_PASSWORD, Name: 'Dana', Email: 'dana@example.org', Admin: false })) as number
      const gid = (await world.api('POST', '/api/groups', { Name: 'ops', Desc: '' })) as number
      await world.api('POST', `/api/users/${uid}/group`, { GIDs: [gid] })
      return { uid, gid }
    })())

  test('the list: own, shared with a group, global; nothing else', async () => {
    const { gid } = await setUp()
    await world.api('POST', '/api/dashboards', { Name: 'Everyone sees', Description: '', Global: true, Data: {} })
    await world.api('POST', '/api/dashboards', { Name: 'Ops board', Description: '', GIDs: [gid], Data: {} })
    await world.api('POST', '/api/dashboards', { Name: 'Admin only', Description: '', Data: {} })
    await world.api('POST', '/api/dashboards', { Name: 'Danas board', Description: 'mine', Data: {} }, USER, USER_PASSWORD)

    const opened = await world.signedIn(USER, USER_PASSWORD)
    const { page } = opened
    await page.goto(`${world.url}/#/dashboards`)
    await page.getByRole('link', { name: 'Danas board' }).waitFor()
    const names = async (title: string) => (await section(page, title).getByRole('link').allInnerTexts()).sort()
    expect(await names('Your dashboards')).toEqual(['Danas board'])
    expect(await names('Shared with your groups')).toEqual(['Ops board'])
    expect(await names('Global')).toEqual(['Everyone sees'])
    expect(await page.getByRole('link', { name: 'Admin only' }).count()).toBe(0)
    // only one's own dashboards offer Delete
    expect(await section(page, 'Global').getByRole('button', { name: 'Delete' }).count()).toBe(0)
    expect(await section(page, 'Your dashboards').getByRole('button', { name: 'Delete' }).count()).toBe(1)
    await screenshot(page, 'dashboards')
    expect(await accessibilityViolations(page)).toEqual([])

    // opening one that is not shared with dana: the API's refusal, as text
    const [hidden] = ((await world.api('GET', '/api/dashboards')) as Dashboard[]).filter((d) => d.Name === 'Admin only')
    await page.goto(`${world.url}/#/dashboards/${hidden!.ID}`)
    const refusal = await page.getByRole('alert').textContent()
    const direct = await fetch(`${world.url}/api/dashboards/${hidden!.ID}`, {
      headers: { authorization: `Bearer ${((await (await fetch(`${world.url}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ User: USER, Pass: USER_PASSWORD }) })).json()) as { JWT: string }).JWT}` },
    })
    expect(direct.status).toBe(404)
    expect(refusal).toBe(((await direct.json()) as { Error: string }).Error)
    expectClean(opened, [404])
  }, BROWSER_TEST_MS)

  test('create, edit searches and tiles, share, lay out by span, delete', async () => {
    const { gid } = await setUp()
    const library = (await world.api('POST', '/api/library', { Name: 'all web', Query: 'tag=web count' })) as { GUID: string }
    const opened = await world.signedIn()
    const { page } = opened
    await page.goto(`${world.url}/#/dashboards`)
    const create = page.getByRole('form', { name: 'New dashboard' })
    await create.getByLabel('Name').fill('Web health')
    await create.getByLabel('Description').fill('the web tier')
    await create.getByRole('button', { name: 'Create dashboard' }).click()
    await page.getByRole('heading', { name: 'Edit Web health' }).waitFor()
    const made = ((await world.api('GET', '/api/dashboards')) as Dashboard[]).find((d) => d.Name === 'Web health')!
    expect(made.Description).toBe('the web tier')
    expect(made.Data).toMatchObject({ version: 2, searches: [], tiles: [] })

    await page.getByRole('button', { name: 'Add search' }).click()
    await page.getByLabel('Search 1 name').fill('hits')
    await page.getByLabel('Search 1 query').fill('tag=web json host | stats count by host | table host count')
    await page.getByRole('button', { name: 'Add search' }).click()
    await page.getByLabel('Search 2 runs').selectOption('library')
    await page.getByLabel('Search 2 library query').selectOption({ label: 'all web' })
    await page.getByRole('button', { name: 'Add tile' }).click()
    await page.getByLabel('Tile 1 title').fill('Hits by host')
    await page.getByLabel('Tile 1 renderer').selectOption('table')
    await page.getByLabel('Tile 1 width').fill('8')
    await page.getByLabel('Tile 1 column').fill('0')
    await page.getByLabel('Tile 1 row').fill('0')
    await page.getByRole('button', { name: 'Add tile' }).click()
    await page.getByLabel('Tile 2 title').fill('Total')
    await page.getByLabel('Tile 2 renderer').selectOption('numbercard')
    await page.getByLabel('Tile 2 search').selectOption({ index: 1 })
    await page.getByLabel('Tile 2 width').fill('4')
    await page.getByLabel('Tile 2 column').fill('8')
    await page.getByLabel('Tile 2 row').fill('0')
    await page.getByLabel('Tile 2 options (JSON)').fill('{"Precision": 0}')
    await page.getByRole('checkbox', { name: 'ops' }).check()
    await page.getByLabel('Time frame').selectOption('PT24H')
    await screenshot(page, 'dashboard-editor')
    expect(await accessibilityViolations(page)).toEqual([])
    await page.getByRole('button', { name: 'Save dashboard' }).click()
    await page.getByRole('heading', { name: 'Web health', exact: true }).waitFor()

    let saved = (await world.api('GET', `/api/dashboards/${made.ID}`)) as Dashboard
    expect(saved.GIDs).toEqual([gid])
    expect(saved.Data.timeframe).toEqual({ durationString: 'PT24H', timeframe: 'PT24H', start: null, end: null })
    expect(saved.Data.searches).toEqual([
      { alias: 'hits', query: 'tag=web json host | stats count by host | table host count' },
      { alias: null, reference: { id: library.GUID, type: 'savedQuery' } },
    ])
    expect(saved.Data.tiles).toEqual([
      { id: 1, title: 'Hits by host', renderer: 'table', span: { col: 8, row: 3, x: 0, y: 0 }, searchesIndex: 0, rendererOptions: {} },
      { id: 2, title: 'Total', renderer: 'numbercard', span: { col: 4, row: 3, x: 8, y: 0 }, searchesIndex: 1, rendererOptions: { Precision: 0 } },
    ])

    // laid out by span: side by side on one row, widths 8:4 of the 12 columns
    const a = (await page.getByRole('article', { name: 'Hits by host' }).boundingBox())!
    const b = (await page.getByRole('article', { name: 'Total' }).boundingBox())!
    expect(Math.abs(a.y - b.y)).toBeLessThan(1)
    expect(b.x).toBeGreaterThan(a.x + a.width)
    expect(a.width / b.width).toBeGreaterThan(1.8)
    expect(a.width / b.width).toBeLessThan(2.3)
    // at a phone's width the tiles stack
    await page.setViewportSize({ width: 390, height: 800 })
    const a2 = (await page.getByRole('article', { name: 'Hits by host' }).boundingBox())!
    const b2 = (await page.getByRole('article', { name: 'Total' }).boundingBox())!
    expect(b2.y).toBeGreaterThanOrEqual(a2.y + a2.height)
    await screenshot(page, 'dashboard-phone')
    await page.setViewportSize({ width: 1280, height: 800 })

    // edit again: the second tile moves under the first, full width; bad options are refused before anything is sent
    await page.getByRole('link', { name: 'Edit' }).click()
    await page.getByLabel('Tile 2 column').fill('')
    await page.getByLabel('Tile 2 row').fill('3')
    await page.getByLabel('Tile 2 width').fill('12')
    await page.getByLabel('Tile 2 options (JSON)').fill('{"Precision": ')
    await page.getByRole('button', { name: 'Save dashboard' }).click()
    await expect(page.getByRole('alert').textContent()).resolves.toBe('Total: the renderer options must be a JSON object')
    expect(((await world.api('GET', `/api/dashboards/${made.ID}`)) as Dashboard).Data.tiles[1]!.span).toEqual({ col: 4, row: 3, x: 8, y: 0 })
    await page.getByLabel('Tile 2 options (JSON)').fill('{"Precision": 1}')
    await page.getByRole('button', { name: 'Save dashboard' }).click()
    await page.getByRole('heading', { name: 'Web health', exact: true }).waitFor()
    saved = (await world.api('GET', `/api/dashboards/${made.ID}`)) as Dashboard
    expect(saved.Data.tiles[1]).toMatchObject({ span: { col: 12, row: 3, y: 3 }, rendererOptions: { Precision: 1 } })
    expect('x' in saved.Data.tiles[1]!.span).toBe(false)
    const c = (await page.getByRole('article', { name: 'Hits by host' }).boundingBox())!
    const d = (await page.getByRole('article', { name: 'Total' }).boundingBox())!
    expect(d.y).toBeGreaterThanOrEqual(c.y + c.height)
    expect(d.width).toBeGreaterThan(c.width)
    await screenshot(page, 'dashboard')
    expect(await accessibilityViolations(page)).toEqual([])

    await page.getByRole('button', { name: 'Delete' }).click()
    await page.getByRole('button', { name: 'Yes, delete' }).click()
    await page.getByRole('heading', { name: 'Dashboards', exact: true }).waitFor()
    await eventually(async () => (((await world.api('GET', '/api/dashboards')) as Dashboard[]).some((x) => x.ID === made.ID) ? undefined : true), 'the deletion')
    expect(await accessibilityViolations(page)).toEqual([])
    expectClean(opened)
  }, BROWSER_TEST_MS)

  test('a tile of each renderer (text, table, chart, numbercard) draws its search: by query, library entry and search ID', async () => {
    // 10 entries over the last half hour: web-1 five times, web-2 three, web-3 twice
    const hosts = ['web-1', 'web-1', 'web-2', 'web-1', 'web-3', 'web-2', 'web-1', 'web-2', 'web-3', 'web-1']
    const now = Date.now()
    const lines = hosts.map((host, i) => JSON.stringify({ host, n: i }))
    await world.api(
      'POST',
      '/api/ingest/json',
      lines.map((line, i) => ({ TS: new Date(now - (30 - i * 3) * 60_000).toISOString(), Tag: 'tiles', Data: Buffer.from(line).toString('base64') })),
    )
    const counts = new Map<string, number>()
    for (const h of hosts) counts.set(h, (counts.get(h) ?? 0) + 1)

    const library = (await world.api('POST', '/api/library', { Name: 'hosts table', Query: 'tag=tiles json host | stats count by host | table host count' })) as { GUID: string }
    const { SearchID } = (await world.api('POST', '/api/searchctrl/launch', {
      SearchString: 'tag=tiles count | numbercard count',
      SearchStart: new Date(now - 3_600_000).toISOString(),
      SearchEnd: new Date(now + 60_000).toISOString(),
      Background: true,
    })) as { SearchID: string }
    const id = (await world.api('POST', '/api/dashboards', {
      Name: 'Every renderer',
      Description: '',
      Data: {
        version: 2,
        timeframe: { durationString: 'PT1H', timeframe: 'PT1H', start: null, end: null },
        searches: [
          { alias: 'web-3 lines', query: 'tag=tiles grep web-3' },
          { alias: null, reference: { id: library.GUID, type: 'savedQuery' } },
          { alias: 'per host', query: 'tag=tiles json host | stats count by host over 10m | chart count by host' },
          { alias: 'total', searchID: Number(SearchID) },
        ],
        tiles: [
          { id: 1, title: 'Lines', renderer: 'text', span: { col: 6, row: 4, x: 0, y: 0 }, searchesIndex: 0, rendererOptions: {} },
          { id: 2, title: 'Hosts', renderer: 'table', span: { col: 6, row: 4, x: 6, y: 0 }, searchesIndex: 1, rendererOptions: {} },
          { id: 3, title: 'Per host', renderer: 'chart', span: { col: 8, row: 5, x: 0, y: 4 }, searchesIndex: 2, rendererOptions: { Stack: 'stacked' } },
          { id: 4, title: 'Total', renderer: 'numbercard', span: { col: 4, row: 5, x: 8, y: 4 }, searchesIndex: 3, rendererOptions: { Precision: 0 } },
        ],
      },
    })) as number

    const opened = await world.signedIn()
    const { page } = opened
    await page.goto(`${world.url}/#/dashboards/${id}`)
    const tile = (name: string) => page.getByRole('article', { name })

    // text: each entry of web-3, its data as text
    await tile('Lines').getByText(lines[4]!).waitFor()
    await tile('Lines').getByText(lines[8]!).waitFor()
    expect(await tile('Lines').getByText(lines[0]!).count()).toBe(0)

    // table, from the library entry's query: one row per host with its count
    await tile('Hosts').locator('tbody tr').nth(2).waitFor()
    const rows = await tile('Hosts').locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')))
    expect(rows.sort()).toEqual([...counts].map(([h, c]) => [h, String(c)]).sort())

    // chart: one series per host, stacked, its points summing to the host's count (read through ECharts)
    await tile('Per host').locator('[data-chart]').waitFor()
    const series = await eventually(async () => {
      const drawn = await tile('Per host')
        .locator('[data-chart]')
        .evaluate((el) => {
          const chart = (el as unknown as { chart?: { getOption(): { series: { name: string; type: string; stack?: string; data: [number, number | null][] }[] } } }).chart
          return chart?.getOption().series.map((s) => ({ name: s.name, type: s.type, stack: s.stack, sum: s.data.reduce((t, p) => t + (p[1] ?? 0), 0) }))
        })
      return drawn && drawn.length === counts.size ? drawn : undefined
    }, 'the chart')
    expect(series.map((s) => [s.name, s.sum]).sort()).toEqual([...counts].sort())
    expect(series.every((s) => s.type === 'line' && !!s.stack)).toBe(true)

    // number card, attached to the existing search by its ID
    await tile('Total').getByText(String(hosts.length), { exact: true }).waitFor()
    expect(await tile('Total').locator('.card-name').allInnerTexts()).toEqual(['count'])
    await screenshot(page, 'dashboard-renderers')
    expect(await accessibilityViolations(page)).toEqual([])

    // leaving the dashboard closes the searches it launched; the attached one stays (it is backgrounded)
    await page.goto(`${world.url}/#/dashboards`)
    await page.getByRole('heading', { name: 'Dashboards', exact: true }).waitFor()
    const states = (await world.api('GET', '/api/searchctrl')) as { ID: string; State: string }[]
    expect(states.find((x) => x.ID === SearchID)?.State).toContain('BACKGROUNDED')
    expectClean(opened)
  }, BROWSER_TEST_MS)

  test('unknown members of Data are written back unchanged', async () => {
    const id = (await world.api('POST', '/api/dashboards', {
      Name: 'Kept',
      Description: '',
      Data: { version: 2, linkZooming: true, grid: { gutter: '8', margin: null }, searches: [{ alias: null, query: 'tag=x count' }], tiles: [] },
    })) as number
    const opened = await world.signedIn()
    const { page } = opened
    await page.goto(`${world.url}/#/dashboards/${id}?edit=1`)
    await page.getByLabel('Name').first().fill('Kept, renamed')
    await page.getByRole('button', { name: 'Save dashboard' }).click()
    await page.getByRole('heading', { name: 'Kept, renamed', exact: true }).waitFor()
    const saved = (await world.api('GET', `/api/dashboards/${id}`)) as Dashboard
    expect(saved.Name).toBe('Kept, renamed')
    expect(saved.Data).toMatchObject({ version: 2, linkZooming: true, grid: { gutter: '8', margin: null }, searches: [{ alias: null, query: 'tag=x count' }], tiles: [] })
    expectClean(opened)
  }, BROWSER_TEST_MS)
})

describe('dashboard Data, as the console reads it', () => {
  const NOW = Date.parse('2026-03-01T12:00:00Z')

  test('ISO 8601 durations: weeks to seconds, fractions; anything else is not one', () => {
    expect(durationMs('PT1H')).toBe(3_600_000)
    expect(durationMs('P7D')).toBe(7 * 86_400_000)
    expect(durationMs('P1W')).toBe(7 * 86_400_000)
    expect(durationMs('PT1H30M')).toBe(5_400_000)
    expect(durationMs('pt0.5s')).toBe(500)
    for (const bad of ['', 'P', 'PT', '1h', 'PT-1H', 'P1M2', 'PT0S', null, undefined]) expect(durationMs(bad)).toBeUndefined()
    expect(durationText('PT1H30M')).toBe('1 hour 30 minutes')
    expect(durationText('P7D')).toBe('7 days')
  })

  test('a time frame: its duration ending now, or its custom start and end; the last hour by default', () => {
    expect(rangeOf({ durationString: 'PT15M', timeframe: 'PT15M', start: null, end: null }, NOW)).toEqual({ start: NOW - 900_000, end: NOW })
    expect(rangeOf({ durationString: null, timeframe: 'P1D' }, NOW)).toEqual({ start: NOW - 86_400_000, end: NOW })
    const custom = { durationString: null, timeframe: 'custom', start: '2026-01-01T00:00:00Z', end: '2026-01-02T00:00:00Z' }
    expect(rangeOf(custom, NOW)).toEqual({ start: Date.parse(custom.start), end: Date.parse(custom.end) })
    // a duration wins over leftover start and end unless the frame says custom
    expect(rangeOf({ ...custom, timeframe: 'PT1H', durationString: 'PT1H' }, NOW)).toEqual({ start: NOW - 3_600_000, end: NOW })
    expect(rangeOf({}, NOW)).toEqual({ start: NOW - 3_600_000, end: NOW })
    expect(rangeOf({ start: '0001-01-01T00:00:00Z', end: '0001-01-01T00:00:00Z' }, NOW)).toEqual({ start: NOW - 3_600_000, end: NOW })
  })

  test('stored Data is read leniently and keeps what it does not know', () => {
    const data = readData({ version: 1, linkZooming: true, tiles: [{ title: 'A', span: { col: '6', row: 2, x: 3 }, searchesIndex: '1' }, 'junk', { renderer: 'chart' }] })
    expect(data.searches).toEqual([])
    expect(data.linkZooming).toBe(true)
    expect(data.tiles.map((t) => [t.id, t.title, t.renderer, t.span, t.searchesIndex])).toEqual([
      [1, 'A', 'text', { col: 6, row: 2, x: 3 }, 1],
      [2, '', 'chart', { col: 4, row: 3 }, 0],
    ])
    expect(readData(null)).toEqual({ searches: [], tiles: [], timeframe: undefined })
    expect(gridColumns(data.tiles)).toBe(12)
    expect(gridColumns([{ ...data.tiles[0]!, span: { col: 10, row: 1, x: 8 } }])).toBe(18)
  })
})
