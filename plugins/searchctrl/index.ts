// Search control (spec "Search control", "States and transitions"; decisions §6), launching searches on the
// embedded engine, result downloads and the search history. The state machine lives in server/search/manager.ts;
// this plugin maps callers and requests onto it.
// Who may do what: view (list, detail, attach, detach, background, save, download): owner, members of the
// search's group, admins; stop and delete: owner and admins (group members 403). A caller who may not view a
// search gets 404, as for a missing one.
import { Elysia, t } from 'elysia'
import { rawBody } from '../../server/body'
import { Errors } from '../../server/errors'
import { QueryError, parseQuery } from '../../server/search/query'
import type { SearchManager, Viewer } from '../../server/search/manager'
import { csv, jsonArray, text } from '../../server/search/results'
import type { Store } from '../../server/store'
import { formatTime, parseTime } from '../../server/time'
import { JSON_TYPE } from '../../server/wire'
import { authGuard } from '../auth/guard'
import type { AuthService, Caller } from '../auth/service'
import {
  AdminQuery, Detail, Details, DownloadParams, HistoryEntry, IdParams, LaunchBody, Launched, ListEntry, toDetail, toDetails, toListEntry,
} from './schema'

export interface SearchCtrlDeps {
  store: Store
  auth: AuthService
  searches: SearchManager
  clock: () => number
}

/** The answer of background, save, stop and delete: the spec's "Body null". */
const jsonNull = () => new Response('null', { headers: { 'content-type': JSON_TYPE } })

/** How a caller is attached to a search: by its login session, or by its API token. */
export function clientOf(caller: Caller): string {
  return caller.session ? sessionClient(caller.session.id) : `token:${caller.token!.id}`
}
export const sessionClient = (sessionId: string) => `session:${sessionId}`

/** Search ids are strings of digits (decisions §1). */
function checkId(id: string): string {
  if (!/^\d{1,20}$/.test(id)) throw Errors.badRequest('invalid search id: expected digits')
  return id
}

const DOWNLOADS: Record<string, { type: string; ext: string; body: (s: ReadableStream<Uint8Array>) => ReadableStream<Uint8Array> }> = {
  json: { type: JSON_TYPE, ext: 'json', body: jsonArray },
  csv: { type: 'text/csv; charset=utf-8', ext: 'csv', body: csv },
  text: { type: 'text/plain; charset=utf-8', ext: 'txt', body: text },
}

