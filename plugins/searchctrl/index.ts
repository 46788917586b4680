// Search control (spec "Search control", "States and transitions"; decisions §6), launching searches on the
// embedded engine, result downloads and the search history. The state machine lives in server/search/manager.ts;
// this plugin maps callers and requests onto it.
// Who may do what: view (list, detail, attach, detach, background, save, download): owner, members of the
// search's group, admins; stop and delete: owner and admins (group members 403). A caller who may not view a
// search gets 404, as for a missing one.
import { Elysia, t } from 'elysia'
import { rawBody } from '../../server/body'
import type { Config } from '../../server/config'
import { ArchiveError } from '../../server/search/archive'
import { MultipartError, leaveMultipart, streamUpload } from '../../server/upload/multipart'
import { Errors } from '../../server/errors'
import { QueryError } from '../../server/search/query'
import { type SearchManager, type Viewer, stateWords } from '../../server/search/manager'
import { csv, jsonArray, removeWorkFiles, text } from '../../server/search/results'
import type { Store } from '../../server/store'
import { formatTime, parseTime } from '../../server/time'
import { JSON_TYPE } from '../../server/wire'
import { authGuard } from '../auth/guard'
import type { AuthService, Caller } from '../auth/service'
import {
  AdminQuery, Detail, Details, DownloadParams, HistoryEntry, IdParams, LaunchBody, Launched, ListEntry, toDetail, toDetails, toListEntry,
} from './schema'

export interface SearchCtrlDeps {
  config: Config
  store: Store
  auth: AuthService
  searches: SearchManager
  clock: () => number
}

/** The answer of background, save, stop and delete: the spec's "Body null". */
const jsonNull = () => new Response('null', { headers: { 'content-type': JSON_TYPE } })

/** How a caller is attached to a search: by its login session, or by its API token. */
export function clientOf(caller: Caller): string {
  return caller.session ? sessionClient(caller.session.id) : tokenClient(caller.token!.id)
}
export const sessionClient = (sessionId: string) => `session:${sessionId}`
export const tokenClient = (tokenId: string) => `token:${tokenId}`
/** When the caller stops being a client by itself: an API token's expiry (0: never; sessions end by events). */
const clientExpiresOf = (caller: Caller) => caller.token?.expires ?? 0

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

/** Room for the multipart framing and the small fields around the archive when Content-Length is checked. */
const MULTIPART_OVERHEAD = 64 * 1024
/** An archive may expand to at most this many times its compressed size (the zip-bomb bound). */
const EXPANSION_LIMIT = 16
/** GID, BatchName and BatchInfo are small fields. */
const FIELD_LIMIT = 16 * 1024
const MAX_BATCH_TEXT = 4096

