// The whole search workflow from the terminal (README.md, "A first walk-through"), each command a process against a
// live server (test/cli.ts): ingest, run, attach/detach, save → export, the wait for a search still being saved;
// confirmations of destructive commands; tokens by name; logout --all; user create asking for what is missing;
// durations and sizes.
import { describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expiryOf } from '../cli/commands/tokens'
import { timeArg } from '../cli/commands/search'
import { UsageError } from '../cli/errors'
import { confirm } from '../cli/prompt'
import { parseDuration, parseSize } from '../cli/units'
import { MAIN, SLOW, cliHarness, expectFailure } from './cli'
import pkg from '../package.json'

const server = cliHarness()
const { tempDir, quarry, ok, onTerminal, adminHome, savedJwt, api } = server

/** How many entries of `tag` the server holds (a count search run through the CLI). */
async function countOf(home: string, tag: string): Promise<number> {
  const [record] = (await ok(home, ['search', 'run', `tag=${tag} | count`, '--json'])).json()
  return record.Count
}

const entryOf = (home: string, id: string) =>
  ok(home, ['search', 'list', '--json']).then((r) => r.json().find((s: { ID: string }) => s.ID === id) as { State: string; AttachedClients: number } | undefined)

async function until(what: string, check: () => Promise<boolean>) {
  for (let i = 0; i < 200; i++) {
    if (await check()) return
    await Bun.sleep(50)
  }
  throw new Error(`timed out waiting until ${what}`)
}

