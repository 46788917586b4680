// The search library (docs/api.md "Dashboards and the search library", "Conventions", "Sharing items with
// groups"). Listing: the caller's own entries, every entry for an admin with ?admin=true (ignored from others). Read:
// owner, members of a group in GIDs, everyone for a global entry, and an admin with ?admin=true; others get 403 (as the
// clients expect), a missing entry 404. Change and delete: the owner, or an admin with ?admin=true; 403 otherwise
// (rules 2, 4). Paths take the ThingUUID or the GUID; among entries sharing a GUID the one used is the caller's own,
// else one shared with a group of the caller, else a global one (else, with the admin flag, anyone's). `Metadata` is
// kept as the exact JSON text the client sent.
import { Elysia, t } from 'elysia'
import { Errors } from '../../server/http/errors'
import { type Quotas, quotaChecked } from '../../server/store/quota'
import { itemLabels, itemName } from '../../server/rules/names'
import { rawBodyMember, rawJson } from '../../server/http/raw-json'
import { type Reacher, UUID, canReach, checkSharing, pickReached, requestedOwner, wantedGuid } from '../../server/rules/sharing'
import { sharingList } from '../../server/http/wire'
import { authGuard } from '../auth/guard'
import { Empty } from '../auth/schema'
import type { AuthService, Caller } from '../auth/service'
import type { LibraryFor, LibraryRow, LibraryRepo } from './repo'
import { AdminQuery, LibraryBody, LibraryEntry, LibraryIdParams, entryJson } from './schema'
import { area, rawAnswer } from '../../server/http/openapi'
import type { UsersRepo } from '../users/repo'
import type { GroupsRepo } from '../groups/repo'

