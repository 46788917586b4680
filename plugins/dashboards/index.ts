// Dashboards (docs/api.md "Dashboards and the search library", "Conventions", "Sharing items with groups"). Read:
// owner, members of a group in GIDs, everyone for a global dashboard, admins. Change and delete: owner and admins. A
// caller who may not read gets 404 like for a missing one; a reader who may not change gets 403. An admin's token acts
// as a normal user. `{id}` in paths is the numeric ID or a GUID; several dashboards may share a GUID, and the one used
// is the caller's own, else one shared with a group of the caller, else a global one (else, for an admin, anyone's).
// `Data` is kept as the exact JSON text the client sent (large integers, key order, white space).
import { Elysia, t } from 'elysia'
import { Errors } from '../../server/http/errors'
import { type Quotas, quotaChecked } from '../../server/store/quota'
import { itemLabels, itemName } from '../../server/rules/names'
import { rawBodyMember, rawJson } from '../../server/http/raw-json'
import { type Reacher, UUID, canReach, checkSharing, pickReached, requestedOwner, wantedGuid } from '../../server/rules/sharing'
import { bareNumber, sharingList } from '../../server/http/wire'
import { type Maybe, then, valueNow } from '../../server/store/maybe'
import { authGuard, selfOrAdmin } from '../auth/guard'
import { Empty } from '../auth/schema'
import type { AuthService, Caller } from '../auth/service'
import { GidParams } from '../groups/schema'
import { UidParams } from '../users/schema'
import type { DashboardFor, DashboardsRepo } from './repo'
import { DashboardBody, DashboardIdParams, DashboardRecord, dashboardJson, dashboardListJson } from './schema'
import { area, rawAnswer } from '../../server/http/openapi'
import type { UsersRepo } from '../users/repo'
import type { GroupsRepo } from '../groups/repo'

/** Data of a dashboard created without one (Data may be left blank on create). */
const BLANK_DATA = '{}'
/** The answers of the list routes: Data is spliced in as sent (rawAnswer). */
const LIST = rawAnswer(t.Array(DashboardRecord))