describe('quarry ingest', () => {
  test('lines from files and standard input, tagged, with a source, in several bounded requests', async () => {
    const home = await adminHome()
    const dir = tempDir()
    const a = join(dir, 'a.log')
    const b = join(dir, 'b.log')
    const aLines = Array.from({ length: 300 }, (_, i) => `GET /a/${i} 200 ${'x'.repeat(40)}`)
    writeFileSync(a, aLines.join('\n'))
    writeFileSync(b, 'GET /b/1 404\r\n\r\nGET /b/2 500\n')
    // 2kB of request body per batch: the lines' bytes alone (each with its LF) need at least this many requests, and
    // the form's fixed parts (a few hundred bytes) at most about twice as many
    const lineBytes = [...aLines, 'GET /b/1 404', 'GET /b/2 500'].reduce((n, l) => n + l.length + 1, 0)
    const r = (await ok(home, ['ingest', a, b, '--tag', 'lines', '--source', '10.1.2.3', '--batch-size', '2kB', '--json'])).json()
    expect(r).toMatchObject({ Count: 302, Tags: ['lines'] })
    expect(r.Requests).toBeGreaterThanOrEqual(Math.ceil(lineBytes / 2000))
    expect(r.Requests).toBeLessThanOrEqual(2 * Math.ceil(lineBytes / 2000) + 1)
    // without a terminal: no progress bar, one line of result
    const piped = await ok(home, ['ingest', '--tag', 'piped'], { stdin: 'one\ntwo\nthree\n' })
    expect(piped.stdout).toBe('Ingested 3 entries (11 B) in 1 request, tag piped\n')
    expect(piped.stderr).toBe('')

    const rows = (await ok(home, ['search', 'run', 'tag=lines grep /b/', '--json'])).json()
    expect(rows.map((e: { Data: string }) => Buffer.from(e.Data, 'base64').toString())).toEqual(['GET /b/1 404', 'GET /b/2 500'])
    expect(rows[0]).toMatchObject({ Tag: 'lines', SRC: '10.1.2.3' })
    expect(await countOf(home, 'lines')).toBe(302)
  }, SLOW)

  test('lines: blank ones (white space of any kind) left out, lines across read chunks kept whole, a refused line named by file and line', async () => {
    const home = await adminHome()
    const dir = tempDir()
    // Lines long enough that a file is read in several chunks (a line then spans two), and white-space-only lines
    // (a no-break space, a tab, an ideographic space) that are no entries.
    const long = Array.from({ length: 400 }, (_, i) => `${i} ${String.fromCharCode(97 + (i % 26)).repeat(700 + (i % 13))} é`)
    const file = join(dir, 'long.log')
    writeFileSync(file, [long.slice(0, 200).join('\n'), '\u00a0\t', '\u3000', long.slice(200).join('\n')].join('\n'))
    expect((await ok(home, ['ingest', file, '--tag', 'chunks', '--batch-size', '64kB', '--json'])).json()).toMatchObject({ Count: 400 })
    const rows = (await ok(home, ['search', 'run', 'tag=chunks', '--json'])).json()
    expect(rows.map((e: { Data: string }) => Buffer.from(e.Data, 'base64').toString()).sort()).toEqual([...long].sort())

    // Line 52 is past the server's QUARRY_INGEST_MAX_LINE (1 MiB): the 50 lines of the batches before it are stored
    // (line 51 is blank), its batch and the rest are not.
    const bad = join(dir, 'bad.log')
    const short = Array.from({ length: 50 }, (_, i) => `short ${i}`)
    writeFileSync(bad, [...short, ' ', 'x'.repeat(1100 * 1024), 'after'].join('\n'))
    expectFailure(
      await quarry(home, ['ingest', bad, '--tag', 'refused-line', '--batch-size', '2kB']),
      1,
      `${bad} line 52 is longer than 1048576 bytes (QUARRY_INGEST_MAX_LINE); the 50 entries of earlier batches are stored`,
    )
    expect(await countOf(home, 'refused-line')).toBe(50)
  }, SLOW)

  test('NDJSON entries with their own time, tag and source; a refused entry is named by file and line, its batch not stored', async () => {
    const home = await adminHome()
    const dir = tempDir()
    const good = join(dir, 'good.ndjson')
    writeFileSync(good, [
      JSON.stringify({ TS: '2020-01-01T10:00:00Z', Tag: 'nd-one', SRC: '10.0.0.9', Data: 'first "quoted"' }),
      JSON.stringify({ TS: '2020-01-01T11:00:00Z', Data: 'second' }),
      '',
    ].join('\n'))
    expect((await ok(home, ['ingest', good, '--format', 'ndjson', '--tag', 'nd-two'])).stdout).toContain('Ingested 2 entries')
    const csv = (await ok(home, ['search', 'run', 'tag=nd-one,nd-two', '--start', '2020-01-01', '--end', '2020-01-02', '--csv'])).stdout
    expect(csv).toBe('TS,Tag,SRC,Data\r\n2020-01-01T10:00:00.000Z,nd-one,10.0.0.9,"first ""quoted"""\r\n2020-01-01T11:00:00.000Z,nd-two,,second\r\n')

    // the server refuses entry 1 of the batch (a time it cannot read): the message names line 2, nothing is stored
    const bad = join(dir, 'bad.ndjson')
    writeFileSync(bad, `${JSON.stringify({ Tag: 'nd-bad', Data: 'a' })}\n${JSON.stringify({ Tag: 'nd-bad', TS: 'yesterday', Data: 'b' })}\n`)
    expectFailure(await quarry(home, ['ingest', bad, '--format', 'ndjson']), 1, `${bad} line 2: TS is not an RFC 3339 time; nothing was stored`)
    // a line that is no JSON object is refused here, before its batch is sent
    writeFileSync(bad, `${JSON.stringify({ Tag: 'nd-bad', Data: 'a' })}\nnot json\n`)
    expectFailure(await quarry(home, ['ingest', bad, '--format', 'ndjson']), 1, `${bad} line 2: not a JSON object`)
    expect(await countOf(home, 'nd-bad')).toBe(0)

    // Many batches, sent one after the other while the next is read: a refusal in a later batch (by the server, or
    // of a line here while the batch before it is still being stored) says how many entries the earlier batches
    // stored, and exactly those are stored.
    const line = (i: number, ts?: string) => JSON.stringify({ Tag: 'nd-many', ...(ts ? { TS: ts } : {}), Data: `entry ${i} ${'y'.repeat(60)}` })
    const many = Array.from({ length: 120 }, (_, i) => line(i))
    writeFileSync(bad, [...many, line(120, 'yesterday'), line(121)].join('\r\n'))
    const refused = await quarry(home, ['ingest', bad, '--format', 'ndjson', '--batch-size', '2kB'])
    const stored = Number(/; the (\d+) entries of earlier batches are stored/.exec(refused.stderr)?.[1])
    expectFailure(refused, 1, `${bad} line 121: TS is not an RFC 3339 time; the ${stored} entries of earlier batches are stored`)
    expect(stored).toBeGreaterThan(80)
    expect(await countOf(home, 'nd-many')).toBe(stored)
    writeFileSync(bad, [...many, 'not json'].join('\n'))
    const local = await quarry(home, ['ingest', bad, '--format', 'ndjson', '--batch-size', '2kB', '--tag', 'nd-more'])
    const before = Number(/; the (\d+) entries of earlier batches are stored/.exec(local.stderr)?.[1])
    expectFailure(local, 1, `${bad} line 121: not a JSON object (--format ndjson wants one object per line); the ${before} entries of earlier batches are stored`)
    expect(await countOf(home, 'nd-many')).toBe(stored + before)
  }, SLOW)

  test('times read from nginx lines (their own zones) so --start/--end select them; --zone, --timestamp-format, --no-timestamps', async () => {
    const home = await adminHome()
    const dir = tempDir()
    const t0 = Date.parse('2020-03-01T10:00:00Z')
    const months = ['Jan', 'Feb', 'Mar']
    // 60 nginx lines one minute apart, written in UTC+02:00 (so 12:00 local is 10:00Z), and one line without a time
    const lines = Array.from({ length: 60 }, (_, i) => {
      const local = new Date(t0 + i * 60_000 + 2 * 3_600_000)
      const p2 = (n: number) => String(n).padStart(2, '0')
      const stamp = `${p2(local.getUTCDate())}/${months[local.getUTCMonth()]}/${local.getUTCFullYear()}:${p2(local.getUTCHours())}:${p2(local.getUTCMinutes())}:00 +0200`
      return `198.51.100.${i % 200} - - [${stamp}] "GET /item/${i} HTTP/1.1" 200 ${100 + i} "-" "curl/8.5.0"`
    })
    const log = join(dir, 'access.log')
    writeFileSync(log, `${lines.join('\n')}\nno time on this line\n`)
    expect((await ok(home, ['ingest', log, '--tag', 'nginx-ts', '--json'])).json()).toMatchObject({ Count: 61 })
    const rows = (await ok(home, ['search', 'run', 'tag=nginx-ts', '--start', '2020-03-01T10:15:00Z', '--end', '2020-03-01T10:45:00Z', '--json'])).json()
    const got = rows.map((e: { TS: string; Data: string }) => [e.TS, Buffer.from(e.Data, 'base64').toString()]).sort()
    const want = lines.slice(15, 45).map((l, k) => [new Date(t0 + (15 + k) * 60_000).toISOString(), l]).sort()
    expect(got).toEqual(want)
    // the line without a time got the time it was sent: outside 2020
    expect(await countOf(home, 'nginx-ts')).toBe(61)
    const [in2020] = (await ok(home, ['search', 'run', 'tag=nginx-ts | count', '--start', '2020-01-01', '--end', '2021-01-01', '--json'])).json()
    expect(in2020.Count).toBe(60)

    // --no-timestamps: every line is stamped now; none falls in 2020
    await ok(home, ['ingest', log, '--tag', 'nginx-now', '--no-timestamps'])
    expect(await countOf(home, 'nginx-now')).toBe(61)
    expect((await ok(home, ['search', 'run', 'tag=nginx-now', '--start', '2020-01-01', '--end', '2021-01-01', '--json'])).json()).toEqual([])

    // dpkg lines have no zone: --zone says which; --timestamp-format DPKG ignores the epoch that starts the line
    const dpkg = join(dir, 'dpkg.log')
    writeFileSync(dpkg, '1583056800 2020-03-01 12:00:00 status installed libc6:amd64 2.31-13\n')
    await ok(home, ['ingest', dpkg, '--tag', 'dpkg-ts', '--zone', 'Europe/Paris', '--timestamp-format', 'DPKG'])
    const dpkgRows = (await ok(home, ['search', 'run', 'tag=dpkg-ts', '--start', '2020-03-01', '--end', '2020-03-02', '--json'])).json()
    expect(dpkgRows.map((e: { TS: string }) => e.TS)).toEqual(['2020-03-01T11:00:00.000Z'])
    for (const [args, message] of [
      [['ingest', '--tag', 'x', '--zone', 'Mars/Olympus'], '--zone: "Mars/Olympus" is neither an IANA time zone'],
      [['ingest', '--tag', 'x', '--timestamp-format', 'Stardate'], '--timestamp-format: "Stardate" is not a timestamp format'],
    ] as [string[], string][])
      expectFailure(await quarry(home, args, { stdin: 'never read\n' }), 2, message)
  }, SLOW)

  test('bad usage is refused before anything is read or sent', async () => {
    const home = await adminHome()
    const cases: [string[], string][] = [
      [['ingest'], 'name the tag of the entries with --tag NAME'],
      [['ingest', '--tag', 'bad tag'], '--tag: "bad tag" must be 1 to 128 letters'],
      [['ingest', '--tag', 'x', '--source', 'host'], '--source: "host" is not an IP address'],
      [['ingest', '--tag', 'x', '--format', 'xml'], '--format: "xml" is neither lines nor ndjson'],
      [['ingest', '--tag', 'x', '--batch-size', '10XB'], '--batch-size: "10XB" is not a size'],
      [['ingest', '-', '-', '--tag', 'x'], 'standard input (-) can be read only once'],
    ]
    for (const [args, message] of cases) expectFailure(await quarry(home, args, { stdin: 'never read\n' }), 2, message)
    expectFailure(await quarry(home, ['ingest', join(tempDir(), 'missing.log'), '--tag', 'x']), 1, 'cannot read')
    expect(await countOf(home, 'x')).toBe(0)
  }, SLOW)

  test('on a terminal, a progress bar that ends at 100%', async () => {
    const home = await adminHome()
    const file = join(tempDir(), 'tty.log')
    writeFileSync(file, Array.from({ length: 2000 }, (_, i) => `line ${i}`).join('\n'))
    const { code, seen } = await onTerminal(home, ['ingest', file, '--tag', 'tty', '--batch-size', '4kB'])
    expect(code).toBe(0)
    expect(seen).toMatch(/ingest \[=+\] 100%/)
    expect(seen).toMatch(/Ingested 2000 entries \(.*\) in \d+ requests, tag tty/)
  }, SLOW)
})

