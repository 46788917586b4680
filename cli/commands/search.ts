// quarry search ...: search control (docs/api.md "Searches"). Archives are streamed from and to
// disk, with a progress bar on a terminal.
//
// The CLI is a client of a search only while a command runs: a command that launched or saved a search detaches
// its session (or token) from it before it ends, unless told to stay attached (`search attach`, --keep-attached).
// A saved search moves to persistent storage only once it is DORMANT (no client attached), and only a search moved
// there can be exported; a session left attached by a finished command would keep it SAVING for ever. `search run`
// without --save or --background deletes its search once it has printed it (also when interrupted): a finished
// search left to wait out its grace period would count against its owner's cap of unsaved searches, and a script
// running many searches would meet that cap. It follows the search with the server's long-poll (details?wait=S),
// not by polling, and with an API token checks the permissions it needs before it launches anything.
import type { Client } from '../client'
import { command, group, positiveInt, yesArg } from '../command'
import { client, output } from '../context'
import { ApiError, CliError, UsageError } from '../errors'
import { type Output, bytes, cell } from '../output'
import { confirm } from '../prompt'
import { resolveGid } from '../records'
import { DURATION_HELP, formatDuration, parseDuration } from '../units'
import { writeOut } from '../stdio'

interface SearchEntry { ID: string; UID: number; GID: number; State: string; AttachedClients: number; StoredData?: number }
interface SearchDetail {
  ID: string
  UID: number
  UserQuery: string
  EffectiveQuery: string
  StartRange: string
  EndRange: string
  Started: string
  Finished: string
  StoreSize: number
  IndexSize: number
}
/** GET .../details (docs/api.md "Searches"). */
interface SearchDetails extends SearchDetail {
  GIDs: number[]
  LastUpdate: string
  ItemCount: number
  Metadata: unknown
  Import: { Imported: boolean; Time: string; BatchName: string; BatchInfo: string }
  Background: boolean
  State: string
  Error: string
}

const ZERO_TIME = '0001-01-01T00:00:00Z'
/** How often `search export` asks again whether a search is saved. */
const POLL_MS = 250
/**
 * How long one look at a running search may be held by the server (GET .../details?wait=S, a long-poll answered as
 * soon as the search ends): the end is seen at once, without polling. On a terminal the count shown is refreshed
 * every second.
 */
const FOLLOW_WAIT_S = 5
const FOLLOW_WAIT_TERMINAL_S = 1
/**
 * The pause before the next look when the server answered a running search at once (one without the long-poll, an
 * older Quarry): a tenth of the time the search has run, from 2 ms up to POLL_MS, so that its end is seen at most
 * about 10 % after it happened, for about 40 cheap requests in its first second and 4 a second after that.
 */
export function followPauseMs(elapsedMs: number): number {
  return Math.max(2, Math.min(POLL_MS, Math.round(elapsedMs / 10)))
}
/** What `search export` waits for a saving search by default. */
const DEFAULT_WAIT = '10m'

/** Search IDs are strings of digits (docs/api.md "Conventions"); anything else is bad usage, never sent. */
const idArg = { id: { type: 'positional', required: true, description: 'Search ID' } } as const
function searchPath(id: string, suffix = ''): string {
  if (!/^\d+$/.test(id)) throw new UsageError(`search ID "${id}" is not a string of digits`)
  return `/api/searchctrl/${id}${suffix}`
}

/** Searches that are still running (no Finished time) show "running". */
const finishedCell = (t: string) => (t === ZERO_TIME ? 'running' : t)

const list = command({
  name: 'list',
  description: 'List the searches you may see, with their state (--all: every search, for an admin)',
  examples: ['quarry search list', 'quarry search list --all --json'],
  args: { all: { type: 'boolean', description: 'Every search on the server (admins)' } },
  async run({ args }) {
    const out = output()
    const rows = await client().get<(SearchEntry & { UserQuery?: string })[]>(args.all ? '/api/searchctrl/all' : '/api/searchctrl')
    out.result(rows, () =>
      out.table(rows, [
        { header: 'ID', value: (s) => s.ID },
        { header: 'UID', value: (s) => s.UID },
        { header: 'GID', value: (s) => s.GID || '-' },
        { header: 'STATE', value: (s) => s.State },
        { header: 'CLIENTS', value: (s) => s.AttachedClients },
        { header: 'STORED', value: (s) => (s.StoredData === undefined ? '-' : bytes(s.StoredData)) },
        { header: 'QUERY', value: (s) => clip(s.UserQuery ?? '', 60) },
      ]),
    )
  },
})