export function searchCtrlPlugin({ store, auth, searches, clock }: SearchCtrlDeps) {
  auth.onSessionsEnded((ids) => searches.detachClients(ids.map(sessionClient)))

  async function viewer(caller: Caller): Promise<Viewer> {
    const groups = await store.groups.groupsOf(caller.uid)
    return { uid: caller.uid, admin: caller.admin, groups: new Set(groups.map((g) => g.gid)) }
  }

  return new Elysia({ name: 'quarry-searchctrl' })
    .use(authGuard(auth))
    .post(
      '/api/searchctrl/launch',
      async ({ caller, body }) => {
        let query
        try {
          query = parseQuery(body.SearchString)
        } catch (e) {
          if (e instanceof QueryError) throw Errors.badQuery(e.message, e.position)
          throw e
        }
        const now = clock()
        const start = parseTime(body.SearchStart)
        const end = parseTime(body.SearchEnd)
        if (start === undefined) throw Errors.badRequest('invalid body property SearchStart: expected an RFC 3339 time')
        if (end === undefined) throw Errors.badRequest('invalid body property SearchEnd: expected an RFC 3339 time')
        const endRange = end || now
        if (start >= endRange) throw Errors.badRequest('SearchStart must be before SearchEnd')
        const s = await searches.launch({
          uid: caller.uid,
          gid: caller.user.defaultGid ?? 0,
          client: clientOf(caller),
          clientKind: caller.session ? 'session' : 'token',
          userQuery: body.SearchString,
          query,
          start,
          end: endRange,
          background: body.Background ?? false,
          noHistory: body.NoHistory ?? false,
          metadata: body.Metadata,
        })
        return { SearchID: s.record.id }
      },
      {
        access: 'Search',
        body: LaunchBody,
        response: Launched,
        detail: { summary: 'Launch a search on the embedded engine (README "Query language"); the caller is attached to it' },
      },
    )
    .get(
      '/api/searchctrl',
      async ({ caller, query }) => {
        const all = caller.admin && query.admin === 'true'
        return searches.list(await viewer(caller), all).map(toListEntry)
      },
      {
        access: 'AttachSearch',
        query: AdminQuery,
        response: t.Array(ListEntry),
        detail: { summary: 'Searches the caller may view: own and shared with a group of theirs (?admin=true by an admin: all)' },
      },
    )
    .get('/api/searchctrl/all', async ({ caller }) => searches.list(await viewer(caller), true).map(toListEntry), {
      access: 'admin',
      response: t.Array(ListEntry),
      detail: { summary: 'Every search on the server (admin)' },
    })
    .get('/api/searchctrl/:id', async ({ caller, params }) => [toDetail(searches.viewable(await viewer(caller), checkId(params.id)))], {
      access: 'AttachSearch',
      params: IdParams,
      response: t.Array(Detail),
      detail: { summary: 'The search detail, as a one-element array' },
    })
    .get(
      '/api/searchctrl/:id/details',
      async ({ caller, params }) => toDetails(searches.viewable(await viewer(caller), checkId(params.id)), clock()),
      { access: 'AttachSearch', params: IdParams, response: Details, detail: { summary: 'The full record of the search' } },
    )
    .patch(
      '/api/searchctrl/:id/background',
      async ({ caller, params }) => {
        searches.background(await viewer(caller), checkId(params.id))
        return jsonNull()
      },
      { access: 'BackgroundSearch', params: IdParams, detail: { summary: 'Keep the search after its last client leaves (ACTIVE or BACKGROUNDED only)' } },
    )
    .patch(
      '/api/searchctrl/:id/save',
      async ({ caller, params, request, body }) => {
        const metadata = rawBody(request).trim() === '' ? undefined : body
        await searches.save(await viewer(caller), checkId(params.id), metadata)
        return jsonNull()
      },
      {
        access: 'SaveSearch',
        params: IdParams,
        detail: { summary: 'Save the search (SAVING, then SAVED once dormant); a JSON body becomes its Metadata' },
      },
    )
    .put(
      '/api/searchctrl/:id/stop',
      async ({ caller, params }) => {
        searches.stop(await viewer(caller), checkId(params.id))
        return jsonNull()
      },
      { access: 'Search', params: IdParams, detail: { summary: 'Stop feeding the search; its output stays (owner or admin)' } },
    )
    .delete(
      '/api/searchctrl/:id',
      async ({ caller, params }) => {
        await searches.delete(await viewer(caller), checkId(params.id))
        return jsonNull()
      },
      { access: 'Search', params: IdParams, detail: { summary: 'Delete the search and its stored results (owner or admin)' } },
    )
    .put(
      '/api/searchctrl/:id/attach',
      async ({ caller, params }) => {
        searches.attach(await viewer(caller), checkId(params.id), clientOf(caller))
        return jsonNull()
      },
      { access: 'AttachSearch', params: IdParams, detail: { summary: 'Attach the calling session (or API token) to the search' } },
    )
    .put(
      '/api/searchctrl/:id/detach',
      async ({ caller, params }) => {
        searches.detach(await viewer(caller), checkId(params.id), clientOf(caller))
        return jsonNull()
      },
      { access: 'AttachSearch', params: IdParams, detail: { summary: 'Detach the calling session (or API token) from the search' } },
    )
    .get(
      '/api/searchctrl/:id/download/:format',
      async ({ caller, params }) => {
        const s = searches.viewable(await viewer(caller), checkId(params.id))
        const format = DOWNLOADS[params.format]
        if (!format) throw Errors.badRequest(`unknown download format ${JSON.stringify(params.format)} (json, csv, text)`)
        const bytes = await searches.resultBytes(s)
        return new Response(format.body(bytes), {
          headers: { 'content-type': format.type, 'content-disposition': `attachment; filename="search-${s.record.id}.${format.ext}"` },
        })
      },
      {
        access: { key: 'Download', download: true, cookie: true },
        params: DownloadParams,
        detail: { summary: 'The results as json (an array of records), csv or text; also with the download token' },
      },
    )
    .get(
      '/api/searchhistory',
      async ({ caller }) =>
        (await searches.history(caller.uid)).map((h) => ({
          UID: h.uid,
          GID: h.gid,
          UserQuery: h.userQuery,
          EffectiveQuery: h.effectiveQuery,
          Launched: formatTime(h.launched),
          Synced: false,
        })),
      {
        access: 'SearchHistory',
        response: t.Array(HistoryEntry),
        detail: { summary: 'The caller\'s own launches, newest first (NoHistory launches are not recorded)' },
      },
    )
}
