// Groups (docs/api.md "Users and groups"): admins create, change and delete; every user may list them; members and
// admins read one group and its members.
import { Elysia, t } from 'elysia'
import { Errors, conflictOnDuplicate } from '../../server/http/errors'
import { checkName } from '../../server/rules/names'
import { bareNumber } from '../../server/http/wire'
import { authGuard } from '../auth/guard'
import { Empty } from '../auth/schema'
import type { AuthService, Caller } from '../auth/service'
import { UserDetails, toUserDetails } from '../users/schema'
import type { GroupRow, GroupsRepo } from './repo'
import { CreateGroupBody, GidParams, GroupDetails, UpdateGroupBody, toGroupDetails } from './schema'
import { area, refusals } from '../../server/http/openapi'
import type { UsersRepo } from '../users/repo'

const GROUP_TAKEN = 'group name is taken'

export function groupsPlugin({ repos, auth }: { repos: { users: UsersRepo; groups: GroupsRepo }; auth: AuthService }) {
  const { groups, users } = repos

  async function existing(gid: number): Promise<GroupRow> {
    const group = await groups.get(gid)
    if (!group) throw Errors.notFound('group')
    return group
  }

  /** The group when the caller is a member or an admin; 404 when there is none, 403 otherwise. */
  async function visible(caller: Caller, gid: number): Promise<GroupRow> {
    const group = await existing(gid)
    if (!caller.admin && !(await groups.isMember(caller.uid, gid))) throw Errors.forbidden('you are not a member of that group')
    return group
  }

  return new Elysia({ name: 'quarry-groups', detail: area('Groups') })
    .use(authGuard(auth))
    .post(
      '/api/groups',
      async ({ body, set }) => {
        const name = checkName(body.Name, 'Name')
        const desc = checkName(body.Desc ?? '', 'Desc', { multiline: true })
        return bareNumber(set, await conflictOnDuplicate(GROUP_TAKEN, () => groups.create(name, desc)))
      },
      {
        access: 'admin',
        body: CreateGroupBody,
        response: { 200: t.Integer(), ...refusals(409) },
        detail: { summary: 'Create a group', description: 'Answers the new GID as a bare number; a taken name answers 409.' },
      },
    )
    .get('/api/groups', async () => (await groups.list()).map(toGroupDetails), {
      access: 'ListGroups',
      response: t.Array(GroupDetails),
      detail: { summary: 'List every group' },
    })
    .get('/api/groups/:gid', async ({ caller, params }) => toGroupDetails(await visible(caller, params.gid)), {
      access: 'ListGroups',
      params: GidParams,
      response: GroupDetails,
      detail: { summary: 'Get one group', description: 'Its members and admins.' },
    })
    .put(
      '/api/groups/:gid',
      async ({ params, body }) => {
        const group = await existing(params.gid)
        // Absent or empty-string fields keep their value (docs/api.md "Users and groups").
        const name = body.Name ? checkName(body.Name, 'Name') : undefined
        const description = body.Desc ? checkName(body.Desc, 'Desc', { multiline: true }) : undefined
        await conflictOnDuplicate(GROUP_TAKEN, () => groups.update(group.gid, { name, description }))
        return {}
      },
      { access: 'admin', params: GidParams, body: UpdateGroupBody, response: { 200: Empty, ...refusals(409) }, detail: { summary: 'Rename or describe a group', description: 'Absent or empty fields keep their value; a taken name answers 409.' } },
    )
    .delete(
      '/api/groups/:gid',
      async ({ params }) => {
        await groups.delete((await existing(params.gid)).gid)
        return {}
      },
      { access: 'admin', params: GidParams, response: Empty, detail: { summary: 'Delete a group', description: 'Also removes its memberships and its place in every sharing list.' } },
    )
    .get(
      '/api/groups/:gid/members',
      async ({ caller, params }) => {
        const group = await visible(caller, params.gid)
        const memberships = await groups.allMemberships()
        const members = await Promise.all((await groups.memberUids(group.gid)).map((uid) => users.get(uid)))
        return members.filter((u) => u !== undefined).map((u) => toUserDetails(u, memberships.get(u.uid) ?? []))
      },
      { access: 'ListGroupMembers', params: GidParams, response: t.Array(UserDetails), detail: { summary: 'List the members of a group' } },
    )
}
