// Dashboard searches that reference a template or a scheduled search. Quarry itself offers neither API: the page's
// requests for them (GET /api/templates/{id}, GET /api/scheduledsearches) are answered by the test in the platform's
// shapes (gravwell/js-client RawTemplate and RawScheduledTask); everything else, the searches they run included, goes
// to the real server, and what the tiles draw is compared with the entries sent. Then the same dashboard on the real
// server alone: each such tile shows the server's own refusal, and the other tiles still draw.
import { describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { fillTemplate, type Template, variablesOf } from '../../web/src/dashboards/template'
import { describeWithServers } from '../services'
import { accessibilityViolations, BROWSER_TEST_MS, consoleWorld, eventually, expectClean, screenshot } from './harness'


const rowsOf = (page: Page, tile: string) =>
  page
    .getByRole('article', { name: tile, exact: true })
    .locator('tbody tr')
    .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')))

/** Waits until the tile's table holds exactly `want` (in any order). */
async function tableIs(page: Page, tile: string, want: string[][]): Promise<void> {
  const key = (rows: string[][]) => JSON.stringify(rows.map((r) => r.join(' ')).sort())
  await eventually(async () => (key(await rowsOf(page, tile)) === key(want) ? true : undefined), `${tile} to show ${key(want)}`)
}

/** The hosts of the lines, in order: one web-1, three web-2, five web-3 (every count differs). */
const HOSTS = ['web-3', 'web-2', 'web-3', 'web-1', 'web-3', 'web-2', 'web-3', 'web-2', 'web-3']

describeWithServers('web console: dashboard tiles of a template and of a scheduled search', () => {
  const world = consoleWorld()
  const now = Date.now()
  const lines = Array.from({ length: 9 }, (_, i) => ({ ts: now - (40 - i * 4) * 60_000, host: HOSTS[i]!, n: 100 + i }))
  const updated = new Date(now).toISOString()
  // the current shape: a list of variables, with a default
  const template = {
    GUID: '6f2b7c1e-3d4a-4b5c-8d9e-0a1b2c3d4e5f',
    ThingUUID: '0b8e9a21-1111-4c22-9d33-5e6f7a8b9c0d',
    UID: 1,
    GIDs: null,
    Global: false,
    Labels: null,
    Name: 'Lines of a host',
    Description: '',
    Updated: updated,
    Contents: { query: 'tag=tmpl grep %%HOST%% | json host n | table host n', variables: [{ name: '%%HOST%%', label: 'Host', description: 'a host name, web-1 say', required: true, defaultValue: 'web-1' }] },
  }
  // the older shape: one variable, no default
  const oldTemplate = {
    ...template,
    GUID: '9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d',
    Name: 'Count of a host',
    Contents: { query: 'tag=tmpl grep %%HOST%% | count | numbercard count', variable: '%%HOST%%', variableLabel: 'Host', variableDescription: null, required: true, testValue: null },
  }
  const scheduled = {
    ID: 7,
    GUID: '1c2d3e4f-5a6b-4c7d-8e9f-a0b1c2d3e4f5',
    Owner: 1,
    Groups: null,
    Name: 'Hosts every hour',
    Description: '',
    Labels: null,
    OneShot: false,
    Disabled: false,
    Updated: updated,
    LastError: '',
    LastRun: updated,
    LastRunDuration: 0,
    LastSearchIDs: null,
    Timezone: '',
    Schedule: '0 * * * *',
    SearchString: 'tag=tmpl json host | stats count by host | table host count',
    Duration: -3600,
    SearchSinceLastRun: false,
    Script: '',
    DebugMode: false,
    DebugOutput: null,
    Permissions: 0,
    PersistentMaps: {},
  }
  const linesOf = (host: string) => lines.filter((l) => l.host === host).map((l) => [l.host, String(l.n)])
  const counts = () => {
    const m = new Map<string, number>()
    for (const l of lines) m.set(l.host, (m.get(l.host) ?? 0) + 1)
    return [...m].map(([h, n]) => [h, String(n)])
  }
  let made: Promise<number> | undefined
  const dashboard = () =>
    (made ??= (async () => {
      await world.api(
        'POST',
        '/api/ingest/json',
        lines.map((l) => ({ TS: new Date(l.ts).toISOString(), Tag: 'tmpl', Data: Buffer.from(JSON.stringify({ host: l.host, n: l.n })).toString('base64') })),
      )
      return (await world.api('POST', '/api/dashboards', {
        Name: 'Investigate a host',
        Description: '',
        Data: {
          version: 2,
          timeframe: { durationString: 'PT1H', timeframe: 'PT1H', start: null, end: null },
          searches: [
            { alias: 'lines', reference: { id: template.GUID, type: 'template', extras: { defaultValue: 'web-2' } } },
            { alias: 'hosts', reference: { id: scheduled.GUID, type: 'scheduledSearch' } },
            { alias: 'count', reference: { id: oldTemplate.GUID, type: 'template' } },
            { alias: 'all', query: 'tag=tmpl count | numbercard count' },
          ],
          tiles: [
            { id: 1, title: 'Lines', renderer: 'table', span: { col: 6, row: 4 }, searchesIndex: 0, rendererOptions: {} },
            { id: 2, title: 'Hosts', renderer: 'table', span: { col: 6, row: 4 }, searchesIndex: 1, rendererOptions: {} },
            { id: 3, title: 'Count', renderer: 'numbercard', span: { col: 6, row: 3 }, searchesIndex: 2, rendererOptions: {} },
            { id: 4, title: 'All', renderer: 'numbercard', span: { col: 6, row: 3 }, searchesIndex: 3, rendererOptions: {} },
          ],
        },
      })) as number
    })())

  test('a template runs with its variable filled (stored value, then the one given), a scheduled search runs its query', async () => {
    const id = await dashboard()
    const opened = await world.signedIn()
    const { page } = opened
    const asked: string[] = []
    await page.route('**/api/templates/*', (route) => {
      const url = new URL(route.request().url())
      asked.push(url.pathname)
      const found = [template, oldTemplate].find((t) => url.pathname === `/api/templates/${t.GUID}`)
      return found ? route.fulfill({ json: found }) : route.fulfill({ status: 404, json: { Error: 'no such template' } })
    })
    await page.route('**/api/scheduledsearches', (route) => {
      asked.push(new URL(route.request().url()).pathname)
      return route.fulfill({ json: [scheduled] })
    })
    await page.goto(`${world.url}/#/dashboards/${id}`)
    const tile = (name: string) => page.getByRole('article', { name, exact: true })

    // the template with the dashboard's stored value (web-2, not the template's default web-1)
    await tableIs(page, 'Lines', linesOf('web-2'))
    // the scheduled search's query over the dashboard's hour
    await tableIs(page, 'Hosts', counts())
    // the older template has no value of its own: refused with its variable's label, nothing run
    await expect(tile('Count').getByRole('alert').innerText()).resolves.toBe('give a value for Host to run Count of a host')
    await tile('All').getByText(String(lines.length), { exact: true }).waitFor()
    // one field for the variable both templates name, holding the value the first runs with
    const form = page.getByRole('form', { name: 'Template values' })
    await expect(form.getByLabel('Host').inputValue()).resolves.toBe('web-2')
    await screenshot(page, 'dashboard-template')
    expect(await accessibilityViolations(page)).toEqual([])

    // another value: every template search runs again with it
    await form.getByLabel('Host').fill('web-3')
    await form.getByRole('button', { name: 'Run with these values' }).click()
    await tableIs(page, 'Lines', linesOf('web-3'))
    await tile('Count').getByText(String(linesOf('web-3').length), { exact: true }).waitFor()
    await tableIs(page, 'Hosts', counts())
    expect(new Set(asked)).toEqual(new Set([`/api/templates/${template.GUID}`, `/api/templates/${oldTemplate.GUID}`, '/api/scheduledsearches']))
    // the searches that ran are the templates' queries with the value in place
    const queries = ((await world.api('GET', '/api/searchctrl')) as { UserQuery: string }[]).map((s) => s.UserQuery)
    expect(queries).toContain('tag=tmpl grep web-3 | json host n | table host n')
    expect(queries).toContain('tag=tmpl grep web-3 | count | numbercard count')
    expect(queries.some((q) => q.includes('%%HOST%%'))).toBe(false)
    expectClean(opened)
    await page.context().close()
  }, BROWSER_TEST_MS)

  test('on Quarry alone such tiles show the server\'s refusal; the other tiles draw', async () => {
    const id = await dashboard()
    const opened = await world.signedIn()
    const { page } = opened
    await page.goto(`${world.url}/#/dashboards/${id}`)
    const tile = (name: string) => page.getByRole('article', { name, exact: true })
    await tile('All').getByText(String(lines.length), { exact: true }).waitFor()
    // what the server itself answers the console's requests (world.api throws with the status and the body)
    const refusal = async (path: string) => {
      const message = await world.api('GET', path).then(
        () => '',
        (e: Error) => e.message,
      )
      const m = /^GET \S+: (\d+) (.*)$/s.exec(message)
      if (!m) throw new Error(`${path} was not refused`)
      return { status: Number(m[1]), error: (JSON.parse(m[2]!) as { Error: string }).Error }
    }
    const templateRefusal = await refusal(`/api/templates/${template.GUID}`)
    expect(templateRefusal.status).toBeGreaterThanOrEqual(400)
    await expect(tile('Lines').getByRole('alert').first().innerText()).resolves.toBe(templateRefusal.error)
    const scheduledRefusal = await refusal('/api/scheduledsearches')
    await expect(tile('Hosts').getByRole('alert').innerText()).resolves.toBe(scheduledRefusal.error)
    expectClean(opened, [templateRefusal.status, scheduledRefusal.status])
    await page.context().close()
  }, BROWSER_TEST_MS)

  test('the editor keeps such references, and changes a template\'s stored value', async () => {
    const id = await dashboard()
    const opened = await world.signedIn()
    const { page } = opened
    await page.goto(`${world.url}/#/dashboards/${id}?edit=1`)
    await expect(page.getByLabel('Search 1 runs').inputValue()).resolves.toBe('template')
    await expect(page.getByLabel('Search 1 template ID').inputValue()).resolves.toBe(template.GUID)
    await expect(page.getByLabel('Search 1 variable value').inputValue()).resolves.toBe('web-2')
    await expect(page.getByLabel('Search 2 runs').inputValue()).resolves.toBe('scheduledSearch')
    await expect(page.getByLabel('Search 2 scheduled search ID').inputValue()).resolves.toBe(scheduled.GUID)
    await page.getByLabel('Search 1 variable value').fill('web-1')
    await page.getByRole('button', { name: 'Save dashboard' }).click()
    await page.getByRole('heading', { name: 'Investigate a host', exact: true }).waitFor()
    const saved = (await world.api('GET', `/api/dashboards/${id}`)) as { Data: { searches: unknown[] } }
    expect(saved.Data.searches.slice(0, 3)).toEqual([
      { alias: 'lines', reference: { id: template.GUID, type: 'template', extras: { defaultValue: 'web-1' } } },
      { alias: 'hosts', reference: { id: scheduled.GUID, type: 'scheduledSearch' } },
      { alias: 'count', reference: { id: oldTemplate.GUID, type: 'template' } },
    ])
    expectClean(opened, [404])
    await page.context().close()
  }, BROWSER_TEST_MS)
})

describe('template variables, as the console fills them', () => {
  const t = (contents: Template['Contents']): Template => ({ GUID: 'g', Name: 'T', Contents: contents })
  const both = t({
    query: 'tag=x grep %%A%% | grep %%B%% | grep %%A%%',
    variables: [
      { name: '%%A%%', label: 'First', required: true, defaultValue: 'a-default' },
      { name: '%%B%%', label: 'Second', required: false },
    ],
  })
  const ref = (defaultValue?: string) => ({ reference: { id: 'g', type: 'template' as const, extras: { defaultValue } } })

  test('every occurrence replaced; the value given wins over the stored one (the first variable\'s), which wins over the default', () => {
    expect(fillTemplate(both, {}, {})).toBe('tag=x grep a-default | grep  | grep a-default')
    expect(fillTemplate(both, {}, ref('stored'))).toBe('tag=x grep stored | grep  | grep stored')
    const swapped = t({ ...both.Contents, variables: [...both.Contents.variables!].reverse() })
    expect(fillTemplate(swapped, {}, ref('stored'))).toBe('tag=x grep a-default | grep stored | grep a-default')
    expect(fillTemplate(both, { '%%A%%': 'given', '%%B%%': 'b' }, ref('stored'))).toBe('tag=x grep given | grep b | grep given')
  })

  test('a required variable left empty is refused with its label; an optional one becomes nothing', () => {
    expect(() => fillTemplate(both, { '%%A%%': '' }, ref('stored'))).toThrow('give a value for First to run T')
    expect(fillTemplate(both, { '%%A%%': 'x', '%%B%%': '' }, {})).toBe('tag=x grep x | grep  | grep x')
  })

  test('the older shape: one variable', () => {
    const old = t({ query: 'tag=y grep __IP__', variable: '__IP__', variableLabel: 'Address', variableDescription: null, required: true })
    expect(variablesOf(old)).toEqual([{ name: '__IP__', label: 'Address', description: null, required: true }])
    expect(() => fillTemplate(old, {}, {})).toThrow('give a value for Address to run T')
    expect(fillTemplate(old, {}, ref('10.0.0.1'))).toBe('tag=y grep 10.0.0.1')
    expect(variablesOf(t({ query: 'tag=z' }))).toEqual([])
  })
})
