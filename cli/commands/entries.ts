// quarry entries ...: retention rules and deletion of ingested entries, over the admin API (docs/api.md "Retention and
// deletion"; an admin's login session, never a token).
import { command, group, yesArg } from '../command'
import { client, output } from '../context'
import { UsageError } from '../errors'
import { confirm } from '../prompt'
import { formatDuration, parseDuration, parseSize } from '../units'
import { timeArg } from './search'

interface Rule {
  Tag: string
  MaxAgeMs: number | null
  MaxBytes: number | null
}
interface RetentionState {
  Variables: Rule[]
  Stored: Rule[]
  Effective: Rule[]
  IntervalMs: number
}
interface Deletion {
  ID: number
  Tag: string
  Start: string
  End: string
  Created: string
  Finished: string | null
  Deleted: number
}

const age = (ms: number | null) => (ms === null ? '' : ms === 0 ? 'none' : formatDuration(ms))
const size = (b: number | null) => (b === null ? '' : b === 0 ? 'none' : `${b}`)
const ruleColumns = [
  { header: 'TAG', value: (r: Rule) => (r.Tag === '' ? '(every other tag)' : r.Tag) },
  { header: 'MAX AGE', value: (r: Rule) => age(r.MaxAgeMs) },
  { header: 'MAX BYTES', value: (r: Rule) => size(r.MaxBytes) },
]
const deletionColumns = [
  { header: 'ID', value: (d: Deletion) => d.ID },
  { header: 'TAG', value: (d: Deletion) => d.Tag },
  { header: 'START', value: (d: Deletion) => d.Start },
  { header: 'END', value: (d: Deletion) => d.End },
  { header: 'FINISHED', value: (d: Deletion) => d.Finished ?? 'not yet' },
  { header: 'DELETED', value: (d: Deletion) => d.Deleted },
]

const remove = command({
  name: 'delete',
  description: "Delete a tag's entries with a time in [--start, --end) now, and say how many went (admins); asks first on a terminal",
  examples: ['quarry entries delete --tag web --start 2026-01-01T00:00:00Z --end 2026-02-01T00:00:00Z', 'quarry entries delete --tag debug --start 2026-01-01 --end 1h --yes'],
  args: {
    tag: { type: 'string', required: true, description: 'The tag whose entries go' },
    start: { type: 'string', required: true, valueHint: 'TIME|DURATION', description: 'Start of the range (included): a time, or a duration before now' },
    end: { type: 'string', required: true, valueHint: 'TIME|DURATION', description: 'End of the range (excluded): a time, a duration before now, or now' },
    ...yesArg,
  },
  async run({ args }) {
    const now = Date.now()
    const start = timeArg('--start', args.start, now)
    const end = timeArg('--end', args.end, now)
    if (Date.parse(start) >= Date.parse(end)) throw new UsageError('--start must be before --end')
    confirm(`delete the entries of ${args.tag}`, `Delete every entry of tag ${args.tag} from ${start} to ${end}? This cannot be undone.`, Boolean(args.yes))
    const d = await client().post<Deletion>('/api/admin/entries/delete', { Tag: args.tag, Start: start, End: end })
    output().result(d, () => `Deleted ${d.Deleted} entries of ${d.Tag} from ${d.Start} to ${d.End}`)
  },
})

const deletions = command({
  name: 'deletions',
  description: 'List the deletions: those not finished, then the latest finished (admins)',
  examples: ['quarry entries deletions'],
  async run() {
    const out = output()
    const list = await client().get<Deletion[]>('/api/admin/entries/deletions')
    out.result(list, () => out.table(list, deletionColumns))
  },
})

const retention = command({
  name: 'retention',
  description: 'Show the retention rules that apply, and where each comes from (admins)',
  examples: ['quarry entries retention'],
  async run() {
    const out = output()
    const s = await client().get<RetentionState>('/api/admin/retention')
    out.result(s, () =>
      [
        'Applied:',
        out.table(s.Effective, ruleColumns),
        'From the variables (QUARRY_RETENTION, QUARRY_RETENTION_TAGS, QUARRY_RETENTION_SIZES):',
        out.table(s.Variables, ruleColumns),
        'Stored through the API (a field set here wins):',
        out.table(s.Stored, ruleColumns),
        `The sweep runs every ${formatDuration(s.IntervalMs)}.`,
      ].join('\n'),
    )
  },
})

const retentionSet = command({
  name: 'retention-set',
  description: "Store a tag's retention rule, or the store-wide age with --all (admins); it wins over the variables",
  examples: ['quarry entries retention-set web --max-age 30d', 'quarry entries retention-set debug --max-size 2GiB', 'quarry entries retention-set --all --max-age 90d', 'quarry entries retention-set web --clear'],
  args: {
    tag: { type: 'positional', required: false, description: 'The tag (or --all for the store-wide age)' },
    all: { type: 'boolean', description: 'The store-wide rule (an age only)' },
    'max-age': { type: 'string', valueHint: 'DURATION|none', description: 'Keep entries this long (none: for ever)' },
    'max-size': { type: 'string', valueHint: 'SIZE|none', description: "Keep at most this many bytes of the tag's entries, oldest out first (none: no limit)" },
    clear: { type: 'boolean', description: 'Drop the stored rule (the variables apply again)' },
  },
  async run({ args }) {
    const tag = args.all ? '' : args.tag
    if (tag === undefined || (args.all && args.tag !== undefined)) throw new UsageError('name one tag, or --all for the store-wide rule')
    if (!args.clear && args['max-age'] === undefined && args['max-size'] === undefined) throw new UsageError('nothing to set: give --max-age, --max-size or --clear')
    if (tag === '' && args['max-size'] !== undefined) throw new UsageError('--max-size is per tag: the store-wide rule is an age only')
    const none = (v: string) => ['none', 'forever', '0'].includes(v.trim().toLowerCase())
    const c = client()
    const s = await c.get<RetentionState>('/api/admin/retention')
    const was = s.Stored.find((r) => r.Tag === tag) ?? { Tag: tag, MaxAgeMs: null, MaxBytes: null }
    const rule: Rule = args.clear
      ? { Tag: tag, MaxAgeMs: null, MaxBytes: null }
      : {
          Tag: tag,
          MaxAgeMs: args['max-age'] === undefined ? was.MaxAgeMs : none(args['max-age']) ? 0 : parseDuration('--max-age', args['max-age']),
          MaxBytes: args['max-size'] === undefined ? was.MaxBytes : none(args['max-size']) ? 0 : parseSize('--max-size', args['max-size']),
        }
    const rules = s.Stored.filter((r) => r.Tag !== tag)
    if (rule.MaxAgeMs !== null || rule.MaxBytes !== null) rules.push(rule)
    const out = output()
    const after = await c.put<RetentionState>('/api/admin/retention', { Rules: rules })
    out.result(after, () => out.table(after.Effective, ruleColumns))
  },
})

export default group('entries', 'Ingested entries: delete a range, retention rules (admins)', { delete: remove, deletions, retention, 'retention-set': retentionSet }, [
  'quarry entries delete --tag web --start 2026-01-01 --end 2026-02-01',
  'quarry entries retention',
])