const clip = (text: string, n: number) => (text.length > n ? `${text.slice(0, n - 1)}…` : text)

const show = command({
  name: 'show',
  description: 'Show one search with its state (--json: the spec\'s detail array, unchanged)',
  examples: ['quarry search show 123456789', 'quarry search show 123456789 --json'],
  args: idArg,
  async run({ args }) {
    const out = output()
    if (out.json) {
      out.result(await client().get<SearchDetail[]>(searchPath(args.id)), () => undefined)
      return
    }
    const s = await client().get<SearchDetails>(searchPath(args.id, '/details'))
    out.result(s, () =>
      out.details([
        ['ID', s.ID],
        ['State', s.State],
        ['UID', s.UID],
        ['Groups', s.GIDs],
        ['Query', s.UserQuery],
        ['Effective query', s.EffectiveQuery],
        ['Range', `${cell(s.StartRange)} .. ${cell(s.EndRange)}`],
        ['Started', s.Started],
        ['Finished', finishedCell(s.Finished)],
        ['Results', s.ItemCount],
        ['Stored', bytes(s.StoreSize ?? 0)],
        ['Index', bytes(s.IndexSize ?? 0)],
        ...(s.Metadata !== null && s.Metadata !== undefined ? [['Metadata', s.Metadata] as [string, unknown]] : []),
        ...(s.Import?.Imported ? [['Imported', `${cell(s.Import.Time)} ${s.Import.BatchName}`.trim()] as [string, unknown]] : []),
        ...(s.Error ? [['Error', s.Error] as [string, unknown]] : []),
      ]),
    )
  },
})

/**
 * A time on the command line: RFC 3339 (`2026-01-01T00:00:00Z`), a date (`2026-01-01`, UTC), `now`, or a duration
 * before now (`1h30m`: an hour and a half ago).
 */
export function timeArg(option: string, raw: string, now = Date.now()): string {
  const text = raw.trim()
  if (text === 'now') return new Date(now).toISOString()
  if (/^(\d+|(\d+(ms|s|m|h|d))+)$/.test(text)) return new Date(now - parseDuration(option, text)).toISOString()
  const ms = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : NaN
  if (Number.isNaN(ms)) throw new UsageError(`${option}: "${raw}" is neither a time (2026-01-01T00:00:00Z, 2026-01-01) nor a duration before now (${DURATION_HELP}) nor "now"`)
  return new Date(ms).toISOString()
}

/** Detaches the caller from a search; a refusal (a token without AttachSearch, a search gone) is only reported. */
async function detachSelf(c: Client, out: Output, id: string): Promise<void> {
  try {
    await c.put(searchPath(id, '/detach'))
  } catch (e) {
    if (!(e instanceof ApiError)) throw e
    out.note(`quarry: note: could not detach from search ${id}: ${e.message}`)
  }
}

/**
 * Follows the search until it has finished (or failed), with a count of its results on a terminal: each look is a
 * long-poll the server answers as soon as the search ends. A look answered at once while the search runs (a server
 * without the long-poll) is followed by a short pause (followPauseMs) instead.
 */
async function follow(c: Client, out: Output, id: string, launched = Date.now()): Promise<SearchDetails> {
  const status = out.status(`search ${id}`)
  const waitS = status ? FOLLOW_WAIT_TERMINAL_S : FOLLOW_WAIT_S
  try {
    for (;;) {
      const asked = Date.now()
      const d = await c.get<SearchDetails>(searchPath(id, '/details'), { wait: waitS })
      status?.update(`${d.ItemCount} result${d.ItemCount === 1 ? '' : 's'} (${bytes(d.StoreSize)}), ${formatDuration(Math.floor((Date.now() - launched) / 1000) * 1000)}`)
      if (d.Error) throw new CliError(`search ${id} failed: ${d.Error}`)
      if (d.Finished !== ZERO_TIME) return d
      if (Date.now() - asked < (waitS * 1000) / 2) await Bun.sleep(followPauseMs(Date.now() - launched))
    }
  } finally {
    status?.stop()
  }
}

