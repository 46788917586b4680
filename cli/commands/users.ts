// quarry user ...: accounts (docs/api.md "Users and groups"). Users are named by UID or by user name.
import { command, group, rest, yesArg } from '../command'
import { client, output } from '../context'
import { UsageError } from '../errors'
import { ask, askHidden, confirm, newPassword, onTerminal, stdinLine } from '../prompt'
import { type Group, type User, groupColumns, resolveGid, resolveUid, userColumns, userDetails } from '../records'

const userArg = { user: { type: 'positional', required: true, valueHint: 'UID|NAME', description: 'The user, by UID or user name' } } as const

const list = command({
  name: 'list',
  description: 'List every account',
  examples: ['quarry user list', 'quarry user list --json | jq \'.[] | select(.Locked)\''],
  async run() {
    const out = output()
    const users = await client().get<User[]>('/api/users')
    out.result(users, () => out.table(users, userColumns))
  },
})

const show = command({
  name: 'show',
  description: 'Show one account (admins: any; others: their own)',
  examples: ['quarry user show alice', 'quarry user show 3 --json'],
  args: userArg,
  async run({ args }) {
    const c = client()
    const out = output()
    const u = await c.get<User>(`/api/users/${await resolveUid(c, args.user)}`)
    out.result(u, () => userDetails(out, u))
  },
})

const create = command({
  name: 'create',
  description: 'Create an account (admins); the password is asked for twice, or read from standard input; a missing --name or --email is asked for on a terminal',
  examples: [
    'quarry user create alice --name "Alice Liddell" --email alice@example.com',
    'quarry user create alice                  # on a terminal: asks for the name, the e-mail and the password',
    'printf "%s\\n" "$PASS" | quarry user create bot --name Bot --email bot@example.com --password-stdin',
  ],
  args: {
    username: { type: 'positional', required: true, description: 'User name (no white space)' },
    name: { type: 'string', description: 'Real name (required: asked for on a terminal when not given)' },
    email: { type: 'string', description: 'E-mail address (required: asked for on a terminal when not given)' },
    admin: { type: 'boolean', description: 'Make the account an admin' },
    'password-stdin': { type: 'boolean', description: 'Read the password from the first line of standard input' },
  },
  async run({ args }) {
    // The server requires every field (spec: "Adding a user with a missing field: failure"): a missing one is
    // asked for where a person can answer, otherwise named, before anything is sent.
    const missing = (['name', 'email'] as const).filter((k) => args[k] === undefined || args[k].trim() === '')
    if (missing.length > 0 && (!onTerminal() || args['password-stdin'])) {
      const what = { name: '--name NAME (the real name)', email: '--email ADDRESS (the e-mail address)' }
      throw new UsageError(`missing ${missing.map((k) => what[k]).join(' and ')}: every account needs both, and there is no terminal to ask on`)
    }
    const name = args.name?.trim() ? args.name : await ask(`Real name of ${args.username}: `)
    const email = args.email?.trim() ? args.email : await ask(`E-mail of ${args.username}: `)
    const pass = await newPassword(Boolean(args['password-stdin']), `Password for ${args.username}: `)
    const out = output()
    const uid = await client().post<number>('/api/users', { User: args.username, Pass: pass, Name: name, Email: email, Admin: Boolean(args.admin) })
    out.result(uid, () => `Created user ${args.username} (UID ${uid})`)
  },
})

const update = command({
  name: 'update',
  description: 'Change the user name, real name or e-mail of an account',
  examples: ['quarry user update alice --email alice@example.org', 'quarry user update 3 --username alice2'],
  args: {
    ...userArg,
    username: { type: 'string', description: 'New user name' },
    name: { type: 'string', description: 'New real name' },
    email: { type: 'string', description: 'New e-mail address' },
  },
  async run({ args }) {
    const body = {
      ...(args.username !== undefined ? { User: args.username } : {}),
      ...(args.name !== undefined ? { Name: args.name } : {}),
      ...(args.email !== undefined ? { Email: args.email } : {}),
    }
    if (Object.keys(body).length === 0) throw new UsageError('nothing to change: give --username, --name or --email')
    const c = client()
    const uid = await resolveUid(c, args.user)
    const answer = await c.put(`/api/users/${uid}`, body)
    output().result(answer, () => `Updated user ${args.user}`)
  },
})

/** A command that sends one request about one user and confirms it in words. */
function simple(name: string, description: string, method: 'PUT' | 'DELETE', path: (uid: number) => string, done: string) {
  return command({
    name,
    description,
    examples: [`quarry user ${name} alice`],
    args: userArg,
    async run({ args }) {
      const c = client()
      const answer = await c.call(method, path(await resolveUid(c, args.user)))
      output().result(answer, () => `${done} ${args.user}`)
    },
  })
}