export function dashboardsPlugin({ repos, auth, clock, quotas }: { repos: { users: UsersRepo; groups: GroupsRepo; dashboards: DashboardsRepo }; auth: AuthService; clock: () => number; quotas: Quotas }) {
  const { dashboards } = repos
  const reacher = (caller: Caller): Reacher => ({ uid: caller.uid, all: caller.admin })

  /**
   * The dashboard a path id names for the caller when it may read it; 400 for an id that is neither kind, 404
   * otherwise. At once on a synchronous store (server/store/maybe.ts).
   */
  function readable(caller: Caller, rawId: string): Maybe<DashboardFor> {
    if (/^\d+$/.test(rawId)) {
      const id = Number(rawId)
      if (!Number.isSafeInteger(id)) throw Errors.notFound('dashboard')
      return then(dashboards.byId(id, caller.uid), (found) => reachedById(caller, found))
    }
    if (UUID.test(rawId)) {
      return then(dashboards.byGuid(rawId.toLowerCase(), caller.uid), (all) => reachedByGuid(caller, all))
    }
    throw Errors.badRequest('invalid dashboard id: expected the numeric ID or a GUID')
  }

  function reachedById(caller: Caller, found: DashboardFor | undefined): DashboardFor {
    if (!found || !canReach(found, reacher(caller))) throw Errors.notFound('dashboard')
    return found
  }

  function reachedByGuid(caller: Caller, all: DashboardFor[]): DashboardFor {
    const found = pickReached(all, reacher(caller))
    if (!found) throw Errors.notFound('dashboard')
    return found
  }

  /** The dashboard when the caller may change it: 404 when it may not read it, 403 when it only reads. */
  async function writable(caller: Caller, rawId: string): Promise<DashboardFor> {
    const d = await readable(caller, rawId)
    if (!caller.admin && d.uid !== caller.uid) throw Errors.forbidden('only the owner or an admin may change this dashboard')
    return d
  }

  /** The text of Data as sent: undefined when absent, blank for null or "" (left blank), 400 unless a JSON object. */
  function dataText(request: Request, data: unknown): string | undefined {
    if (data === undefined) return undefined
    if (data === null || data === '') return BLANK_DATA
    if (typeof data !== 'object' || Array.isArray(data)) throw Errors.badRequest('invalid body property Data: expected a JSON object')
    return rawBodyMember(request, 'Data')
  }

  return new Elysia({ name: 'quarry-dashboards', detail: area('Dashboards') })
    .use(authGuard(auth))
    .get(
      '/api/dashboards',
      auth.answersAtOnce
        ? ({ caller, set }) => {
            // the plain form (server/store/maybe.ts valueNow): `body` is assigned, not returned as a call
            let body
            body = rawJson(set, dashboardListJson(valueNow(dashboards.listVisible(caller.uid))))
            return body
          }
        : async ({ caller, set }) => rawJson(set, dashboardListJson(await dashboards.listVisible(caller.uid))),
      { access: 'DashboardRead', detail: { summary: 'List the dashboards you can see', ...LIST } },
    )
    .get(
      '/api/dashboards/all',
      async ({ caller, set }) => rawJson(set, dashboardListJson(caller.admin ? await dashboards.listAll() : await dashboards.listVisible(caller.uid))),
      { access: 'DashboardRead', detail: { summary: 'List every dashboard (admins)', description: 'Others get the same as GET /api/dashboards.', ...LIST } },
    )
    .post(
      '/api/dashboards',
      async ({ caller, body, request, set }) => {
        const uid = await requestedOwner(caller, body.UID, async (u) => (await repos.users.get(u)) !== undefined)
        if (body.Global && !caller.admin) throw Errors.forbidden('only admins may create global dashboards')
        await checkSharing(caller, body.GIDs, repos.groups)
        const guid = wantedGuid(body.GUID)
        const now = clock()
        const limit = await quotas.limitFor(uid)
        const id = await quotaChecked(() => dashboards.create({
          guid: guid === undefined || guid === 'invalid' ? crypto.randomUUID() : guid,
          uid,
          name: itemName(body.Name) ?? '',
          description: body.Description ?? '',
          global: body.Global ?? false,
          labels: itemLabels(body.Labels) ?? [],
          data: dataText(request, body.Data) ?? BLANK_DATA,
          created: now,
          updated: now,
          gids: sharingList(body.GIDs),
        }, limit))
        return bareNumber(set, id)
      },
      {
        access: 'DashboardWrite',
        body: DashboardBody,
        response: t.Integer(),
        detail: { summary: 'Create a dashboard', description: 'Answers its numeric ID. Only admins set UID (another user) or Global; a GUID that is no UUID is replaced.' },
      },
    )
    .get(
      '/api/dashboards/:id',
      auth.answersAtOnce
        ? ({ caller, params, set }) => {
            // the plain form (server/store/maybe.ts valueNow): `body` is assigned, not returned as a call
            let body
            body = rawJson(set, dashboardJson(valueNow(readable(caller, params.id))))
            return body
          }
        : async ({ caller, params, set }) => rawJson(set, dashboardJson(await readable(caller, params.id))),
      {
        access: 'DashboardRead',
        params: DashboardIdParams,
        detail: { summary: 'Get one dashboard', description: 'By numeric ID or GUID (your own first, then a group\'s, then a global one).', ...rawAnswer(DashboardRecord) },
      },
    )
    .put(
      '/api/dashboards/:id',
      async ({ caller, params, body, request, set }) => {
        const d = await writable(caller, params.id)
        await checkSharing(caller, body.GIDs, repos.groups, d.gids)
        // The full structure comes back; what the caller may not change (ID, GUID, Created, Updated, and for
        // non-admins UID and Global) keeps its value, and so does every absent field.
        let uid: number | undefined
        if (caller.admin && body.UID && body.UID !== d.uid) {
          if (!(await repos.users.get(body.UID))) throw Errors.badRequest(`no user ${body.UID}`)
          uid = body.UID
        }
        const limit = await quotas.limitFor(uid ?? d.uid)
        const updated = await quotaChecked(() => dashboards.update(d.id, {
          uid,
          name: body.Name === undefined ? undefined : (itemName(body.Name, 'Name', d.name) ?? ''),
          description: body.Description === undefined ? undefined : (body.Description ?? ''),
          global: caller.admin && typeof body.Global === 'boolean' ? body.Global : undefined,
          labels: body.Labels === undefined ? undefined : (itemLabels(body.Labels, d.labels) ?? []),
          data: dataText(request, body.Data),
          gids: body.GIDs === undefined ? undefined : sharingList(body.GIDs),
          updated: clock(),
        }, limit))
        if (!updated) throw Errors.notFound('dashboard')
        return rawJson(set, dashboardJson(updated))
      },
      {
        access: 'DashboardWrite',
        params: DashboardIdParams,
        body: DashboardBody,
        detail: {
          summary: 'Change a dashboard',
          description: 'Send the full structure as fetched; answers the dashboard. Only admins change UID and Global.',
          ...rawAnswer(DashboardRecord),
        },
      },
    )
    .delete(
      '/api/dashboards/:id',
      async ({ caller, params }) => {
        const d = await writable(caller, params.id)
        if (!(await dashboards.delete(d.id))) throw Errors.notFound('dashboard')
        return {}
      },
      { access: 'DashboardWrite', params: DashboardIdParams, response: Empty, detail: { summary: 'Delete a dashboard', description: 'By numeric ID or GUID.' } },
    )
    .get(
      '/api/users/:id/dashboards',
      async ({ caller, params, set }) => {
        if (!selfOrAdmin(caller, params.id)) throw Errors.forbidden("only admins may list another user's dashboards")
        if (params.id !== caller.uid && !(await repos.users.get(params.id))) throw Errors.notFound('user')
        return rawJson(set, dashboardListJson(await dashboards.listOwned(params.id)))
      },
      { access: 'DashboardRead', params: UidParams, detail: { summary: 'List a user\'s own dashboards', description: 'Not those reached through groups; the user or an admin.', ...LIST } },
    )
    .get(
      '/api/groups/:gid/dashboards',
      async ({ caller, params, set }) => {
        if (!(await repos.groups.get(params.gid))) throw Errors.notFound('group')
        if (!caller.admin && !(await repos.groups.isMember(caller.uid, params.gid))) throw Errors.forbidden('you are not a member of that group')
        return rawJson(set, dashboardListJson(await dashboards.listShared(params.gid)))
      },
      { access: 'DashboardRead', params: GidParams, detail: { summary: 'List the dashboards shared with a group', description: 'Its members and admins.', ...LIST } },
    )
}
