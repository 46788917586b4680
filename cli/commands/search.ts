// quarry search ...: search control (spec "Search control", decisions §6). Archives are streamed from and to
// disk, with a progress bar on a terminal.
import { command, group, positiveInt } from '../command'
import { client, output } from '../context'
import { UsageError } from '../errors'
import { bytes } from '../output'
import { resolveGid } from '../records'

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

/** Search IDs are strings of digits (decisions §1); anything else is bad usage, never sent. */
const idArg = { id: { type: 'positional', required: true, description: 'Search ID' } } as const
function searchPath(id: string, suffix = ''): string {
  if (!/^\d+$/.test(id)) throw new UsageError(`search ID "${id}" is not a string of digits`)
  return `/api/searchctrl/${id}${suffix}`
}

const list = command({
  name: 'list',
  description: 'List the searches you may see (--all: every search, for an admin)',
  examples: ['quarry search list', 'quarry search list --all --json'],
  args: { all: { type: 'boolean', description: 'Every search on the server (admins)' } },
  async run({ args }) {
    const out = output()
    const rows = await client().get<SearchEntry[]>(args.all ? '/api/searchctrl/all' : '/api/searchctrl')
    out.result(rows, () =>
      out.table(rows, [
        { header: 'ID', value: (s) => s.ID },
        { header: 'UID', value: (s) => s.UID },
        { header: 'GID', value: (s) => s.GID || '-' },
        { header: 'STATE', value: (s) => s.State },
        { header: 'CLIENTS', value: (s) => s.AttachedClients },
        { header: 'STORED', value: (s) => (s.StoredData === undefined ? '-' : bytes(s.StoredData)) },
      ]),
    )
  },
})

const show = command({
  name: 'show',
  description: 'Show one search',
  examples: ['quarry search show 123456789'],
  args: idArg,
  async run({ args }) {
    const out = output()
    const answer = await client().get<SearchDetail[] | SearchDetail>(searchPath(args.id))
    const s = Array.isArray(answer) ? answer[0] : answer
    out.result(answer, () =>
      s === undefined ? '(none)'
      : out.details([
          ['ID', s.ID],
          ['UID', s.UID],
          ['Query', s.UserQuery],
          ['Effective query', s.EffectiveQuery],
          ['Range', `${s.StartRange} .. ${s.EndRange}`],
          ['Started', s.Started],
          ['Finished', s.Finished],
          ['Stored', bytes(s.StoreSize ?? 0)],
          ['Index', bytes(s.IndexSize ?? 0)],
        ]),
    )
  },
})

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
  description: 'Download a saved search as an archive file, for `quarry search import` here or on another server',
  examples: ['quarry search export 123456789 search-123.tar.gz'],
  args: { ...idArg, file: { type: 'positional', required: true, description: 'Where to write the archive' } },
  async run({ args }) {
    const out = output()
    const size = await client().download(searchPath(args.id, '/download/archive'), args.file, out.progress('export'))
    out.result({ ID: args.id, File: args.file, Bytes: size }, () => `Exported search ${args.id} to ${args.file} (${bytes(size)})`)
  },
})

const save = command({
  name: 'save',
  description: 'Keep a search: its results move to persistent storage once it is dormant',
  examples: ['quarry search save 123456789', 'quarry search save 123456789 --metadata \'{"case": 42}\''],
  args: { ...idArg, metadata: { type: 'string', valueHint: 'JSON', description: 'JSON object attached to the saved search' } },
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
    const answer = await client().patch(searchPath(args.id, '/save'), metadata)
    output().result(answer, () => `Saving search ${args.id}`)
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

export default group(
  'search',
  'Searches: list, show, import, export, save, background, stop, delete',
  {
    list,
    show,
    import: importArchive,
    export: exportArchive,
    save,
    background: simple('background', 'Let a search go on after its last client leaves', 'PATCH', '/background', 'Backgrounded search'),
    stop: simple('stop', 'Stop a running search; what it found so far stays and can be saved', 'PUT', '/stop', 'Stopped search'),
    delete: simple('delete', 'Delete a search and its stored results', 'DELETE', '', 'Deleted search'),
  },
  ['quarry search list', 'quarry search export 123456789 s.tar.gz && quarry --server https://other search import s.tar.gz'],
)