describe('quarry search run, attach, detach, save, export', () => {
  test('run prints a table, JSON or CSV, follows the search to its end and deletes it (neither saved nor backgrounded)', async () => {
    const home = await adminHome()
    await ok(home, ['ingest', '--tag', 'runs'], { stdin: 'alpha 1\nbeta 2\nalpha\t3\n' })
    const table = await ok(home, ['search', 'run', 'tag=runs grep alpha'])
    expect(table.stdout.split('\n')[0]).toMatch(/^TS\s+TAG\s+SRC\s+DATA$/)
    expect(table.stdout).toMatch(/runs\s+-\s+alpha 1\n/)
    expect(table.stdout).toMatch(/runs\s+-\s+alpha 3\n/) // a tab in Data does not break the table
    const id = /^Search (\d+): 2 results$/m.exec(table.stderr)?.[1]
    expect(id).toBeDefined()
    // printed, neither saved nor backgrounded: the CLI deleted it, so it does not count against the cap of unsaved searches
    expect(await entryOf(home, id!)).toBeUndefined()

    expect((await ok(home, ['search', 'run', 'tag=runs | count'])).stdout).toMatch(/^COUNT\n3\n$/)
    expect((await ok(home, ['search', 'run', 'tag=runs', '--rows', '1'])).stderr).toContain('(2 more results not shown')
    // the time range: a duration before now, and an end before every entry
    expect((await ok(home, ['search', 'run', 'tag=runs | count', '--start', '1h30m', '--json'])).json()).toEqual([{ Count: 3 }])
    expect((await ok(home, ['search', 'run', 'tag=runs', '--end', '2000-01-01', '--json'])).json()).toEqual([])

    // the server's refusal of a query: its message, exit 1, no search left behind
    const before = (await ok(home, ['search', 'list', '--json'])).json().length
    expectFailure(await quarry(home, ['search', 'run', 'tag=runs | frobnicate']), 1, 'frobnicate: unknown module at position 11')
    expect((await ok(home, ['search', 'list', '--json'])).json()).toHaveLength(before)
    for (const [args, message] of [
      [['search', 'run', 'tag=runs', '--csv', '--json'], 'choose one of --json and --csv'],
      [['search', 'run', 'tag=runs', '--start', 'yesterday'], '--start: "yesterday" is neither a time'],
      [['search', 'run', 'tag=runs', '--rows', '0'], '--rows: "0" is not a positive integer'],
    ] as [string[], string][]) expectFailure(await quarry(home, args), 2, message)
  }, SLOW)

  test('--background prints the ID at once and detaches; --save keeps the search for export', async () => {
    const home = await adminHome()
    await ok(home, ['ingest', '--tag', 'bg'], { stdin: 'one\ntwo\n' })
    const launched = (await ok(home, ['search', 'run', 'tag=bg', '--background', '--json'])).json()
    expect(launched).toMatchObject({ Background: true, Save: false })
    // without --json: the bare ID on standard output, as `id=$(quarry search run ... --background)` wants it
    const bare = await ok(home, ['search', 'run', 'tag=bg', '--background'])
    expect(bare.stdout).toMatch(/^\d+\n$/)
    expect(bare.stderr).toContain(`search ${bare.stdout.trim()} goes on in the background`)
    expect(await entryOf(home, bare.stdout.trim())).toBeDefined()
    await until('it finished', async () => (await ok(home, ['search', 'show', launched.ID, '--json'])).json()[0].Finished !== '0001-01-01T00:00:00Z')
    expect(await entryOf(home, launched.ID)).toMatchObject({ State: 'DORMANT/BACKGROUNDED', AttachedClients: 0 })
    // show prints the state
    expect((await ok(home, ['search', 'show', launched.ID])).stdout).toMatch(/State:\s+DORMANT\/BACKGROUNDED\n/)

    const saved = await ok(home, ['search', 'run', 'tag=bg', '--save'])
    const id = /^Search (\d+): 2 results, saved/m.exec(saved.stderr)![1]!
    const file = join(tempDir(), 'run.tar.gz')
    await ok(home, ['search', 'export', id, file]) // waits, if need be, until it is SAVED
    expect([...readFileSync(file).subarray(0, 2)]).toEqual([0x1f, 0x8b])
    expect((await entryOf(home, id))?.State).toBe('DORMANT/SAVED')

    const both = (await ok(home, ['search', 'run', 'tag=bg', '--background', '--save', '--json'])).json()
    await ok(home, ['search', 'export', both.ID, join(tempDir(), 'both.tar.gz')])
  }, SLOW)

  test('after `search save ID`, `search export ID` works although the launching session was attached (the reported case)', async () => {
    const home = await adminHome()
    const jwt = savedJwt(home)
    await api(jwt, 'POST', '/api/ingest/json', [{ Tag: 'reported', Data: Buffer.from('hello').toString('base64') }])
    // launched by the CLI's own login session, which the server attaches to the search
    const id = String((await api(jwt, 'POST', '/api/searchctrl/launch', { SearchString: 'tag=reported' })).SearchID)
    expect((await entryOf(home, id))?.AttachedClients).toBe(1)
    expect((await ok(home, ['search', 'save', id])).stdout).toBe(`Saving search ${id}\n`)
    const file = join(tempDir(), 'reported.tar.gz')
    const exported = await quarry(home, ['search', 'export', id, file])
    expect(exported.stderr).not.toContain('only a saved search can be exported')
    expect(exported.code).toBe(0)
    expect(exported.stdout).toStartWith(`Exported search ${id} to ${file}`)
    expect(await entryOf(home, id)).toMatchObject({ State: 'DORMANT/SAVED', AttachedClients: 0 })
  }, SLOW)

  test('attach and detach; export waits for a search another session keeps SAVING, and gives up after --wait', async () => {
    const home = await adminHome()
    const other = tempDir()
    await ok(other, ['login', 'admin', '--password-stdin'], { stdin: 'admin-password-1\n' })
    await ok(home, ['ingest', '--tag', 'waits'], { stdin: 'one\n' })
    const { ID: id } = (await ok(home, ['search', 'run', 'tag=waits', '--background', '--json'])).json()
    expect((await ok(other, ['search', 'attach', id])).stdout).toBe(`Attached to search ${id}\n`)
    expect(await entryOf(home, id)).toMatchObject({ AttachedClients: 1 })
    // saved with --keep-attached by the other session: it stays SAVING while attached
    expect((await ok(other, ['search', 'save', id, '--keep-attached'])).stdout).toContain('still attached')
    expect((await entryOf(home, id))?.State).toBe('ACTIVE/BACKGROUNDED/SAVING')
    expect((await ok(home, ['search', 'list'])).stdout).toMatch(new RegExp(`${id}\\s+1\\s+-\\s+ACTIVE/BACKGROUNDED/SAVING\\s+1\\s+`))

    const dir = tempDir()
    const started = Date.now()
    const gaveUp = await quarry(home, ['search', 'export', id, join(dir, 'never.tar.gz'), '--wait', '1s'])
    expect(gaveUp.code).toBe(1)
    expect(gaveUp.stderr).toContain(`quarry: search ${id} is still ACTIVE/BACKGROUNDED/SAVING after 1s (1 client(s) attached`)
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000)
    expect(existsSync(join(dir, 'never.tar.gz'))).toBe(false)

    // an export waiting meanwhile completes once the other session detaches
    const file = join(dir, 'waited.tar.gz')
    const waiting = Bun.spawn([process.execPath, 'run', MAIN, 'search', 'export', id, file], {
      env: { PATH: process.env.PATH ?? '', HOME: home, QUARRY_URL: server.url },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const stderr = new Response(waiting.stderr).text()
    await Bun.sleep(1000)
    expect(existsSync(file)).toBe(false)
    expect((await ok(other, ['search', 'detach', id])).stdout).toBe(`Detached from search ${id}\n`)
    expect(await waiting.exited).toBe(0)
    expect(await stderr).toContain(`search ${id} is ACTIVE/BACKGROUNDED/SAVING: waiting until it is saved`)
    expect([...readFileSync(file).subarray(0, 2)]).toEqual([0x1f, 0x8b])

    // export of a search that is not being saved: the server's refusal at once, with the way out
    const { ID: unsaved } = (await ok(home, ['search', 'run', 'tag=waits', '--background', '--json'])).json()
    expectFailure(await quarry(home, ['search', 'export', unsaved, join(dir, 'x.tar.gz')]), 1, `search ${unsaved} is DORMANT/BACKGROUNDED: only a saved search can be exported (save it first: quarry search save ${unsaved})`)
    expectFailure(await quarry(home, ['search', 'export', unsaved, join(dir, 'x.tar.gz'), '--wait', 'soon']), 2, '--wait: "soon" is not a duration')
  }, SLOW)
})

describe('search run and export on a terminal, and Ctrl-C', () => {
  test('run shows the count so far while it follows; export shows why it waits', async () => {
    const home = await adminHome()
    await ok(home, ['ingest', '--tag', 'ttyrun'], { stdin: 'a\nb\n' })
    const run = await onTerminal(home, ['search', 'run', 'tag=ttyrun'])
    expect(run.code).toBe(0)
    expect(run.seen).toMatch(/search \d+ 2 results \(\d+ B\), \w+/)
    expect(run.seen).toMatch(/Search \d+: 2 results/)

    const other = tempDir()
    await ok(other, ['login', 'admin', '--password-stdin'], { stdin: 'admin-password-1\n' })
    const { ID: id } = (await ok(home, ['search', 'run', 'tag=ttyrun', '--background', '--json'])).json()
    await ok(other, ['search', 'attach', id])
    await ok(other, ['search', 'save', id, '--keep-attached'])
    const waited = await onTerminal(home, ['search', 'export', id, join(tempDir(), 'w.tar.gz'), '--wait', '1s'])
    expect(waited.code).toBe(1)
    expect(waited.seen).toContain(`export: search ${id} is ACTIVE/BACKGROUNDED/SAVING: 1 client(s) attached`)
    await ok(other, ['search', 'detach', id])
  }, SLOW)

  test('Ctrl-C while run follows a search deletes it (not saved) and exits 130; it follows with the long-poll, as quarry/<version>', async () => {
    // A stand-in server whose search never finishes, recording the requests it gets.
    const seen: string[] = []
    const agents = new Set<string | null>()
    let following!: () => void
    const polled = new Promise<void>((resolve) => (following = resolve))
    const stub = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch(req) {
        const url = new URL(req.url)
        const path = url.pathname
        seen.push(`${req.method} ${path}${url.search}`)
        agents.add(req.headers.get('user-agent'))
        // search 0: the permission checks of a token (this one holds them all)
        if (path.startsWith('/api/searchctrl/0/')) return Response.json({ Error: 'search 0 not found' }, { status: 404 })
        if (path === '/api/searchctrl/launch') return Response.json({ SearchID: '42' })
        if (path === '/api/searchctrl/42/details') {
          following()
          return Response.json({ ID: '42', Finished: '0001-01-01T00:00:00Z', ItemCount: 0, StoreSize: 0, State: 'ACTIVE', Error: '' })
        }
        return Response.json(null)
      },
    })
    try {
      const proc = Bun.spawn([process.execPath, 'run', MAIN, '--server', stub.url.origin, '--token', 'x', 'search', 'run', 'tag=web'], {
        env: { PATH: process.env.PATH ?? '', HOME: tempDir() },
        stdout: 'pipe',
        stderr: 'pipe',
      })
      await polled
      proc.kill('SIGINT')
      expect(await proc.exited).toBe(130)
      expect(seen).toContain('DELETE /api/searchctrl/42')
      expect(seen).toContain('GET /api/searchctrl/42/details?wait=5')
      expect(seen).not.toContain('GET /api/searchctrl/42/download/json')
      expect([...agents]).toEqual([`quarry/${pkg.version}`])
    } finally {
      stub.stop(true)
    }
  }, SLOW)
})