/** The permissions a token needs for `search run` besides Search (which the launch itself checks), with why. */
function neededPermissions(args: { background?: boolean; save?: boolean }): [string, string][] {
  const needs: [string, string][] = []
  if (!args.background) needs.push(['AttachSearch', 'to follow the search'], ['Download', 'to read its results'])
  if (args.save) needs.push(['SaveSearch', 'to save it'])
  return needs
}
/** A route of each permission that refuses a token without it (403 naming it) before it looks at the search. */
const PROBES: Record<string, [method: string, path: string]> = {
  AttachSearch: ['GET', '/api/searchctrl/0/details'],
  Download: ['GET', '/api/searchctrl/0/download/json'],
  SaveSearch: ['PATCH', '/api/searchctrl/0/save'],
}

/**
 * With an API token, checks before anything is launched that the token holds what the command needs: each
 * permission's route is asked about search 0, which does not exist (the server refuses a missing permission before
 * it looks for the search, so 403 names it and anything else means it is held). A login session holds them all.
 */
async function checkPermissions(c: Client, needs: [string, string][]): Promise<void> {
  if (!c.usesToken || needs.length === 0) return
  const missing = (
    await Promise.all(
      needs.map(async ([cap, why]) => {
        const [method, path] = PROBES[cap]!
        try {
          await c.call(method, path)
        } catch (e) {
          if (e instanceof ApiError && e.status === 403 && (e.body as { Cap?: unknown } | undefined)?.Cap === cap) return `${cap} (${why})`
          if (!(e instanceof ApiError)) throw e
        }
        return undefined
      }),
    )
  ).filter((m) => m !== undefined)
  if (missing.length > 0)
    throw new CliError(`the API token lacks ${missing.length === 1 ? 'the permission' : 'the permissions'} ${missing.join(', ')} that \`quarry search run\` needs; nothing was launched (docs/cli.md "Permissions")`)
}

/**
 * Ends what the command holds of a search it launched: a search it neither saves nor backgrounds is deleted (its
 * results were printed; left waiting out its grace period it would count against the owner's cap of unsaved
 * searches), any other one is detached from. A refused delete falls back to the detach.
 */
async function letGo(c: Client, out: Output, id: string, keep: boolean): Promise<void> {
  if (!keep) {
    try {
      await c.delete(searchPath(id))
      return
    } catch (e) {
      if (!(e instanceof ApiError)) throw e
    }
  }
  await detachSelf(c, out, id)
}

/**
 * Results as a table: entries (TS, Tag, SRC, Data as text, control characters made visible); a table's rows by their
 * columns; a chart's series by window (TS and a column per series); number cards and gauges as `name: value` lines;
 * a stack graph's bars as Key, Label, Value rows. Each is the server's json download of the search's renderer.
 */
export function resultsTable(out: Output, records: Record<string, unknown>[]): string {
  if (records.length === 0) return '(no results)'
  const head = records[0]!
  const keys0 = Object.keys(head)
  if (keys0.join() === 'Name,Magnitude,Min,Max') {
    return out.details(records.map((r) => [String(r.Name), r.Min === 0 && r.Max === 0 ? r.Magnitude : `${r.Magnitude} (${r.Min} to ${r.Max})`]))
  }
  if (keys0.join() === 'Key,Values' && Array.isArray(head.Values)) {
    const parts = records.flatMap((r) => (r.Values as { Label: string; Value: number }[]).map((v) => ({ Key: r.Key, Label: v.Label, Value: v.Value })))
    return out.table(parts, ['Key', 'Label', 'Value'].map((k) => ({ header: k.toUpperCase(), value: (p: Record<string, unknown>) => p[k] })))
  }
  // a time column comes first (a chart's windows), whatever order the download gives its members in
  const keys = 'Data' in head ? ['TS', 'Tag', 'SRC', 'Data'] : 'TS' in head ? ['TS', ...keys0.filter((k) => k !== 'TS')] : keys0
  return out.table(
    records,
    keys.map((k) => ({
      header: k.toUpperCase(),
      value: (r: Record<string, unknown>) =>
        k === 'Data' && typeof r.Data === 'string'
          ? Buffer.from(r.Data, 'base64').toString('utf8').replace(/[\u0000-\u001f\u007f]/g, (ch) => (ch === '\t' ? ' ' : '\u00b7'))
          : r[k],
    })),
  )
}

