// quarry token ...: API tokens (docs/api.md "API tokens"). Permissions are chosen singly (--perm) or by group (--group); the
// secret is printed once, by create and refresh.
import type { Client } from '../client'
import { allValues, command, group, yesArg } from '../command'
import { client, output } from '../context'
import { CliError, UsageError } from '../errors'
import type { Output } from '../output'
import { confirm } from '../prompt'
import { DURATION_HELP, parseDuration } from '../units'

interface TokenRecord {
  id: string
  name: string
  description: string
  uid: number
  createdAt: string
  expiresAt: string
  capabilities: string[]
  token?: string
}

/**
 * --expires as the wire wants it: `never` → null (no expiry); a duration from now (`90m`, `1h30m`, `30d`; a bare
 * number is seconds); or a time (`2027-01-01T00:00:00Z`, `2027-01-01`), sent in UTC.
 */
export function expiryOf(raw: string, now = Date.now()): string | null {
  if (raw === 'never') return null
  if (/^(\d+|(\d+(ms|s|m|h|d))+)$/.test(raw.trim())) return new Date(now + parseDuration('--expires', raw)).toISOString()
  const ms = /^\d{4}-\d{2}-\d{2}/.test(raw) ? Date.parse(raw) : NaN
  if (Number.isNaN(ms)) throw new UsageError(`--expires: "${raw}" is neither a duration (30d, 12h) nor a time (2027-01-01T00:00:00Z) nor "never"`)
  return new Date(ms).toISOString()
}

function tokenDetails(out: Output, t: TokenRecord): string {
  return out.details([
    ['ID', t.id],
    ['Name', t.name],
    ['Description', t.description],
    ['Owner UID', t.uid],
    ['Created', t.createdAt],
    ['Expires', t.expiresAt === '0001-01-01T00:00:00Z' ? 'never' : t.expiresAt],
    ['Permissions', t.capabilities],
  ])
}

function withSecret(out: Output, t: TokenRecord): string {
  return `${tokenDetails(out, t)}\n\nSecret (shown only this once, keep it safe):\n${t.token}`
}

const permissionArgs = {
  perm: { type: 'string', valueHint: 'NAME', description: 'A permission, e.g. DashboardRead (repeatable, or comma-separated)' },
  group: { type: 'string', valueHint: 'GROUP', description: 'A permission group, e.g. Dashboards (repeatable); `quarry token permissions` lists both' },
} as const

/** The body members for the chosen permissions, or nothing when none was named. */
function permissions(rawArgs: string[]) {
  const capabilities = allValues(rawArgs, 'perm')
  const categories = allValues(rawArgs, 'group')
  return {
    ...(capabilities.length ? { capabilities } : {}),
    ...(categories.length ? { categories } : {}),
  }
}

const create = command({
  name: 'create',
  description: 'Create a token; its secret is printed once',
  examples: [
    'quarry token create nightly --perm ListUsers --group Dashboards --expires 30d',
    'quarry token create ci --perm Search,Download --expires 2027-01-01T00:00:00Z --json | jq -r .token',
  ],
  args: {
    name: { type: 'positional', required: true, description: 'Token name' },
    description: { type: 'string', description: 'Free text' },
    ...permissionArgs,
    expires: { type: 'string', valueHint: '30d|TIME|never', description: `Expiry: a duration from now (${DURATION_HELP}), a time, or never (default)` },
  },
  async run({ args, rawArgs }) {
    const perms = permissions(rawArgs)
    if (!perms.capabilities && !perms.categories) throw new UsageError('name at least one permission with --perm or --group')
    const body = {
      name: args.name,
      ...(args.description !== undefined ? { description: args.description } : {}),
      ...perms,
      expiresAt: args.expires === undefined ? null : expiryOf(args.expires),
    }
    const out = output()
    const t = await client().post<TokenRecord>('/api/tokens', body)
    out.result(t, () => withSecret(out, t))
  },
})

const list = command({
  name: 'list',
  description: 'List your tokens (--all: every token, for an admin)',
  examples: ['quarry token list', 'quarry token list --all --json'],
  args: { all: { type: 'boolean', description: 'Every user\'s tokens (admins)' } },
  async run({ args }) {
    const out = output()
    const rows = await client().get<TokenRecord[]>('/api/tokens', args.all ? { admin: 'true' } : undefined)
    out.result(rows, () =>
      out.table(rows, [
        { header: 'ID', value: (t) => t.id },
        { header: 'NAME', value: (t) => t.name },
        { header: 'UID', value: (t) => t.uid },
        { header: 'EXPIRES', value: (t) => (t.expiresAt === '0001-01-01T00:00:00Z' ? 'never' : t.expiresAt) },
        { header: 'PERMISSIONS', value: (t) => t.capabilities },
      ]),
    )
  },
})