describe('destructive commands ask first', () => {
  test('without a terminal they refuse without --yes, and nothing is deleted', async () => {
    const admin = await adminHome()
    await ok(admin, ['user', 'create', 'doomed', '--name', 'D', '--email', 'd@example.com', '--password-stdin'], { stdin: 'doomed-password-1\n' })
    await ok(admin, ['group', 'create', 'doomed-group'])
    const token = (await ok(admin, ['token', 'create', 'doomed-token', '--perm', 'Search', '--json'])).json()
    const { ID: search } = (await ok(admin, ['search', 'run', 'tag=none', '--background', '--json'])).json()
    const cases: [string[], string][] = [
      [['user', 'delete', 'doomed'], 'refusing to delete user doomed (UID '],
      [['group', 'delete', 'doomed-group'], 'refusing to delete group doomed-group (GID '],
      [['token', 'delete', 'doomed-token'], `refusing to delete token doomed-token (${token.id}) without confirmation: no terminal to ask on, pass --yes`],
      [['search', 'delete', search], `refusing to delete search ${search} without confirmation`],
    ]
    for (const [args, message] of cases) expectFailure(await quarry(admin, args), 2, message)
    expect((await ok(admin, ['user', 'show', 'doomed', '--json'])).json().User).toBe('doomed')
    expect((await ok(admin, ['group', 'show', 'doomed-group', '--json'])).json().Name).toBe('doomed-group')
    expect((await ok(admin, ['token', 'show', token.id, '--json'])).json().name).toBe('doomed-token')
    expect(await entryOf(admin, search)).toBeDefined()

    for (const [args] of cases) await ok(admin, [...args, '--yes'])
    expectFailure(await quarry(admin, ['user', 'show', 'doomed']), 1, 'no user named "doomed"')
    expectFailure(await quarry(admin, ['group', 'show', 'doomed-group']), 1, 'no group named "doomed-group"')
    expectFailure(await quarry(admin, ['token', 'show', token.id]), 1, 'token not found')
    expect(await entryOf(admin, search)).toBeUndefined()
  }, SLOW)

  test('on a terminal: any answer but y keeps the item (exit 1), y deletes it', async () => {
    const admin = await adminHome()
    await ok(admin, ['group', 'create', 'asked'])
    const question = 'Delete group asked (GID '
    const no = await onTerminal(admin, ['group', 'delete', 'asked'], [{ after: '[y/N]', type: 'n\r' }])
    expect(no.code).toBe(1)
    expect(no.seen).toContain(question)
    expect(no.seen).toContain('quarry: aborted: did not delete group asked')
    expect((await ok(admin, ['group', 'show', 'asked', '--json'])).json().Name).toBe('asked')
    const empty = await onTerminal(admin, ['group', 'delete', 'asked'], [{ after: '[y/N]', type: '\r' }])
    expect(empty.code).toBe(1)
    const yes = await onTerminal(admin, ['group', 'delete', 'asked'], [{ after: '[y/N]', type: 'y\r' }])
    expect(yes.code).toBe(0)
    expect(yes.seen).toContain('Deleted group asked')
    expectFailure(await quarry(admin, ['group', 'show', 'asked']), 1, 'no group named "asked"')
  }, SLOW)

  test('the confirmation rule itself (the seam the commands use)', () => {
    const asked: string[] = []
    const person = (answer: string | null) => ({ terminal: true, ask: (q: string) => (asked.push(q), answer) })
    expect(() => confirm('delete x', 'Delete x?', true, { terminal: false, ask: () => 'n' })).not.toThrow()
    expect(() => confirm('delete x', 'Delete x?', false, { terminal: false, ask: () => 'y' })).toThrow(UsageError)
    for (const yes of ['y', 'Y', 'yes', ' YES ']) expect(() => confirm('delete x', 'Delete x?', false, person(yes))).not.toThrow()
    for (const no of ['n', '', 'yess', null]) expect(() => confirm('delete x', 'Delete x?', false, person(no))).toThrow('aborted: did not delete x')
    expect(asked[0]).toBe('Delete x? [y/N]')
  })
})