const lock = simple('lock', 'Lock an account: its sessions and tokens stop at once, logins are refused (admins)', 'PUT', (uid) => `/api/users/${uid}/lock`, 'Locked')
const unlock = simple('unlock', 'Unlock an account (admins)', 'DELETE', (uid) => `/api/users/${uid}/lock`, 'Unlocked')
const admin = simple('admin', 'Make a user an admin (admins)', 'PUT', (uid) => `/api/users/${uid}/admin`, 'Made admin:')
const unadmin = simple('unadmin', 'Remove admin status (admins)', 'DELETE', (uid) => `/api/users/${uid}/admin`, 'No longer admin:')
const remove = command({
  name: 'delete',
  description: 'Delete an account with its sessions, memberships and preferences (admins); asks first on a terminal',
  examples: ['quarry user delete alice', 'quarry user delete 3 --yes'],
  args: { ...userArg, ...yesArg },
  async run({ args }) {
    const c = client()
    const uid = await resolveUid(c, args.user)
    const label = /^\d+$/.test(args.user) ? `user ${args.user}` : `user ${args.user} (UID ${uid})`
    confirm(`delete ${label}`, `Delete ${label} with its sessions, memberships and preferences?`, Boolean(args.yes))
    const answer = await c.delete(`/api/users/${uid}`)
    output().result(answer, () => `Deleted user ${args.user}`)
  },
})

const passwd = command({
  name: 'passwd',
  description: 'Change a password: your own (the current one is asked for first) or, as an admin, anyone\'s',
  examples: [
    'quarry user passwd                        # your own: asks for the current and the new password',
    'quarry user passwd alice                  # an admin setting alice\'s password',
    'printf "%s\\n%s\\n" "$OLD" "$NEW" | quarry user passwd --password-stdin   # own: current, then new',
  ],
  args: {
    user: { type: 'positional', required: false, valueHint: 'UID|NAME', description: 'The account (default: your own)' },
    'password-stdin': {
      type: 'boolean',
      description: 'Read from standard input: for your own account the current password, then the new one, one per line; for another, the new one',
    },
  },
  async run({ args }) {
    const c = client()
    const me = await c.get<User>('/api/info/whoami')
    const uid = args.user === undefined ? me.UID : await resolveUid(c, args.user)
    const fromStdin = Boolean(args['password-stdin'])
    const own = uid === me.UID
    const orig = own ? (fromStdin ? await stdinLine('the current password') : await askHidden('Current password: ')) : undefined
    const pass = await newPassword(fromStdin)
    const answer = await c.put(`/api/users/${uid}/pwd`, { ...(orig !== undefined ? { OrigPass: orig } : {}), NewPass: pass })
    output().result(answer, () => `Changed the password of ${own ? me.User : args.user}`)
  },
})

const groupsList = command({
  name: 'list',
  description: 'List the groups of a user',
  examples: ['quarry user groups list alice'],
  args: userArg,
  async run({ args }) {
    const c = client()
    const out = output()
    const groups = await c.get<Group[]>(`/api/users/${await resolveUid(c, args.user)}/group`)
    out.result(groups, () => out.table(groups, groupColumns))
  },
})

const groupsAdd = command({
  name: 'add',
  description: 'Add a user to one or more groups (admins)',
  examples: ['quarry user groups add alice analysts', 'quarry user groups add 3 4 5'],
  args: { ...userArg, group: { type: 'positional', required: true, valueHint: 'GID|NAME', description: 'The group, by GID or name; more may follow' } },
  variadic: true,
  async run(ctx) {
    const c = client()
    const uid = await resolveUid(c, ctx.args.user)
    const gids = await Promise.all([ctx.args.group, ...rest(ctx, 2)].map((g) => resolveGid(c, g)))
    const answer = await c.post(`/api/users/${uid}/group`, { GIDs: gids })
    output().result(answer, () => `Added ${ctx.args.user} to ${[ctx.args.group, ...rest(ctx, 2)].join(', ')}`)
  },
})

const groupsRm = command({
  name: 'rm',
  description: 'Remove a user from one or more groups (admins)',
  examples: ['quarry user groups rm alice analysts'],
  args: { ...userArg, group: { type: 'positional', required: true, valueHint: 'GID|NAME', description: 'The group, by GID or name; more may follow' } },
  variadic: true,
  async run(ctx) {
    const c = client()
    const uid = await resolveUid(c, ctx.args.user)
    const names = [ctx.args.group, ...rest(ctx, 2)]
    let answer: unknown = {}
    for (const gid of await Promise.all(names.map((g) => resolveGid(c, g)))) answer = await c.delete(`/api/users/${uid}/group/${gid}`)
    output().result(answer, () => `Removed ${ctx.args.user} from ${names.join(', ')}`)
  },
})

export default group(
  'user',
  'Accounts: list, show, create, update, lock, unlock, passwd, admin, unadmin, delete, groups',
  {
    list, show, create, update, lock, unlock, passwd, admin, unadmin, delete: remove,
    groups: group('groups', 'Group memberships of a user: list, add, rm', { list: groupsList, add: groupsAdd, rm: groupsRm }, [
      'quarry user groups add alice analysts',
    ]),
  },
  ['quarry user list', 'quarry user create alice --name Alice --email alice@example.com', 'quarry user lock alice'],
)