const idArg = { token: { type: 'positional', required: true, valueHint: 'ID|NAME', description: 'The token, by ID or by name (among your own tokens)' } } as const

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * The ID of the token named on the command line: a UUID is taken as the ID; anything else is the name of one of the
 * caller's own tokens. A name no token has, or that several have (names are not unique), is refused with the IDs
 * to choose from, before anything is changed.
 */
export async function resolveToken(c: Client, ref: string): Promise<{ id: string; label: string }> {
  if (UUID.test(ref)) return { id: ref.toLowerCase(), label: ref }
  const named = (await c.get<TokenRecord[]>('/api/tokens')).filter((t) => t.name === ref)
  if (named.length === 0) throw new CliError(`no token named "${ref}" among yours (give its ID to name another user's token)`)
  if (named.length > 1) {
    throw new CliError(`${named.length} tokens are named "${ref}": give the ID of the one you mean: ${named.map((t) => t.id).join(', ')}`)
  }
  return { id: named[0]!.id, label: `${ref} (${named[0]!.id})` }
}

const tokenPath = (id: string) => `/api/tokens/${encodeURIComponent(id)}`

const show = command({
  name: 'show',
  description: 'Show one token (never its secret)',
  examples: ['quarry token show nightly', 'quarry token show 5b0f...'],
  args: idArg,
  async run({ args }) {
    const out = output()
    const c = client()
    const t = await c.get<TokenRecord>(tokenPath((await resolveToken(c, args.token)).id))
    out.result(t, () => tokenDetails(out, t))
  },
})

const update = command({
  name: 'update',
  description: 'Change the name, description, permissions or expiry of a token (not its secret)',
  examples: ['quarry token update nightly --description "weekly now"', 'quarry token update 5b0f... --group Search --expires 1h30m'],
  args: {
    ...idArg,
    name: { type: 'string', description: 'New name' },
    description: { type: 'string', description: 'New description' },
    ...permissionArgs,
    expires: { type: 'string', valueHint: '30d|TIME|never', description: `New expiry: a duration from now (${DURATION_HELP}), a time, or never` },
  },
  async run({ args, rawArgs }) {
    const body = {
      ...(args.name !== undefined ? { name: args.name } : {}),
      ...(args.description !== undefined ? { description: args.description } : {}),
      ...permissions(rawArgs),
      ...(args.expires !== undefined ? { expiresAt: expiryOf(args.expires) } : {}),
    }
    if (Object.keys(body).length === 0) throw new UsageError('nothing to change: give --name, --description, --perm, --group or --expires')
    const out = output()
    const c = client()
    const t = await c.put<TokenRecord>(tokenPath((await resolveToken(c, args.token)).id), body)
    out.result(t, () => tokenDetails(out, t))
  },
})

const refresh = command({
  name: 'refresh',
  description: 'Give a token a new expiry and a new secret (printed once); the old secret stops working',
  examples: ['quarry token refresh nightly --expires 90d'],
  args: {
    ...idArg,
    expires: { type: 'string', required: true, valueHint: '30d|TIME|never', description: 'The new expiry' },
  },
  async run({ args }) {
    const out = output()
    const expiresAt = expiryOf(args.expires)
    const c = client()
    const t = await c.patch<TokenRecord>(tokenPath((await resolveToken(c, args.token)).id), { expiresAt })
    out.result(t, () => withSecret(out, t))
  },
})

const remove = command({
  name: 'delete',
  description: 'Delete a token; its secret stops working at once',
  examples: ['quarry token delete nightly', 'quarry token delete 5b0f... --yes'],
  args: { ...idArg, ...yesArg },
  async run({ args }) {
    const out = output()
    const c = client()
    const { id, label } = await resolveToken(c, args.token)
    confirm(`delete token ${label}`, `Delete token ${label}? Its secret stops working at once.`, Boolean(args.yes))
    const answer = await c.delete(tokenPath(id))
    out.result(answer, () => `Deleted token ${label}`)
  },
})

const permissionsList = command({
  name: 'permissions',
  description: 'List the permissions a token may carry, with their groups',
  examples: ['quarry token permissions'],
  async run() {
    const out = output()
    const rows = await client().get<{ Name: string; Desc: string; Category: string }[]>('/api/info/capabilities')
    out.result(rows, () =>
      out.table(rows, [
        { header: 'GROUP', value: (r) => r.Category },
        { header: 'PERMISSION', value: (r) => r.Name },
        { header: 'DESCRIPTION', value: (r) => r.Desc },
      ]),
    )
  },
})

export default group('token', 'API tokens for scripts: create, list, show, update, refresh, delete', {
  create, list, show, update, refresh, delete: remove, permissions: permissionsList,
}, ['quarry token create report --group Dashboards --expires 30d', 'quarry token list'])