describe('tokens by name, logout --all, user create', () => {
  test('show, update, refresh and delete take a token\'s name; a name several tokens have is refused with their IDs', async () => {
    const admin = await adminHome()
    const solo = (await ok(admin, ['token', 'create', 'solo', '--perm', 'Search', '--json'])).json()
    const dupA = (await ok(admin, ['token', 'create', 'dup', '--perm', 'Search', '--json'])).json()
    const dupB = (await ok(admin, ['token', 'create', 'dup', '--perm', 'Search', '--json'])).json()
    expect((await ok(admin, ['token', 'show', 'solo', '--json'])).json().id).toBe(solo.id)
    const before = Date.now()
    const updated = (await ok(admin, ['token', 'update', 'solo', '--description', 'by name', '--expires', '1h30m', '--json'])).json()
    expect(updated).toMatchObject({ id: solo.id, description: 'by name' })
    expect(Date.parse(updated.expiresAt) - before).toBeGreaterThanOrEqual(5_400_000 - 1000)
    expect(Date.parse(updated.expiresAt) - Date.now()).toBeLessThanOrEqual(5_400_000)
    expect((await ok(admin, ['token', 'refresh', 'solo', '--expires', '2h', '--json'])).json().token).not.toBe(solo.token)

    for (const cmd of [['show', 'dup'], ['update', 'dup', '--description', 'x'], ['delete', 'dup', '--yes']]) {
      const r = await quarry(admin, ['token', ...cmd])
      expectFailure(r, 1, '2 tokens are named "dup": give the ID of the one you mean: ')
      expect(r.stderr).toContain(dupA.id)
      expect(r.stderr).toContain(dupB.id)
    }
    expectFailure(await quarry(admin, ['token', 'show', 'nobody']), 1, 'no token named "nobody"')
    const names = () => ok(admin, ['token', 'list', '--json']).then((r) => r.json().map((t: { name: string }) => t.name).sort())
    expect((await names()).filter((n: string) => n === 'dup')).toHaveLength(2) // nothing was deleted
    await ok(admin, ['token', 'delete', dupA.id, '--yes'])
    expect((await ok(admin, ['token', 'delete', 'dup', '--yes'])).stdout).toBe(`Deleted token dup (${dupB.id})\n`)
    expect((await ok(admin, ['token', 'delete', 'solo', '--yes'])).stdout).toBe(`Deleted token solo (${solo.id})\n`)
    expect(await names()).not.toContain('solo')
  }, SLOW)

  test('logout --all says it ended every session, and it did', async () => {
    const admin = await adminHome()
    await ok(admin, ['user', 'create', 'roamer', '--name', 'R', '--email', 'r@example.com', '--password-stdin'], { stdin: 'roamer-password-1\n' })
    const laptop = tempDir()
    const phone = tempDir()
    for (const home of [laptop, phone]) await ok(home, ['login', 'roamer', '--password-stdin'], { stdin: 'roamer-password-1\n' })
    const out = await ok(laptop, ['logout', '--all'])
    expect(out.stdout).toBe(`Logged out of ${server.url}: ended every session of roamer, on every device\n`)
    expectFailure(await quarry(phone, ['whoami']), 1, 'session has ended')
    await ok(phone, ['login', 'roamer', '--password-stdin'], { stdin: 'roamer-password-1\n' })
    expect((await ok(phone, ['logout', '--all', '--json'])).json()).toEqual({ Server: server.url, LoggedOut: true, AllSessions: true })
    expect((await ok(admin, ['user', 'show', 'roamer', '--json'])).json().User).toBe('roamer')
  }, SLOW)

  test('user create without --email: asked for on a terminal, otherwise the missing option is named and nothing is created', async () => {
    const admin = await adminHome()
    expectFailure(
      await quarry(admin, ['user', 'create', 'carol', '--name', 'Carol', '--password-stdin'], { stdin: 'carol-password-1\n' }),
      2,
      'missing --email ADDRESS (the e-mail address): every account needs both, and there is no terminal to ask on',
    )
    expectFailure(await quarry(admin, ['user', 'create', 'carol']), 2, 'missing --name NAME (the real name) and --email ADDRESS (the e-mail address)')
    expectFailure(await quarry(admin, ['user', 'show', 'carol']), 1, 'no user named "carol"')

    const asked = await onTerminal(admin, ['user', 'create', 'carol', '--name', 'Carol'], [
      { after: 'E-mail of carol:', type: 'carol@example.com\r' },
      { after: 'Password for carol: ', type: 'carol-password-1\r' },
      { after: 'Repeat it: ', type: 'carol-password-1\r' },
    ])
    expect(asked.code).toBe(0)
    expect(asked.seen).toMatch(/Created user carol \(UID \d+\)/)
    expect((await ok(admin, ['user', 'show', 'carol', '--json'])).json()).toMatchObject({ Name: 'Carol', Email: 'carol@example.com' })
    await ok(tempDir(), ['login', 'carol', '--password-stdin'], { stdin: 'carol-password-1\n' })
  }, SLOW)
})

