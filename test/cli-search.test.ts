// The `quarry search` commands end to end against a live server: a search launched on ingested entries is saved,
// exported to an archive file (streamed, with a progress bar on a terminal), imported back as a new saved search
// shared with a group and carrying a batch name, then stopped (refused: saved), deleted.
import { describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { MAIN, SLOW, cliHarness, expectFailure } from './cli'

const server = cliHarness()
const { tempDir, quarry, ok, adminHome, savedJwt, api } = server

const ZERO_TIME = '0001-01-01T00:00:00Z'

/** Polls `check` until it answers true (the search engine runs in the background). */
async function until(what: string, check: () => Promise<boolean>) {
  for (let i = 0; i < 200; i++) {
    if (await check()) return
    await Bun.sleep(50)
  }
  throw new Error(`timed out waiting until ${what}`)
}

/** A finished, saved search of `count` entries launched by the admin; answers its ID. */
async function savedSearch(home: string, count: number): Promise<string> {
  const jwt = savedJwt(home)
  const now = Date.now()
  const entries = Array.from({ length: count }, (_, i) => ({
    TS: new Date(now - 60_000 + i).toISOString(),
    Tag: 'web',
    Data: Buffer.from(`GET /page/${i} 200 ${'x'.repeat(200)}`).toString('base64'),
  }))
  for (let i = 0; i < entries.length; i += 1000) await api(jwt, 'POST', '/api/ingest/json', entries.slice(i, i + 1000))
  const { SearchID } = await api(jwt, 'POST', '/api/searchctrl/launch', { SearchString: 'tag=web' })
  const id = String(SearchID)
  await until('the search finished', async () => (await ok(home, ['search', 'show', id, '--json'])).json()[0].Finished !== ZERO_TIME)
  await ok(home, ['search', 'save', id, '--metadata', '{"case": 42}'])
  await api(jwt, 'PUT', `/api/searchctrl/${id}/detach`)
  await until('the search is saved', async () => {
    const entry = (await ok(home, ['search', 'list', '--json'])).json().find((s: { ID: string }) => s.ID === id)
    return /SAVED/.test(entry.State) && !/SAVING/.test(entry.State)
  })
  return id
}

describe('search commands', () => {
  test('export a saved search to a file, import it back shared with a group, with a batch name', async () => {
    const home = await adminHome()
    const id = await savedSearch(home, 3000)
    const table = (await ok(home, ['search', 'list'])).stdout
    expect(table.split('\n')[0]).toMatch(/^ID\s+UID\s+GID\s+STATE\s+CLIENTS\s+STORED\s+QUERY$/)
    expect(table).toContain(id)
    expect((await ok(home, ['search', 'show', id])).stdout).toMatch(/Query:\s+tag=web/)

    const dir = tempDir()
    const file = join(dir, 'search.tar.gz')
    const exported = (await ok(home, ['search', 'export', id, file, '--json'])).json()
    expect(exported).toEqual({ ID: id, File: file, Bytes: statSync(file).size })
    expect([...readFileSync(file).subarray(0, 2)]).toEqual([0x1f, 0x8b]) // gzip
    // no progress bar when standard error is not a terminal
    const plain = await ok(home, ['search', 'export', id, join(dir, 'again.tar.gz')])
    expect(plain.stderr).toBe('')

    const gid = (await ok(home, ['group', 'create', 'importers', '--json'])).json()
    const before = new Set((await ok(home, ['search', 'list', '--json'])).json().map((s: { ID: string }) => s.ID))
    const imported = await ok(home, ['search', 'import', file, '--gid', 'importers', '--batch-name', 'case 42', '--batch-info', 'from the old cluster'])
    expect(imported.stdout).toStartWith(`Imported ${file}`)
    const after = (await ok(home, ['search', 'list', '--json'])).json() as { ID: string; State: string; GID: number }[]
    const fresh = after.filter((s) => !before.has(s.ID))
    expect(fresh).toHaveLength(1)
    const newId = fresh[0]!.ID
    expect(fresh[0]!.State).toContain('SAVED')

    const details = await api(savedJwt(home), 'GET', `/api/searchctrl/${newId}/details`)
    expect(details.GIDs).toEqual([gid])
    expect(details.Import).toMatchObject({ Imported: true, BatchName: 'case 42', BatchInfo: 'from the old cluster' })
    expect(details.Metadata).toEqual({ case: 42 })
    const [original] = (await ok(home, ['search', 'show', id, '--json'])).json()
    const [copy] = (await ok(home, ['search', 'show', newId, '--json'])).json()
    expect(copy.UserQuery).toBe(original.UserQuery)
    expect(copy.StoreSize).toBe(original.StoreSize)

    // the imported search exports to the same records
    const roundTrip = join(dir, 'copy.tar.gz')
    await ok(home, ['search', 'export', newId, roundTrip])
    const records = (f: string) => Bun.spawnSync(['sh', '-c', `tar -xzOf '${f}' --wildcards 'results/*'`]).stdout.toString()
    expect(records(roundTrip)).toBe(records(file))

    // a saved search cannot be stopped: the server's 400, exit 1
    expectFailure(await quarry(home, ['search', 'stop', newId]), 1, `search ${newId} is`)
    expect((await quarry(home, ['search', 'stop', newId])).stderr).toContain('a saved or dormant search cannot be stopped')

    await ok(home, ['search', 'delete', newId, '--yes'])
    expectFailure(await quarry(home, ['search', 'show', newId]), 1, 'search not found')
  }, SLOW)

  test('background, stop and delete a launched search', async () => {
    const home = await adminHome()
    const jwt = savedJwt(home)
    await api(jwt, 'POST', '/api/ingest/json', [{ TS: new Date().toISOString(), Tag: 'app', Data: Buffer.from('hello').toString('base64') }])
    const id = String((await api(jwt, 'POST', '/api/searchctrl/launch', { SearchString: 'tag=app' })).SearchID)
    expect((await ok(home, ['search', 'background', id])).stdout).toBe(`Backgrounded search ${id}\n`)
    const entry = (await ok(home, ['search', 'list', '--json'])).json().find((s: { ID: string }) => s.ID === id)
    expect(entry.State).toContain('BACKGROUNDED')
    const stop = await quarry(home, ['search', 'stop', id, '--json'])
    expect(stop.code).toBe(0)
    expect(stop.json()).toBeNull() // the server's answer, as it came
    await ok(home, ['search', 'delete', id, '--yes'])
    expectFailure(await quarry(home, ['search', 'show', id]), 1, 'search not found')
    expectFailure(await quarry(home, ['search', 'delete', id, '--yes']), 1, 'search not found')
    // an admin sees every search with --all; a token without the permission gets the server's refusal
    expect(Array.isArray((await ok(home, ['search', 'list', '--all', '--json'])).json())).toBe(true)
  }, SLOW)

  test('search run --no-history leaves the search out of the history; without it the search is recorded', async () => {
    const home = await adminHome()
    const jwt = savedJwt(home)
    await api(jwt, 'POST', '/api/ingest/json', [{ TS: new Date().toISOString(), Tag: 'hist', Data: Buffer.from('hello').toString('base64') }])
    const queries = async () => ((await api(jwt, 'GET', '/api/searchhistory')) as { UserQuery: string }[]).map((h) => h.UserQuery)
    expect((await ok(home, ['search', 'run', 'tag=hist grep hello | count', '--no-history', '--json'])).json()).toEqual([{ Count: 1 }])
    expect(await queries()).not.toContain('tag=hist grep hello | count')
    expect((await ok(home, ['search', 'run', 'tag=hist grep hell | count', '--json'])).json()).toEqual([{ Count: 1 }])
    expect(await queries()).toContain('tag=hist grep hell | count')
    expect(await queries()).not.toContain('tag=hist grep hello | count')
  }, SLOW)

  test('an upload that is not an archive gives the server\'s message and imports nothing', async () => {
    const home = await adminHome()
    const bogus = join(tempDir(), 'not-an-archive.tar.gz')
    writeFileSync(bogus, 'hello, this is not gzip\n')
    const before = (await ok(home, ['search', 'list', '--json'])).json().length
    expectFailure(await quarry(home, ['search', 'import', bogus]), 1, 'not a usable search archive')
    expect((await ok(home, ['search', 'list', '--json'])).json()).toHaveLength(before)
  }, SLOW)

  test('on a terminal, export and import show a progress bar that ends at 100%', async () => {
    const home = await adminHome()
    const id = await savedSearch(home, 500)
    const file = join(tempDir(), 'tty.tar.gz')
    /** Runs the CLI on a pseudo-terminal (`script`, util-linux) and answers what the terminal showed. */
    const onTerminal = async (args: string[]) => {
      const command = [process.execPath, 'run', MAIN, ...args].map((a) => `'${a}'`).join(' ')
      const proc = Bun.spawn(['script', '-qec', command, '/dev/null'], {
        env: { PATH: process.env.PATH ?? '', HOME: home, QUARRY_URL: server.url, NO_COLOR: '1', TERM: 'xterm' },
        stdin: 'pipe',
        stdout: 'pipe',
      })
      const seen = await new Response(proc.stdout).text()
      expect(await proc.exited).toBe(0)
      return seen
    }
    const exported = await onTerminal(['search', 'export', id, file])
    expect(exported).toMatch(/export \[=+\] 100%/)
    expect(statSync(file).size).toBeGreaterThan(0)
    const imported = await onTerminal(['search', 'import', file])
    expect(imported).toMatch(/import \[=+\] 100%/)
    expect(imported).toContain(`Imported ${file} as search `)
  }, SLOW)

  test('search commands with a token that lacks the permission get the server\'s 403', async () => {
    const home = await adminHome()
    const { token } = (await ok(home, ['token', 'create', 'no-search', '--perm', 'ListUsers', '--json'])).json()
    expectFailure(await quarry(tempDir(), ['--token', token, 'search', 'list']), 1, 'permission AttachSearch required')
  }, SLOW)

  test('a missing file or search is reported in one line; a refused export leaves no file', async () => {
    const admin = await adminHome()
    const dir = tempDir()
    expectFailure(await quarry(admin, ['search', 'import', join(dir, 'missing.tar')]), 1, `cannot read ${join(dir, 'missing.tar')}`)
    // an export the server refuses leaves no file behind, under the asked name or beside it
    expectFailure(await quarry(admin, ['search', 'export', '123456789', join(dir, 'out.tar')]), 1, 'search not found')
    expect(existsSync(join(dir, 'out.tar'))).toBe(false)
    expect(existsSync(join(dir, 'out.tar.part'))).toBe(false)
  }, SLOW)

  test('Ctrl-C during an export leaves no file and exits 130', async () => {
    // A stand-in server that sends the first bytes of an archive and then holds the rest back.
    let sent!: () => void
    const started = new Promise<void>((resolve) => (sent = resolve))
    const stub = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: () =>
        new Response(
          new ReadableStream({
            start(controller) {
              controller.enqueue(new Uint8Array(64 * 1024))
              sent()
            },
          }),
          { headers: { 'content-length': String(1024 * 1024) } },
        ),
    })
    try {
      const dir = tempDir()
      const file = join(dir, 'held.tar.gz')
      const proc = Bun.spawn([process.execPath, 'run', MAIN, '--server', stub.url.origin, '--token', 'x', 'search', 'export', '42', file], {
        env: { PATH: process.env.PATH ?? '', HOME: dir },
        stdout: 'pipe',
        stderr: 'pipe',
      })
      await started
      for (let i = 0; i < 200 && !existsSync(`${file}.part`); i++) await Bun.sleep(10)
      expect(existsSync(`${file}.part`)).toBe(true)
      await Bun.sleep(100) // the first bytes reach the file
      proc.kill('SIGINT')
      expect(await proc.exited).toBe(130)
      expect(existsSync(file)).toBe(false)
      expect(existsSync(`${file}.part`)).toBe(false)
    } finally {
      stub.stop(true)
    }
  }, SLOW)
})
