// `quarry search run` and the permissions of an API token: a token without what the command
// needs is refused before anything is launched, with the missing permission named; a token holding just enough runs;
// and a script running more searches than the cap of unsaved searches is never refused, because each `search run`
// deletes the search it printed.
import { describe, expect, test } from 'bun:test'
import { cliHarness, expectFailure } from './cli'

const server = cliHarness()
const { ok, quarry, adminHome, savedJwt, api } = server

/** A token of the admin holding `capabilities`; answers its secret. */
async function token(home: string, capabilities: string[]): Promise<string> {
  const created = await api(savedJwt(home), 'POST', '/api/tokens', { name: `cli-${capabilities.join('-')}-${crypto.randomUUID().slice(0, 8)}`, capabilities })
  return created.token as string
}

/** The IDs of every search on the server. */
async function searchIds(home: string): Promise<string[]> {
  return ((await api(savedJwt(home), 'GET', '/api/searchctrl/all')) as { ID: string }[]).map((s) => s.ID)
}

describe('search run with an API token', () => {
  test('a token with Search and Download only: refused before launching, naming AttachSearch; nothing is left behind', async () => {
    const home = await adminHome()
    await ok(home, ['ingest', '--tag', 'perm'], { stdin: 'one\ntwo\n' })
    const narrow = await token(home, ['Search', 'Download'])
    const before = await searchIds(home)
    for (let i = 0; i < 3; i++) {
      const r = await quarry(home, ['--token', narrow, 'search', 'run', 'tag=perm'])
      expectFailure(r, 1, 'the API token lacks the permission AttachSearch (to follow the search) that `quarry search run` needs; nothing was launched')
    }
    expect(await searchIds(home)).toEqual(before)
    // --save needs SaveSearch too: both missing ones are named
    const r = await quarry(home, ['--token', await token(home, ['Search']), 'search', 'run', 'tag=perm', '--save'])
    expectFailure(r, 1, 'the API token lacks the permissions AttachSearch (to follow the search), Download (to read its results), SaveSearch (to save it)')
    expect(await searchIds(home)).toEqual(before)
  }, 60_000)

  test('a token holding Search, AttachSearch and Download runs a search and leaves nothing; Search alone launches in the background', async () => {
    const home = await adminHome()
    await ok(home, ['ingest', '--tag', 'perm2'], { stdin: 'one\ntwo\nthree\n' })
    const before = await searchIds(home)
    const enough = await token(home, ['Search', 'AttachSearch', 'Download'])
    expect((await ok(home, ['--token', enough, 'search', 'run', 'tag=perm2 | count', '--json'])).json()).toEqual([{ Count: 3 }])
    expect(await searchIds(home)).toEqual(before)
    // in the background the command neither follows nor reads: Search is enough, and it detaches (a token may
    // always leave what it attached)
    const id = (await ok(home, ['--token', await token(home, ['Search']), 'search', 'run', 'tag=perm2', '--background'])).stdout.trim()
    const entry = ((await api(savedJwt(home), 'GET', '/api/searchctrl/all')) as { ID: string; AttachedClients: number }[]).find((s) => s.ID === id)
    expect(entry).toMatchObject({ AttachedClients: 0 })
  }, 60_000)
})

describe('a script running many searches', () => {
  test('more `search run`s than the cap of 32 unsaved searches all succeed: each deletes the search it printed', async () => {
    const home = await adminHome()
    await ok(home, ['ingest', '--tag', 'many'], { stdin: 'x\n' })
    const before = await searchIds(home)
    for (let i = 0; i < 34; i++) expect((await ok(home, ['search', 'run', 'tag=many | count', '--json'])).json()).toEqual([{ Count: 1 }])
    expect(await searchIds(home)).toEqual(before)
  }, 300_000)
})