const runSearch = command({
  name: 'run',
  description: 'Launch a search, follow it to its end and print its results (a table; --json or --csv: every result as the server formats it)',
  examples: [
    'quarry search run "tag=web grep GET"',
    'quarry search run "tag=web | count" --start 1h30m',
    'quarry search run "tag=web count | numbercard count"   # the values of a number card',
    'quarry search run "tag=web chart" --start 1h      # entries per window',
    'quarry search run "tag=* grep error" --start 2026-01-01 --end 2026-01-02 --csv > errors.csv',
    'quarry search run "tag=web" --save            # keeps it: export it later with quarry search export ID FILE',
    'quarry search run "tag=web" --background      # prints the ID at once; the search goes on without you',
  ],
  args: {
    query: { type: 'positional', required: true, description: 'The query (README "Query language"), quoted as one argument' },
    start: { type: 'string', valueHint: 'TIME|DURATION', description: `Start of the time range: a time, or a duration before now (${DURATION_HELP}); default: the beginning` },
    end: { type: 'string', valueHint: 'TIME|DURATION', description: 'End of the time range (excluded): a time, a duration before now, or now (default)' },
    csv: { type: 'boolean', description: 'Print every result as CSV instead of a table (entries: TS, Tag, SRC, Data as text; a table, chart or gauge: its own columns)' },
    background: { type: 'boolean', description: 'Do not wait: print the bare search ID, detach, and let the search go on without a client' },
    save: { type: 'boolean', description: 'Keep the search: it is saved (moved to storage) once finished, for show, export and attach later (without --save or --background the search is deleted once printed)' },
    rows: { type: 'string', valueHint: 'N', description: 'At most N rows in the table (default 1000; --json and --csv print every result)' },
    'no-history': { type: 'boolean', description: 'Leave the search out of your search history' },
  },
  async run({ args }) {
    const out = output()
    if (args.csv && out.json) throw new UsageError('choose one of --json and --csv')
    const rows = args.rows === undefined ? 1000 : positiveInt('--rows', args.rows)
    const now = Date.now()
    const body = {
      SearchString: args.query,
      ...(args.start !== undefined ? { SearchStart: timeArg('--start', args.start, now) } : {}),
      ...(args.end !== undefined ? { SearchEnd: timeArg('--end', args.end, now) } : {}),
      ...(args.background ? { Background: true } : {}),
      ...(args['no-history'] ? { NoHistory: true } : {}),
    }
    const c = client()
    await checkPermissions(c, neededPermissions(args))
    const launched = Date.now()
    const { SearchID: id } = await c.post<{ SearchID: string }>('/api/searchctrl/launch', body)
    if (args.background) {
      try {
        if (args.save) await c.patch(searchPath(id, '/save'))
      } finally {
        await detachSelf(c, out, id)
      }
      // The bare ID on standard output (for `id=$(quarry search run ... --background)`); words for people on stderr.
      if (out.json) out.result({ ID: id, Background: true, Save: Boolean(args.save) }, () => undefined)
      else {
        writeOut(`${id}\n`)
        out.note(`quarry: search ${id} goes on in the background${args.save ? '; it is saved once it finishes' : ''} (quarry search show ${id})`)
      }
      return
    }
    const keep = Boolean(args.save)
    // Interrupted while following (Ctrl-C, a TERM from `timeout`): the search is let go of as at the end (deleted
    // unless saved), and the exit status says which signal.
    const interrupted = (signal: NodeJS.Signals) => {
      void letGo(c, out, id, keep)
        .catch(() => undefined)
        .finally(() => process.exit(signal === 'SIGINT' ? 130 : 143))
    }
    process.once('SIGINT', interrupted)
    process.once('SIGTERM', interrupted)
    try {
      const done = await follow(c, out, id, launched)
      // The results are read before the search is saved: a save moves them to storage once it is detached.
      if (out.json || args.csv) {
        const res = await c.stream(searchPath(id, `/download/${args.csv ? 'csv' : 'json'}`))
        await Bun.write(Bun.stdout, res)
        // through Bun as well: the write(2) of writeOut would load node:fs for one byte (cli/builtins.ts)
        if (out.json) await Bun.write(Bun.stdout, '\n')
      } else {
        const records = await c.get<Record<string, unknown>[]>(searchPath(id, '/download/json'))
        writeOut(`${resultsTable(out, records.slice(0, rows))}\n`)
        if (records.length > rows) out.note(`(${records.length - rows} more results not shown: use --rows, --json or --csv)`)
      }
      if (args.save) await c.patch(searchPath(id, '/save'))
      if (!out.json && !args.csv) {
        out.note(`Search ${id}: ${done.ItemCount} result${done.ItemCount === 1 ? '' : 's'}${args.save ? `, saved (quarry search export ${id} FILE)` : ''}`)
      }
    } finally {
      process.off('SIGINT', interrupted)
      process.off('SIGTERM', interrupted)
      await letGo(c, out, id, keep)
    }
  },
})

