// quarry group ...: groups (docs/api.md "Users and groups"). Groups are named by GID or by name.
import { command, group, yesArg } from '../command'
import { client, output } from '../context'
import { UsageError } from '../errors'
import { confirm } from '../prompt'
import { type Group, type User, groupColumns, resolveGid, userColumns } from '../records'

const groupArg = { group: { type: 'positional', required: true, valueHint: 'GID|NAME', description: 'The group, by GID or name' } } as const

const list = command({
  name: 'list',
  description: 'List every group',
  examples: ['quarry group list'],
  async run() {
    const out = output()
    const groups = await client().get<Group[]>('/api/groups')
    out.result(groups, () => out.table(groups, groupColumns))
  },
})

const show = command({
  name: 'show',
  description: 'Show one group (members and admins)',
  examples: ['quarry group show analysts'],
  args: groupArg,
  async run({ args }) {
    const c = client()
    const out = output()
    const g = await c.get<Group>(`/api/groups/${await resolveGid(c, args.group)}`)
    out.result(g, () => out.details([['GID', g.GID], ['Name', g.Name], ['Description', g.Desc]]))
  },
})

const create = command({
  name: 'create',
  description: 'Create a group (admins)',
  examples: ['quarry group create analysts --desc "Search analysts"'],
  args: { name: { type: 'positional', required: true, description: 'Group name' }, desc: { type: 'string', description: 'Description' } },
  async run({ args }) {
    const gid = await client().post<number>('/api/groups', { Name: args.name, ...(args.desc !== undefined ? { Desc: args.desc } : {}) })
    output().result(gid, () => `Created group ${args.name} (GID ${gid})`)
  },
})

const update = command({
  name: 'update',
  description: 'Rename a group or change its description (admins)',
  examples: ['quarry group update analysts --name hunters', 'quarry group update 4 --desc "Threat hunters"'],
  args: { ...groupArg, name: { type: 'string', description: 'New name' }, desc: { type: 'string', description: 'New description' } },
  async run({ args }) {
    if (args.name === undefined && args.desc === undefined) throw new UsageError('nothing to change: give --name or --desc')
    const c = client()
    const answer = await c.put(`/api/groups/${await resolveGid(c, args.group)}`, {
      ...(args.name !== undefined ? { Name: args.name } : {}),
      ...(args.desc !== undefined ? { Desc: args.desc } : {}),
    })
    output().result(answer, () => `Updated group ${args.group}`)
  },
})

const remove = command({
  name: 'delete',
  description: 'Delete a group: its memberships end and it leaves every sharing list (admins); asks first on a terminal',
  examples: ['quarry group delete analysts', 'quarry group delete 4 --yes'],
  args: { ...groupArg, ...yesArg },
  async run({ args }) {
    const c = client()
    const gid = await resolveGid(c, args.group)
    const label = /^\d+$/.test(args.group) ? `group ${gid}` : `group ${args.group} (GID ${gid})`
    confirm(`delete ${label}`, `Delete ${label}? Its memberships end and it leaves every sharing list.`, Boolean(args.yes))
    const answer = await c.delete(`/api/groups/${gid}`)
    output().result(answer, () => `Deleted group ${args.group}`)
  },
})

const members = command({
  name: 'members',
  description: 'List the members of a group',
  examples: ['quarry group members analysts'],
  args: groupArg,
  async run({ args }) {
    const c = client()
    const out = output()
    const users = await c.get<User[]>(`/api/groups/${await resolveGid(c, args.group)}/members`)
    out.result(users, () => out.table(users, userColumns))
  },
})

export default group('group', 'Groups: list, show, create, update, delete, members', { list, show, create, update, delete: remove, members }, [
  'quarry group create analysts',
  'quarry group members analysts',
])