export function libraryPlugin({ repos, auth, clock, quotas }: { repos: { users: UsersRepo; groups: GroupsRepo; library: LibraryRepo }; auth: AuthService; clock: () => number; quotas: Quotas }) {
  const { library } = repos

  /** Admin reach: an admin (by session) asking with ?admin=true; the flag from anyone else is ignored (rule 2). */
  const adminView = (caller: Caller, query: { admin?: string }) => caller.admin && query.admin === 'true'
  const reacher = (caller: Caller, all: boolean): Reacher => ({ uid: caller.uid, all })
  /** Whether the caller may change and delete the entry. */
  const may = (caller: Caller, e: LibraryRow, all: boolean) => all || e.uid === caller.uid
  const userExists = async (uid: number) => (await repos.users.get(uid)) !== undefined

  /**
   * The entry a path id names for the caller: by ThingUUID first, else by GUID. 400 for an id that is no UUID,
   * 404 when no entry carries it, 403 when the caller reaches none of those that do.
   */
  async function reached(caller: Caller, rawId: string, all: boolean): Promise<LibraryFor> {
    if (!UUID.test(rawId)) throw Errors.badRequest('invalid library id: expected a ThingUUID or GUID')
    const id = rawId.toLowerCase()
    const who = reacher(caller, all)
    const thing = await library.byThing(id, caller.uid)
    if (thing && canReach(thing, who)) return thing
    const sameGuid = await library.byGuid(id, caller.uid)
    const best = pickReached(sameGuid, who)
    if (best) return best
    if (thing || sameGuid.length > 0) throw Errors.forbidden('you have no access to this library entry')
    throw Errors.notFound('library entry')
  }

  /** The entry when the caller may change it: as `reached`, then 403 unless owner or admin with the flag. */
  async function changeable(caller: Caller, rawId: string, all: boolean): Promise<LibraryFor> {
    const e = await reached(caller, rawId, all)
    if (!may(caller, e, all)) throw Errors.forbidden('only the owner, or an admin with ?admin=true, may change this library entry')
    return e
  }

  /** The text of Metadata as sent: undefined when absent, null for JSON null (none). */
  const metadataText = (request: Request, metadata: unknown) =>
    metadata === undefined ? undefined : metadata === null ? null : rawBodyMember(request, 'Metadata')

  return new Elysia({ name: 'quarry-library', detail: area('Search library') })
    .use(authGuard(auth))
    .get(
      '/api/library',
      async ({ caller, query, set }) => {
        const all = adminView(caller, query)
        const rows = all ? await library.listAll() : await library.listOwned(caller.uid)
        return rawJson(set, `[${rows.map((e) => entryJson(e, may(caller, e, all))).join(',')}]`)
      },
      {
        access: 'LibraryRead',
        query: AdminQuery,
        detail: { summary: 'List your saved queries', description: 'With `?admin=true` an admin gets every entry.', ...rawAnswer(t.Array(LibraryEntry)) },
      },
    )
    .get(
      '/api/library/:id',
      async ({ caller, params, query, set }) => {
        const all = adminView(caller, query)
        const e = await reached(caller, params.id, all)
        return rawJson(set, entryJson(e, may(caller, e, all)))
      },
      { access: 'LibraryRead', params: LibraryIdParams, query: AdminQuery, detail: { summary: 'Get one saved query', description: 'By ThingUUID or GUID; 403 without access.', ...rawAnswer(LibraryEntry) } },
    )
    .post(
      '/api/library',
      async ({ caller, body, request, set }) => {
        const uid = await requestedOwner(caller, body.UID, userExists)
        if (body.Global && !caller.admin) throw Errors.forbidden('only admins may set Global')
        await checkSharing(caller, body.GIDs, repos.groups)
        const guid = wantedGuid(body.GUID)
        if (guid === 'invalid') throw Errors.badRequest('invalid body property GUID: expected a UUID')
        const row: LibraryRow = {
          thingUuid: crypto.randomUUID(),
          guid: guid ?? crypto.randomUUID(),
          uid,
          name: itemName(body.Name) ?? '',
          description: body.Description ?? '',
          query: body.Query ?? '',
          global: body.Global ?? false,
          labels: itemLabels(body.Labels) ?? [],
          metadata: metadataText(request, body.Metadata) ?? null,
          updated: clock(),
          gids: sharingList(body.GIDs),
        }
        const limit = await quotas.limitFor(uid)
        await quotaChecked(() => library.create(row, limit))
        return rawJson(set, entryJson(row, may(caller, row, false)))
      },
      {
        access: 'LibraryWrite',
        body: LibraryBody,
        detail: { summary: 'Save a query in the library', description: 'Answers the entry with its ThingUUID and GUID (generated when absent). Only admins set UID (another user) or Global.', ...rawAnswer(LibraryEntry) },
      },
    )
    .put(
      '/api/library/:id',
      async ({ caller, params, query, body, request, set }) => {
        const all = adminView(caller, query)
        const e = await changeable(caller, params.id, all)
        if (typeof body.Global === 'boolean' && body.Global !== e.global && !caller.admin) throw Errors.forbidden('only admins may set Global')
        await checkSharing(caller, body.GIDs, repos.groups, e.gids)
        let uid: number | undefined
        if (all && body.UID && body.UID !== e.uid) {
          if (!(await userExists(body.UID))) throw Errors.badRequest(`no user ${body.UID}`)
          uid = body.UID
        }
        // The complete entry comes back; ThingUUID and GUID never change, UID only by an admin with the flag;
        // absent fields keep their value.
        const limit = await quotas.limitFor(uid ?? e.uid)
        const updated = await quotaChecked(() => library.update(e.thingUuid, {
          uid,
          name: body.Name === undefined ? undefined : (itemName(body.Name, 'Name', e.name) ?? ''),
          description: body.Description === undefined ? undefined : (body.Description ?? ''),
          query: body.Query === undefined ? undefined : (body.Query ?? ''),
          global: caller.admin && typeof body.Global === 'boolean' ? body.Global : undefined,
          labels: body.Labels === undefined ? undefined : (itemLabels(body.Labels, e.labels) ?? []),
          metadata: metadataText(request, body.Metadata),
          gids: body.GIDs === undefined ? undefined : sharingList(body.GIDs),
          updated: clock(),
        }, limit))
        if (!updated) throw Errors.notFound('library entry')
        return rawJson(set, entryJson(updated, may(caller, updated, all)))
      },
      {
        access: 'LibraryWrite',
        params: LibraryIdParams,
        query: AdminQuery,
        body: LibraryBody,
        detail: { summary: 'Change a saved query', description: 'Send the complete entry; its owner, or an admin with `?admin=true`. Answers the entry.', ...rawAnswer(LibraryEntry) },
      },
    )
    .delete(
      '/api/library/:id',
      async ({ caller, params, query }) => {
        const e = await changeable(caller, params.id, adminView(caller, query))
        if (!(await library.delete(e.thingUuid))) throw Errors.notFound('library entry')
        return {}
      },
      {
        access: 'LibraryWrite',
        params: LibraryIdParams,
        query: AdminQuery,
        response: Empty,
        detail: { summary: 'Delete a saved query', description: 'Its owner, or an admin with `?admin=true` (by ThingUUID).' },
      },
    )
}