/**
 * Waits until a saving search is saved: polls its list entry (state and attached clients), with a status line on
 * a terminal. A search that fails to move (ERROR) or is not saved within `waitMs` stops the wait with a message.
 */
async function waitSaved(c: Client, out: Output, id: string, waitMs: number): Promise<void> {
  const deadline = Date.now() + waitMs
  const status = out.status(`export: search ${id}`)
  let noted = false
  try {
    for (;;) {
      // ?admin=true: an admin waits for any search; others get their own view (docs/api.md "Conventions")
      const entry = (await c.get<SearchEntry[]>('/api/searchctrl', { admin: 'true' })).find((s) => s.ID === id)
      if (!entry) throw new CliError(`search ${id} is gone`)
      const words = entry.State.split('/')
      if (words.includes('SAVED') && !words.includes('SAVING')) return
      if (words.includes('ERROR')) {
        const d = await c.get<SearchDetails>(searchPath(id, '/details')).catch(() => undefined)
        throw new CliError(`search ${id} could not be saved: ${d?.Error || entry.State}`)
      }
      const why =
        entry.AttachedClients > 0
          ? `${entry.AttachedClients} client(s) attached; it is moved to storage once none is (quarry search detach ${id} detaches yours)`
          : 'being moved to storage'
      status?.update(`is ${entry.State}: ${why}`)
      if (!status && !noted && !out.json) {
        out.note(`quarry: search ${id} is ${entry.State}: waiting until it is saved (${why})`)
        noted = true
      }
      if (Date.now() >= deadline) {
        throw new CliError(`search ${id} is still ${entry.State} after ${formatDuration(waitMs)} (${why}); try again later or pass a longer --wait`)
      }
      await Bun.sleep(POLL_MS)
    }
  } finally {
    status?.stop()
  }
}

const importArchive = command({
  name: 'import',
  description: 'Import a search archive (as exported by `quarry search export`) as a saved search owned by you',
  examples: [
    'quarry search import search-123.tar.gz',
    'quarry search import search-123.tar.gz --gid analysts --batch-name "case 42" --batch-info "from the old cluster"',
  ],
  args: {
    file: { type: 'positional', required: true, description: 'The archive file' },
    gid: { type: 'string', valueHint: 'GID|NAME', description: 'Share the imported search with this group' },
    'batch-name': { type: 'string', description: 'Batch name recorded with the import' },
    'batch-info': { type: 'string', description: 'Batch description recorded with the import' },
  },
  async run({ args }) {
    const c = client()
    const out = output()
    const gid = args.gid === undefined ? undefined : /^\d+$/.test(args.gid) ? positiveInt('--gid', args.gid) : await resolveGid(c, args.gid)
    const answer = await c.upload(
      'POST',
      '/api/searchctrl/import',
      args.file,
      { GID: gid === undefined ? undefined : String(gid), BatchName: args['batch-name'], BatchInfo: args['batch-info'] },
      out.progress('import'),
    )
    const id = typeof answer === 'object' && answer !== null && 'ID' in answer ? String((answer as { ID: unknown }).ID) : undefined
    out.result(answer, () => (id ? `Imported ${args.file} as search ${id}` : `Imported ${args.file}`))
  },
})

