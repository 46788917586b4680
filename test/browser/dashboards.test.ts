// The console's dashboards: the list (own, shared, global), creating one and editing its searches, tiles and
// layout through the browser (read back from the API), the tiles laid out by span, sharing and deleting; no console
// error or CSP violation; axe on the list, a dashboard and the editor; screenshots.
import { expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { describeWithServers } from '../services'
import { accessibilityViolations, BROWSER_TEST_MS, consoleWorld, expectClean, screenshot, STEP_MS } from './harness'

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

async function eventually<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + STEP_MS
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(100)
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