describe('durations and sizes', () => {
  test('durations: 1h30m and its kin, a bare number of seconds; anything else names the option', () => {
    expect(parseDuration('--x', '1h30m')).toBe(5_400_000)
    expect(parseDuration('--x', '2d12h')).toBe(216_000_000)
    expect(parseDuration('--x', '90s')).toBe(90_000)
    expect(parseDuration('--x', '1m500ms')).toBe(60_500)
    expect(parseDuration('--x', '90')).toBe(90_000)
    for (const bad of ['30m1h', '1h1h', '1.5h', 'h', '1h 30m', '', 'soon']) expect(() => parseDuration('--x', bad)).toThrow('--x: ')
    expect(() => parseDuration('--x', '0s')).toThrow('must be a positive duration')
    const now = Date.UTC(2026, 0, 1)
    expect(expiryOf('1h30m', now)).toBe('2026-01-01T01:30:00.000Z')
    expect(expiryOf('3600', now)).toBe('2026-01-01T01:00:00.000Z')
    expect(timeArg('--start', '1h30m', now)).toBe('2025-12-31T22:30:00.000Z')
    expect(timeArg('--end', 'now', now)).toBe('2026-01-01T00:00:00.000Z')
    expect(timeArg('--start', '2025-06-01', now)).toBe('2025-06-01T00:00:00.000Z')
  })

  test('sizes: decimal units in powers of 1000, binary in powers of 1024, said in --help', async () => {
    expect(parseSize('--s', '10MB')).toBe(10_000_000)
    expect(parseSize('--s', '10mb')).toBe(10_000_000)
    expect(parseSize('--s', '10MiB')).toBe(10_485_760)
    expect(parseSize('--s', '1.5kB')).toBe(1500)
    expect(parseSize('--s', '2 GiB')).toBe(2 * 1024 ** 3)
    expect(parseSize('--s', '512')).toBe(512)
    for (const bad of ['10XB', 'MB', '-1MB', '1e3']) expect(() => parseSize('--s', bad)).toThrow('--s: ')
    expect(() => parseSize('--s', '0MB')).toThrow('must be a positive size')
    const help = (await ok(tempDir(), ['ingest', '--help'])).stdout
    expect(help).toContain('kB, MB, GB are powers of 1000; KiB, MiB, GiB powers of 1024')
  })
})