const exportArchive = command({
  name: 'export',
  description: 'Download a saved search as an archive file, for `quarry search import` here or on another server; a search still being saved is waited for',
  examples: ['quarry search export 123456789 search-123.tar.gz', 'quarry search export 123456789 s.tar.gz --wait 1h30m'],
  args: {
    ...idArg,
    file: { type: 'positional', required: true, description: 'Where to write the archive' },
    wait: { type: 'string', valueHint: 'DURATION', description: `How long to wait for a search that is still being saved (default ${DEFAULT_WAIT}; ${DURATION_HELP})` },
  },
  async run({ args }) {
    const out = output()
    const waitMs = parseDuration('--wait', args.wait ?? DEFAULT_WAIT)
    const c = client()
    const path = searchPath(args.id, '/download/archive')
    let size: number
    try {
      size = await c.download(path, args.file, out.progress('export'))
    } catch (e) {
      // 409: not saved (yet). A search that is SAVING is waited for, and one that became SAVED since the refusal (its
      // move to storage ended between the two requests) is taken at once; any other state is the server's refusal.
      if (!(e instanceof ApiError && e.status === 409)) throw e
      const d = await c.get<SearchDetails>(searchPath(args.id, '/details')).catch(() => undefined)
      const words = d?.State.split('/') ?? []
      if (!words.includes('SAVING') && !words.includes('SAVED'))
        throw new ApiError(e.status, `${e.message} (save it first: quarry search save ${args.id})`, e.body)
      await waitSaved(c, out, args.id, waitMs)
      size = await c.download(path, args.file, out.progress('export'))
    }
    out.result({ ID: args.id, File: args.file, Bytes: size }, () => `Exported search ${args.id} to ${args.file} (${bytes(size)})`)
  },
})

const save = command({
  name: 'save',
  description: 'Keep a search: it is moved to persistent storage once finished and no client is attached (this command detaches you)',
  examples: ['quarry search save 123456789', 'quarry search save 123456789 --metadata \'{"case": 42}\''],
  args: {
    ...idArg,
    metadata: { type: 'string', valueHint: 'JSON', description: 'JSON object attached to the saved search' },
    'keep-attached': { type: 'boolean', description: 'Stay attached: the search is then moved to storage only once you detach' },
  },
  async run({ args }) {
    let metadata: unknown
    if (args.metadata !== undefined) {
      try {
        metadata = JSON.parse(args.metadata)
      } catch {
        throw new UsageError('--metadata must be valid JSON')
      }
      if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) throw new UsageError('--metadata must be a JSON object')
    }
    const c = client()
    const out = output()
    const answer = await c.patch(searchPath(args.id, '/save'), metadata)
    if (!args['keep-attached']) await detachSelf(c, out, args.id)
    out.result(answer, () => `Saving search ${args.id}${args['keep-attached'] ? ' (still attached: it is moved to storage once you detach)' : ''}`)
  },
})

/** A command that sends one request about one search and confirms it in words. */
function simple(name: string, description: string, method: 'PATCH' | 'PUT' | 'DELETE', suffix: string, done: string) {
  return command({
    name,
    description,
    examples: [`quarry search ${name} 123456789`],
    args: idArg,
    async run({ args }) {
      const answer = await client().call(method, searchPath(args.id, suffix))
      output().result(answer, () => `${done} ${args.id}`)
    },
  })
}

const remove = command({
  name: 'delete',
  description: 'Delete a search and its stored results; attached clients are disconnected (asks first on a terminal)',
  examples: ['quarry search delete 123456789', 'quarry search delete 123456789 --yes'],
  args: { ...idArg, ...yesArg },
  async run({ args }) {
    const path = searchPath(args.id)
    confirm(`delete search ${args.id}`, `Delete search ${args.id} and its stored results?`, Boolean(args.yes))
    const answer = await client().delete(path)
    output().result(answer, () => `Deleted search ${args.id}`)
  },
})

export default group(
  'search',
  'Searches: run, list, show, attach, detach, save, export, import, background, stop, delete',
  {
    run: runSearch,
    list,
    show,
    attach: simple('attach', 'Attach your session (or token) to a search: it stays ACTIVE or ATTACHED until you detach', 'PUT', '/attach', 'Attached to search'),
    detach: simple('detach', 'Detach your session (or token) from a search; a saved one then moves to storage', 'PUT', '/detach', 'Detached from search'),
    import: importArchive,
    export: exportArchive,
    save,
    background: simple('background', 'Let a search go on after its last client leaves', 'PATCH', '/background', 'Backgrounded search'),
    stop: simple('stop', 'Stop a running search; what it found so far stays and can be saved', 'PUT', '/stop', 'Stopped search'),
    delete: remove,
  },
  ['quarry search run "tag=web grep GET"', 'quarry search list', 'quarry search export 123456789 s.tar.gz && quarry --server https://other search import s.tar.gz'],
)
