// The console's list pages (searches, tokens, library, resources, files, users, groups): each create, change and
// delete made through the browser and then read back from the API; a token's secret shown once; a non-admin sees no
// admin page and the API's refusals as text; no console error or CSP violation; axe on every page; screenshots.
import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import type { Page } from 'playwright-core'
import { describeWithServers } from '../services'
import { accessibilityViolations, BROWSER_TEST_MS, consoleWorld, eventually, expectClean, screenshot } from './harness'

const USER = 'pat'
const USER_PASSWORD = 'pat-password-1'


/** The table row holding `text`. */
const row = (page: Page, text: string) => page.getByRole('row').filter({ hasText: text })

/** Presses Delete on the row, then the confirming button. */
async function deleteRow(page: Page, text: string): Promise<void> {
  await row(page, text).getByRole('button', { name: 'Delete' }).click()
  await row(page, text).getByRole('button', { name: 'Yes, delete' }).click()
}

interface SearchEntry {
  ID: string
  UID: number
  GID: number
  State: string
  Import: { Imported: boolean }
}

describeWithServers('web console list pages', () => {
  const world = consoleWorld()

  test('searches: save, export, import, background, stop and delete, each seen by the API', async () => {
    const opened = await world.signedIn()
    const { page } = opened
    const { SearchID: kept } = (await world.api('POST', '/api/searchctrl/launch', { SearchString: 'tag=kept count', Background: true })) as { SearchID: string }
    const { SearchID: other } = (await world.api('POST', '/api/searchctrl/launch', { SearchString: 'tag=other count' })) as { SearchID: string }
    await page.goto(`${world.url}/#/searches`)
    await row(page, 'tag=kept count').waitFor()
    // attach is the search page's link
    expect(await row(page, 'tag=kept count').getByRole('link', { name: `Attach to search ${kept}` }).getAttribute('href')).toBe(`#/search?id=${kept}`)

    await row(page, 'tag=kept count').getByRole('button', { name: 'Save' }).click()
    await page.getByRole('status').filter({ hasText: `Search ${kept} marked to be saved.` }).waitFor()
    // the launch attached the API's session: once it leaves, the results move to storage
    await world.api('PUT', `/api/searchctrl/${kept}/detach`)
    const list = async () => (await world.api('GET', '/api/searchctrl')) as SearchEntry[]
    await eventually(async () => ((await list()).find((s) => s.ID === kept)?.State.split('/').includes('SAVED') ? true : undefined), 'the save')
    await page.getByRole('button', { name: 'Refresh' }).click()
    const exportLink = row(page, 'tag=kept count').getByRole('link', { name: 'Export' })
    const [download] = await Promise.all([page.waitForEvent('download'), exportLink.click()])
    const archivePath = `${await download.path()}`
    const archive = readFileSync(archivePath)
    expect([archive[0], archive[1]]).toEqual([0x1f, 0x8b]) // gzip, as the API sends it
    expect(download.suggestedFilename()).toBe(`search-${kept}.tar.gz`)

    await page.getByLabel('Archive file').setInputFiles(archivePath)
    await page.getByRole('button', { name: 'Import' }).click()
    await page.getByRole('status').filter({ hasText: 'Imported' }).waitFor()
    const imported = (await list()).filter((s) => s.Import.Imported)
    expect(imported.length).toBe(1)
    expect(imported[0]!.State).toContain('SAVED')
    await row(page, imported[0]!.ID).waitFor()

    // a damaged archive: the API's refusal in its words, nothing imported
    await page.getByLabel('Archive file').setInputFiles({ name: 'broken.tar.gz', mimeType: 'application/gzip', buffer: Buffer.from('not an archive') })
    await page.getByRole('button', { name: 'Import' }).click()
    await expect(page.getByRole('alert').textContent()).resolves.toContain('not a usable search archive')
    expect((await list()).filter((s) => s.Import.Imported).length).toBe(1)

    await row(page, 'tag=other count').getByRole('button', { name: 'Background' }).click()
    await eventually(async () => ((await list()).find((s) => s.ID === other)?.State.includes('BACKGROUNDED') ? true : undefined), 'the background')
    await row(page, 'tag=other count').getByRole('button', { name: 'Stop' }).click()
    await page.getByRole('status').filter({ hasText: `Search ${other} stopped.` }).waitFor()
    // a saved search cannot be stopped: the API's 400 shows as text
    await row(page, kept).getByRole('button', { name: 'Stop' }).click()
    await page.getByRole('alert').filter({ hasText: `search ${kept} is` }).waitFor()
    await screenshot(page, 'searches')

    await deleteRow(page, 'tag=other count')
    await page.getByRole('status').filter({ hasText: `Search ${other} deleted.` }).waitFor()
    expect((await list()).some((s) => s.ID === other)).toBe(false)
    // the list reloads after the API's answer: the row goes once it has
    await row(page, 'tag=other count').waitFor({ state: 'detached' })
    expectClean(opened, [400])
  }, BROWSER_TEST_MS)

  test('tokens: created with chosen permissions, the secret shown once and working, deleted', async () => {
    const opened = await world.signedIn()
    const { page } = opened
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: world.url })
    await page.goto(`${world.url}/#/tokens`)
    await page.getByText('No tokens yet.').waitFor()
    const form = page.getByRole('form', { name: 'New token' })
    await form.getByLabel('Name').fill('ci')
    await form.getByLabel('Description').fill('the build')
    await form.getByLabel('Expires').fill('2030-01-02T03:04')
    const expiry = await page.evaluate(() => new Date('2030-01-02T03:04').getTime()) // the browser's local time
    await form.getByRole('checkbox', { name: 'DashboardRead' }).check()
    await form.getByRole('checkbox', { name: 'Search', exact: true }).check()
    await form.getByRole('button', { name: 'Create token' }).click()
    const secret = (await page.getByTestId('token-secret').textContent())!.trim()
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/)
    await page.getByRole('button', { name: 'Copy' }).click()
    await page.getByRole('status').filter({ hasText: 'Copied.' }).waitFor()
    expect(await page.evaluate(() => (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText())).toBe(secret)

    const tokens = (await world.api('GET', '/api/tokens')) as { id: string; name: string; description: string; capabilities: string[]; expiresAt: string }[]
    expect(tokens.map((t) => [t.name, t.description, [...t.capabilities].sort(), Date.parse(t.expiresAt)])).toEqual([['ci', 'the build', ['DashboardRead', 'Search'], expiry]])
    // the secret shown is the token: it reads dashboards, and nothing it was not given
    expect((await fetch(`${world.url}/api/dashboards`, { headers: { 'Service-Token': secret } })).status).toBe(200)
    expect((await fetch(`${world.url}/api/library`, { headers: { 'Service-Token': secret } })).status).toBe(403)
    await screenshot(page, 'tokens-secret')

    await page.getByRole('button', { name: 'Done' }).click()
    await page.getByTestId('token-secret').waitFor({ state: 'detached' })
    await page.reload()
    await row(page, 'the build').waitFor()
    expect(await page.content()).not.toContain(secret)

    await deleteRow(page, 'the build')
    await page.getByText('No tokens yet.').waitFor()
    expect(await world.api('GET', '/api/tokens')).toEqual([])
    expectClean(opened)
  }, BROWSER_TEST_MS)

  test('library: create, edit, run link and delete', async () => {
    const opened = await world.signedIn()
    const { page } = opened
    await page.goto(`${world.url}/#/library`)
    await page.getByText('No saved queries yet.').waitFor()
    await page.getByRole('button', { name: 'New query' }).click()
    const form = page.getByRole('form', { name: 'New query' })
    await form.getByLabel('Name').fill('errors')
    await form.getByLabel('Description').fill('errors by host')
    await form.getByLabel('Query').fill('tag=app grep error | count by host')
    await form.getByRole('button', { name: 'Save' }).click()
    await row(page, 'errors by host').waitFor()
    type Entry = { ThingUUID: string; Name: string; Description: string; Query: string }
    let entries = (await world.api('GET', '/api/library')) as Entry[]
    expect(entries.map((e) => [e.Name, e.Description, e.Query])).toEqual([['errors', 'errors by host', 'tag=app grep error | count by host']])
    const run = row(page, 'errors by host').getByRole('link', { name: 'Run' })
    expect(await run.getAttribute('href')).toBe(`#/search?q=${encodeURIComponent('tag=app grep error | count by host').replace(/%20/g, '+')}`)
    await run.click()
    // the search page opens with the query in its editor
    await eventually(async () => ((await page.locator('#query').inputValue()) === 'tag=app grep error | count by host' ? true : undefined), 'the query on the search page')
    await page.goto(`${world.url}/#/library`)

    await row(page, 'errors by host').getByRole('button', { name: 'Edit' }).click()
    const edit = page.getByRole('form', { name: 'Edit errors' })
    await edit.getByLabel('Query').fill('tag=app grep error | count by host, level')
    await edit.getByRole('button', { name: 'Save' }).click()
    await row(page, 'count by host, level').waitFor()
    entries = (await world.api('GET', '/api/library')) as Entry[]
    expect(entries.map((e) => [e.ThingUUID, e.Query])).toEqual([[entries[0]!.ThingUUID, 'tag=app grep error | count by host, level']])
    await screenshot(page, 'library')

    await deleteRow(page, 'errors by host')
    await page.getByText('No saved queries yet.').waitFor()
    expect(await world.api('GET', '/api/library')).toEqual([])
    expectClean(opened)
  }, BROWSER_TEST_MS)

  test('resources: create, upload, download, share with a group, delete', async () => {
    const gid = (await world.api('POST', '/api/groups', { Name: 'readers', Desc: '' })) as number
    const opened = await world.signedIn()
    const { page } = opened
    await page.goto(`${world.url}/#/resources`)
    await page.getByText('No resources yet.').waitFor()
    await page.getByRole('button', { name: 'New resource' }).click()
    const form = page.getByRole('form', { name: 'New resource' })
    await form.getByLabel('Name').fill('hosts')
    await form.getByLabel('Description').fill('host table')
    await form.getByRole('button', { name: 'Save' }).click()
    await row(page, 'host table').waitFor()
    type Resource = { GUID: string; ResourceName: string; Description: string; Size: number; VersionNumber: number; GroupACL: number[] }
    let [resource] = (await world.api('GET', '/api/resources')) as Resource[]
    expect([resource!.ResourceName, resource!.Description, resource!.Size]).toEqual(['hosts', 'host table', 0])

    const contents = 'host,owner\nweb-1,ops\n'
    await row(page, 'host table').getByLabel('Upload contents').setInputFiles({ name: 'hosts.csv', mimeType: 'text/csv', buffer: Buffer.from(contents) })
    await page.getByRole('status').filter({ hasText: 'hosts.csv uploaded' }).waitFor()
    ;[resource] = (await world.api('GET', '/api/resources')) as Resource[]
    expect([resource!.Size, resource!.VersionNumber]).toEqual([contents.length, 1])
    const [download] = await Promise.all([page.waitForEvent('download'), row(page, 'host table').getByRole('link', { name: 'Download' }).click()])
    expect(readFileSync(`${await download.path()}`, 'utf8')).toBe(contents)

    await row(page, 'host table').getByRole('button', { name: 'Edit' }).click()
    const edit = page.getByRole('form', { name: 'Edit hosts' })
    await edit.getByLabel('Description').fill('hosts and owners')
    await edit.getByRole('checkbox', { name: 'readers' }).check()
    await edit.getByRole('button', { name: 'Save' }).click()
    await row(page, 'hosts and owners').filter({ hasText: 'readers' }).waitFor()
    ;[resource] = (await world.api('GET', '/api/resources')) as Resource[]
    expect([resource!.Description, resource!.GroupACL, resource!.Size]).toEqual(['hosts and owners', [gid], contents.length])
    await screenshot(page, 'resources')

    await deleteRow(page, 'hosts and owners')
    await page.getByText('No resources yet.').waitFor()
    expect(await world.api('GET', '/api/resources')).toEqual([])
    expectClean(opened)
  }, BROWSER_TEST_MS)

  test('files: upload, replace, download, share, delete', async () => {
    const gids = ((await world.api('GET', '/api/groups')) as { GID: number; Name: string }[]).filter((g) => g.Name === 'filers')
    const gid = gids[0]?.GID ?? ((await world.api('POST', '/api/groups', { Name: 'filers', Desc: '' })) as number)
    const opened = await world.signedIn()
    const { page } = opened
    await page.goto(`${world.url}/#/files`)
    await page.getByText('No files yet.').waitFor()
    await page.getByRole('button', { name: 'New file' }).click()
    const form = page.getByRole('form', { name: 'New file' })
    await form.getByLabel('Contents').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('first\n') })
    await form.getByLabel('Description').fill('run book')
    await form.getByRole('checkbox', { name: 'filers' }).check()
    await form.getByRole('button', { name: 'Save' }).click()
    await row(page, 'run book').waitFor()
    type UserFile = { ThingUUID: string; Name: string; Desc: string; Size: number; GIDs: number[] }
    let [file] = (await world.api('GET', '/api/files')) as UserFile[]
    expect([file!.Name, file!.Desc, file!.Size, file!.GIDs]).toEqual(['notes.txt', 'run book', 6, [gid]])

    await row(page, 'run book').getByLabel('Replace contents').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('second version\n') })
    await page.getByRole('status').filter({ hasText: 'contents replaced' }).waitFor()
    const [download] = await Promise.all([page.waitForEvent('download'), row(page, 'run book').getByRole('link', { name: 'Download' }).click()])
    expect(readFileSync(`${await download.path()}`, 'utf8')).toBe('second version\n')

    await row(page, 'run book').getByRole('button', { name: 'Edit' }).click()
    const edit = page.getByRole('form', { name: 'Edit notes.txt' })
    await edit.getByLabel('Name').fill('runbook.txt')
    await edit.getByRole('checkbox', { name: 'filers' }).uncheck()
    await edit.getByRole('button', { name: 'Save' }).click()
    await row(page, 'runbook.txt').waitFor()
    ;[file] = (await world.api('GET', '/api/files')) as UserFile[]
    expect([file!.Name, file!.Size, file!.GIDs]).toEqual(['runbook.txt', 15, []])
    await screenshot(page, 'files')

    await deleteRow(page, 'runbook.txt')
    await page.getByText('No files yet.').waitFor()
    expect(await world.api('GET', '/api/files')).toEqual([])
    expectClean(opened)
  }, BROWSER_TEST_MS)

  test('users and groups: create, lock, unlock, admin flag, memberships, delete', async () => {
    const opened = await world.signedIn()
    const { page } = opened
    await page.goto(`${world.url}/#/groups`)
    await page.getByRole('button', { name: 'New group' }).click()
    let form = page.getByRole('form', { name: 'New group' })
    await form.getByLabel('Name').fill('oncall')
    await form.getByLabel('Description').fill('pager rota')
    await form.getByRole('button', { name: 'Save' }).click()
    await row(page, 'pager rota').waitFor()
    type Group = { GID: number; Name: string; Desc: string }
    const oncall = ((await world.api('GET', '/api/groups')) as Group[]).find((g) => g.Name === 'oncall')!
    expect(oncall.Desc).toBe('pager rota')
    // a name already taken: the API's 409 in its words
    await page.getByRole('button', { name: 'New group' }).click()
    form = page.getByRole('form', { name: 'New group' })
    await form.getByLabel('Name').fill('oncall')
    await form.getByRole('button', { name: 'Save' }).click()
    await form.getByRole('alert').waitFor()
    await form.getByRole('button', { name: 'Cancel' }).click()

    await page.goto(`${world.url}/#/users`)
    await page.getByRole('button', { name: 'New user' }).click()
    const user = page.getByRole('form', { name: 'New user' })
    await user.getByLabel('User name').fill('robin')
    await user.getByLabel('Password').fill('robin-password-1')
    await user.getByLabel('Full name').fill('Robin Roe')
    await user.getByLabel('Email').fill('robin@example.org')
    await user.getByRole('button', { name: 'Create user' }).click()
    await row(page, 'robin@example.org').waitFor()
    type User = { UID: number; User: string; Name: string; Admin: boolean; Locked: boolean; Groups: Group[] }
    const robin = async () => ((await world.api('GET', '/api/users')) as User[]).find((u) => u.User === 'robin')
    expect(await robin()).toMatchObject({ Name: 'Robin Roe', Admin: false, Locked: false, Groups: [] })

    const r = () => row(page, 'robin@example.org')
    await r().getByRole('button', { name: 'Lock' }).click()
    await r().getByRole('button', { name: 'Unlock' }).waitFor()
    expect((await robin())!.Locked).toBe(true)
    await r().getByRole('button', { name: 'Unlock' }).click()
    await r().getByRole('button', { name: 'Lock' }).waitFor()
    expect((await robin())!.Locked).toBe(false)

    await r().getByRole('button', { name: 'Make administrator' }).click()
    await page.getByRole('status').filter({ hasText: 'robin is now an administrator.' }).waitFor()
    expect((await robin())!.Admin).toBe(true)
    await r().getByRole('button', { name: 'Revoke administrator' }).click()
    await page.getByRole('status').filter({ hasText: 'robin is no longer an administrator.' }).waitFor()
    expect((await robin())!.Admin).toBe(false)

    await r().getByLabel('Group to add robin to').selectOption({ label: 'oncall' })
    await r().getByRole('button', { name: 'Add' }).click()
    await r().getByRole('button', { name: 'Remove robin from oncall' }).waitFor()
    expect((await robin())!.Groups.map((g) => g.GID)).toEqual([oncall.GID])
    await page.goto(`${world.url}/#/groups`)
    await row(page, 'pager rota').filter({ hasText: 'robin' }).waitFor()
    await page.goto(`${world.url}/#/users`)
    await r().getByRole('button', { name: 'Remove robin from oncall' }).click()
    await page.getByRole('status').filter({ hasText: 'robin left oncall.' }).waitFor()
    expect((await robin())!.Groups).toEqual([])
    await screenshot(page, 'users')

    await deleteRow(page, 'robin@example.org')
    await page.getByRole('status').filter({ hasText: 'robin deleted.' }).waitFor()
    expect(await robin()).toBeUndefined()

    await page.goto(`${world.url}/#/groups`)
    await row(page, 'pager rota').getByRole('button', { name: 'Edit' }).click()
    const edit = page.getByRole('form', { name: 'Edit oncall' })
    await edit.getByLabel('Description').fill('the pager rota')
    await edit.getByRole('button', { name: 'Save' }).click()
    await row(page, 'the pager rota').waitFor()
    expect(((await world.api('GET', `/api/groups/${oncall.GID}`)) as Group).Desc).toBe('the pager rota')
    await screenshot(page, 'groups')
    await deleteRow(page, 'the pager rota')
    await page.getByRole('status').filter({ hasText: 'Group oncall deleted.' }).waitFor()
    expect(((await world.api('GET', '/api/groups')) as Group[]).some((g) => g.Name === 'oncall')).toBe(false)
    expectClean(opened, [409])
  }, BROWSER_TEST_MS)

  test('a non-admin sees no admin page, and the API refusals as text', async () => {
    const uid = (await world.api('POST', '/api/users', { User: USER, Pass: USER_PASSWORD, Name: 'Pat', Email: 'pat@example.org', Admin: false })) as number
    const gid = (await world.api('POST', '/api/groups', { Name: 'shared', Desc: '' })) as number
    await world.api('POST', `/api/users/${uid}/group`, { GIDs: [gid] })
    // the admin's searches are shared with the group: pat sees one, may not delete it
    await world.api('PUT', '/api/users/1/searchgroup', { GID: gid })
    const { SearchID } = (await world.api('POST', '/api/searchctrl/launch', { SearchString: 'tag=admins count', Background: true })) as { SearchID: string }

    const opened = await world.signedIn(USER, USER_PASSWORD)
    const { page } = opened
    const nav = page.getByRole('navigation', { name: 'Main' })
    await nav.getByRole('link', { name: 'Searches' }).waitFor()
    await expect(nav.getByRole('link', { name: 'Users' }).count()).resolves.toBe(0)
    await expect(nav.getByRole('link', { name: 'Groups' }).count()).resolves.toBe(0)
    await page.goto(`${world.url}/#/users`)
    await page.getByRole('heading', { name: 'Not found' }).waitFor()

    await page.goto(`${world.url}/#/searches`)
    await row(page, 'tag=admins count').waitFor()
    await deleteRow(page, 'tag=admins count')
    let said = ''
    try {
      await world.api('DELETE', `/api/searchctrl/${SearchID}`, undefined, USER, USER_PASSWORD)
    } catch (e) {
      said = (JSON.parse(String((e as Error).message).replace(/^[^{]*/, '')) as { Error: string }).Error
    }
    expect(said).not.toBe('')
    await expect(page.getByRole('alert').textContent()).resolves.toBe(said)
    expect(((await world.api('GET', '/api/searchctrl')) as SearchEntry[]).some((s) => s.ID === SearchID)).toBe(true)
    // a group pat is not in is not offered; pat's own is
    await page.goto(`${world.url}/#/library`)
    await page.getByRole('button', { name: 'New query' }).click()
    const form = page.getByRole('form', { name: 'New query' })
    await expect(form.locator('label.check').allInnerTexts()).resolves.toEqual(['shared'])
    await screenshot(page, 'searches-non-admin')
    expectClean(opened, [403])
  }, BROWSER_TEST_MS)

  test('every page: no serious accessibility violation, at 1280x800 and 390x800', async () => {
    for (const viewport of [
      { width: 1280, height: 800 },
      { width: 390, height: 800 },
    ]) {
      const opened = await world.signedIn(undefined, undefined, viewport)
      const { page } = opened
      for (const [path, heading] of [
        ['searches', 'Searches'],
        ['library', 'Library'],
        ['resources', 'Resources'],
        ['files', 'Files'],
        ['tokens', 'API tokens'],
        ['users', 'Users'],
        ['groups', 'Groups'],
      ] as const) {
        await page.goto(`${world.url}/#/${path}`)
        await page.getByRole('heading', { name: heading, exact: true }).waitFor()
        await eventually(async () => ((await page.getByRole('status').filter({ hasText: 'Loading' }).count()) === 0 ? true : undefined), `${path} loaded`)
        expect({ path, violations: await accessibilityViolations(page) }).toEqual({ path, violations: [] })
        await screenshot(page, `${path}-${viewport.width}`)
      }
      expectClean(opened)
    }
  }, BROWSER_TEST_MS * 2)
})