export function searchCtrlPlugin({ config, store, auth, searches, clock }: SearchCtrlDeps) {
  auth.onSessionsEnded((ids) => searches.detachClients(ids.map(sessionClient)))
  auth.onSessionReplaced((oldId, newId) => searches.replaceClient(sessionClient(oldId), sessionClient(newId)))
  auth.onTokensEnded((ids) => searches.detachClients(ids.map(tokenClient)))
  auth.onTokenExpiryChanged((id, expires) => searches.setClientExpiry(tokenClient(id), expires))

  async function viewer(caller: Caller): Promise<Viewer> {
    const groups = await store.groups.groupsOf(caller.uid)
    return { uid: caller.uid, admin: caller.admin, groups: new Set(groups.map((g) => g.gid)) }
  }

  /**
   * The optional fields of an import: GID shares the search with a group (an admin may name any positive GID, as
   * sharing lists allow; others only a group they belong to: 403), BatchName and BatchInfo are kept as given.
   */
  async function importFields(caller: Caller, fields: Record<string, string>) {
    let gid = 0
    const rawGid = fields.GID?.trim() ?? ''
    if (rawGid !== '' && rawGid !== '0') {
      if (!/^\d{1,10}$/.test(rawGid) || Number(rawGid) > 2147483647) throw Errors.badRequest('invalid GID: expected a positive group id')
      gid = Number(rawGid)
      if (!caller.admin && !(await store.groups.isMember(caller.uid, gid))) throw Errors.forbidden(`you are not a member of group ${gid}`)
    }
    const batchName = fields.BatchName ?? ''
    const batchInfo = fields.BatchInfo ?? ''
    if (batchName.length > MAX_BATCH_TEXT || batchInfo.length > MAX_BATCH_TEXT)
      throw Errors.badRequest(`BatchName and BatchInfo are at most ${MAX_BATCH_TEXT} characters`)
    return { gid, batchName, batchInfo }
  }

  return new Elysia({ name: 'quarry-searchctrl' })
    .use(authGuard(auth))
    .post(
      '/api/searchctrl/launch',
      async ({ caller, body }) => {
        let query
        try {
          query = await searches.parse(body.SearchString)
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
          clientExpires: clientExpiresOf(caller),
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
        searches.attach(await viewer(caller), checkId(params.id), clientOf(caller), clientExpiresOf(caller))
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
        if (params.format === 'archive') {
          if (s.save !== 'saved') throw Errors.conflict(`search ${s.record.id} is ${stateWords(s)}: only a saved search can be exported`)
          return new Response(await searches.exportArchive(s), {
            headers: { 'content-type': 'application/gzip', 'content-disposition': `attachment; filename="search-${s.record.id}.tar.gz"` },
          })
        }
        const format = DOWNLOADS[params.format]
        if (!format) throw Errors.badRequest(`unknown download format ${JSON.stringify(params.format)} (json, csv, text, archive)`)
        const bytes = await searches.resultBytes(s)
        return new Response(format.body(bytes), {
          headers: { 'content-type': format.type, 'content-disposition': `attachment; filename="search-${s.record.id}.${format.ext}"` },
        })
      },
      {
        access: { key: 'Download', download: true, cookie: true },
        params: DownloadParams,
        detail: {
          summary: 'The results as json (an array of records), csv or text, or a saved search as a search archive (docs/search-archive.md); also with the download token',
        },
      },
    )
    .post(
      '/api/searchctrl/import',
      async ({ caller, request }) => {
        const limit = config.maxImportBytes
        const declared = Number(request.headers.get('content-length') ?? 0)
        if (declared > limit + MULTIPART_OVERHEAD) throw Errors.badRequest(`the archive exceeds the limit of ${limit} bytes`)
        let form
        try {
          form = await streamUpload(
            request,
            (stream) => searches.readArchive(stream, { maxCompressedBytes: limit, maxExpandedBytes: limit * EXPANSION_LIMIT }),
            async (read) => removeWorkFiles(read.files),
            { fieldLimit: FIELD_LIMIT },
          )
        } catch (e) {
          if (e instanceof ArchiveError || e instanceof MultipartError) throw Errors.badRequest(`not a usable search archive: ${e.message}`)
          throw e
        }
        const read = form.result
        try {
          const { gid, batchName, batchInfo } = await importFields(caller, form.fields)
          const d = read.description
          const times = [d.StartRange, d.EndRange, d.Started, d.Finished].map((v) => parseTime(v))
          if (times.some((v) => v === undefined)) throw Errors.badRequest('not a usable search archive: a time in search.json cannot be read')
          const [startRange, endRange, started, finished] = times as number[]
          const now = clock()
          const s = await searches.adopt(
            {
              uid: caller.uid,
              gid,
              userQuery: d.UserQuery,
              effectiveQuery: d.EffectiveQuery,
              startRange: startRange!,
              endRange: endRange!,
              started: started!,
              finished: finished || now,
              lastUpdate: now,
              storeSize: read.storeSize,
              indexSize: read.indexSize,
              itemCount: read.itemCount,
              metadata: d.Metadata ?? null,
              import: { time: now, batchName, batchInfo },
              launchInfo: { background: false, client: caller.session ? 'session' : 'token' },
              noHistory: true,
              error: '',
            },
            read.files,
          )
          return toDetails(s, now)
        } finally {
          removeWorkFiles(read.files) // gone already when adopted
        }
      },
      {
        access: { key: 'SaveSearch', cookie: true },
        parse: leaveMultipart,
        response: Details,
        detail: {
          summary: 'Import a search archive (multipart file; optional GID, BatchName, BatchInfo) as a SAVED search of the caller; answers its details',
        },
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
