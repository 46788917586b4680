// Search control (docs/api.md "Searches", "Search states"), launching searches on the
// embedded engine, result downloads and the search history. The state machine lives in server/search/manager.ts;
// this plugin maps callers and requests onto it.
// Who may do what: view (list, detail, attach, detach, background, save, download): owner, members of the
// search's group, admins; stop and delete: owner and admins (group members 403). A caller who may not view a
// search gets 404, as for a missing one.
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { Elysia, t } from 'elysia'
import { rawBody } from '../../server/http/body'
import type { Cluster } from '../../server/cluster'
import type { Config } from '../../server/runtime/config'
import { ArchiveError } from '../../server/search/archive'
import { FilePart, MultipartError, multipartUpload, streamUpload } from '../../server/upload/multipart'
import { Errors } from '../../server/http/errors'
import type { FreeSpaceFloor } from '../../server/runtime/disk-space'
import { type OwnerQuota, QuotaExceeded, type Quotas, quotaRefusal } from '../../server/store/quota'
import { contentDisposition, downloadHeaders } from '../../server/http/headers'
import { checkJsonShape } from '../../server/http/json-shape'
import { rawMembers } from '../../server/http/raw-json'
import { QueryError } from '../../engine/errors'
import type { CompiledQuery } from '../../engine/query'
import type { ImportBound, ReadArchive } from '../../server/search/saving'
import { type SearchManager, type SearchView, type Viewer, reaches, stateWords } from '../../server/search/manager'
import { csv, jsonArray, removeWorkFiles, text, workDir } from '../../server/search/results'
import { formatTime, parseTime } from '../../server/runtime/time'
import { JSON_TYPE } from '../../server/http/wire'
import { authGuard, releaseOnly } from '../auth/guard'
import { rendererOf } from '../ws/protocol'
import type { AuthService, Caller } from '../auth/service'
import {
  AdminQuery, Detail, Details, DetailsQuery, DownloadParams, HistoryEntry, IdParams, ImportQuery, LaunchBody, Launched, ListEntry, toDetail, toDetails, toListEntry,
} from './schema'
import { area, refusals } from '../../server/http/openapi'
import type { GroupsRepo } from '../groups/repo'

export interface SearchCtrlDeps {
  config: Config
  repos: { groups: GroupsRepo }
  auth: AuthService
  searches: SearchManager
  /** Where searches held by other replicas are listed from and requests about them forwarded to. */
  cluster: Cluster
  clock: () => number
  quotas: Quotas
  /** The free-space floor checked before an import is written (server/runtime/disk-space.ts). */
  space: FreeSpaceFloor
}

/** A stream of the text chunks a renderer's download yields. */
function textStream(chunks: AsyncGenerator<string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  return new ReadableStream<Uint8Array>({
    async pull(ctl) {
      const next = await chunks.next()
      if (next.done) ctl.close()
      else ctl.enqueue(encoder.encode(next.value))
    },
    async cancel() {
      await chunks.return(undefined)
    },
  })
}

/** The answer of background, save, stop and delete: `null`, as the clients expect. */
const jsonNull = () => new Response('null', { headers: { 'content-type': JSON_TYPE } })

/**
 * What a query reads beyond the entries needs the permission of that item from an API token, as reading it through
 * its own route would: resources (lookup, enrich -r) ResourceRead, auto-extractors (ax) ExtractorRead. 403 otherwise.
 */
export function admitQuery(auth: AuthService, caller: Caller, query: CompiledQuery): void {
  if (query.modules.some((m) => m.needs?.resources?.length)) auth.admit(caller, { key: 'ResourceRead' })
  if (query.modules.some((m) => m.needs?.extractors)) auth.admit(caller, { key: 'ExtractorRead' })
}

/** How a caller is attached to a search: by its login session, or by its API token. */
export function clientOf(caller: Caller): string {
  return caller.session ? sessionClient(caller.session.id) : tokenClient(caller.token!.id)
}
export const sessionClient = (sessionId: string) => `session:${sessionId}`
export const tokenClient = (tokenId: string) => `token:${tokenId}`
/** When the caller stops being a client by itself: an API token's expiry (0: never; sessions end by events). */
const clientExpiresOf = (caller: Caller) => caller.token?.expires ?? 0

/** The longest a details request holds its answer for a running search (well inside Bun's idle timeout of 10 s). */
export const DETAILS_MAX_WAIT_S = 5

/** The `wait` of a details request in milliseconds (0: answer at once); anything but 0 to DETAILS_MAX_WAIT_S seconds is a 400. */
function waitOf(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 0
  const seconds = /^\d+(\.\d+)?$/.test(raw) ? Number(raw) : NaN
  if (!(seconds >= 0 && seconds <= DETAILS_MAX_WAIT_S)) throw Errors.badRequest(`wait: expected seconds from 0 to ${DETAILS_MAX_WAIT_S}, got ${JSON.stringify(raw.slice(0, 32))}`)
  return Math.round(seconds * 1000)
}

/** Resolves when `runner` settles, after `ms`, or when the request is given up, whichever comes first. */
function untilSettled(runner: Promise<unknown>, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done)
    runner.then(done, done)
  })
}

/** Search ids are strings of digits (docs/api.md "Conventions"). */
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
/**
 * What an import may store (results plus index) relative to the compressed bytes actually received: at most
 * EXPANSION_RATIO times them plus EXPANSION_FLOOR (the fixed cost of a small archive: its descriptions, tar padding
 * and the index of a few records), and never more than EXPANSION_LIMIT times QUARRY_MAX_IMPORT_SIZE, whatever was
 * received. Measured on records of the server's own shape: syslog-like entries compress 7.7:1 (gzip level 1, what
 * the server writes) to 12.7:1 (level 9), entries differing only in their time 29:1 to 50:1; bombs of identical
 * records reach 85:1 to 332:1 and gzip itself about 1,000:1. 64 passes every real archive and refuses the bombs: a
 * 31 KB archive can no longer store 110 MB, only about 3 MB (docs/search-archive.md "What one import may store").
 */
const EXPANSION_RATIO = 64
const EXPANSION_FLOOR = 1024 * 1024
const EXPANSION_LIMIT = 16
/** GID, BatchName and BatchInfo are small fields. */
const FIELD_LIMIT = 16 * 1024
const MAX_BATCH_TEXT = 4096

export function searchCtrlPlugin({ config, repos, auth, searches, cluster, clock, quotas, space }: SearchCtrlDeps) {
  auth.onSessionsEnded((ids) => searches.detachClients(ids.map(sessionClient)))
  auth.onSessionReplaced((oldId, newId) => searches.replaceClient(sessionClient(oldId), sessionClient(newId)))
  auth.onTokensEnded((ids) => searches.detachClients(ids.map(tokenClient)))
  auth.onTokenExpiryChanged((id, expires) => searches.setClientExpiry(tokenClient(id), expires))

  async function viewer(caller: Caller): Promise<Viewer> {
    const groups = await repos.groups.groupsOf(caller.uid)
    return { uid: caller.uid, admin: caller.admin, groups: new Set(groups.map((g) => g.gid)) }
  }

  /**
   * The searches the caller may list, oldest first: this process's from memory, and in a cluster those other
   * replicas hold and the saved ones nobody holds.
   */
  async function listing(caller: Caller, all: boolean) {
    const v = await viewer(caller)
    const views: SearchView[] = searches.list(v, all)
    if (cluster.shared) {
      for (const s of await cluster.othersSearches()) if (all || reaches(v, s)) views.push(s)
      views.sort((a, b) => a.record.started - b.record.started)
    }
    return views.map((s) => toListEntry(s, config.searchGraceMs))
  }

  /**
   * The group an import is shared with (0: none): an admin may name any positive GID, as sharing lists allow; others
   * only a group they belong to (403). Checked before the archive is read.
   */
  async function importGid(caller: Caller, raw: string | undefined): Promise<number> {
    const rawGid = raw?.trim() ?? ''
    if (rawGid === '' || rawGid === '0') return 0
    if (!/^\d{1,10}$/.test(rawGid) || Number(rawGid) > 2147483647) throw Errors.badRequest('invalid GID: expected a positive group id')
    const gid = Number(rawGid)
    if (!caller.admin && !(await repos.groups.isMember(caller.uid, gid))) throw Errors.forbidden(`you are not a member of group ${gid}`)
    return gid
  }

  /** BatchName and BatchInfo are kept as given. */
  function batchFields(fields: Record<string, string>) {
    const batchName = fields.BatchName ?? ''
    const batchInfo = fields.BatchInfo ?? ''
    if (batchName.length > MAX_BATCH_TEXT || batchInfo.length > MAX_BATCH_TEXT)
      throw Errors.badRequest(`BatchName and BatchInfo are at most ${MAX_BATCH_TEXT} characters`)
    return { batchName, batchInfo }
  }

  /**
   * Reads the `file` part of an import. The group is checked before the archive is read: a GID in the query before
   * any of the body, a GID field before the file part before any of the file. When the file part comes first and
   * no GID is in the query, a GID field may still follow it: the compressed bytes are then only spooled to a
   * temporary file (at most QUARRY_MAX_IMPORT_SIZE, and at most the importer's remaining quota), and the archive is
   * read from it only once the whole form, and so the group, has been checked. Nothing is left behind on refusal.
   */
  async function receiveImport(caller: Caller, request: Request, queryGid: string | undefined) {
    const limit = config.maxImportBytes
    const quota = await quotas.of(caller.uid, caller.user)
    await space.check(Number(request.headers.get('content-length') ?? 0))
    const bound: ImportBound = { ratio: EXPANSION_RATIO, floor: EXPANSION_FLOOR, max: limit * EXPANSION_LIMIT, quota }
    const read = (stream: ReadableStream<Uint8Array>) =>
      searches.readArchive(stream, { maxCompressedBytes: limit, maxExpandedBytes: limit * EXPANSION_LIMIT }, bound)
    type Received = { read: ReadArchive; spool?: undefined } | { spool: string; read?: undefined }
    let checkedGid: number | undefined = queryGid === undefined ? undefined : await importGid(caller, queryGid)
    let form
    try {
      form = await streamUpload<Received>(
        request,
        async (stream, before) => {
          if (checkedGid === undefined && before.GID !== undefined) checkedGid = await importGid(caller, before.GID)
          if (checkedGid !== undefined) return { read: await read(stream) }
          return { spool: await spool(stream, quota) }
        },
        async (r) => (r.read ? removeWorkFiles(r.read.files) : rmSync(r.spool, { force: true })),
        { maxBytes: limit, fieldLimit: FIELD_LIMIT },
      )
    } catch (e) {
      if (e instanceof ArchiveError || e instanceof MultipartError) throw Errors.badRequest(`not a usable search archive: ${e.message}`)
      if (e instanceof QuotaExceeded) throw quotaRefusal(e)
      throw e
    }
    const received = form.result
    try {
      const fieldGid = form.fields.GID
      let gid: number
      if (checkedGid === undefined) gid = await importGid(caller, fieldGid)
      else {
        gid = checkedGid
        // A GID in the query and another in the form: which one was meant is unclear.
        if (fieldGid !== undefined && (await importGid(caller, fieldGid)) !== gid) throw Errors.badRequest('the query and the form name different GIDs')
      }
      const batch = batchFields(form.fields)
      if (received.read) return { read: received.read, gid, ...batch }
      try {
        return { read: await read(Bun.file(received.spool).stream()), gid, ...batch }
      } catch (e) {
        if (e instanceof ArchiveError) throw Errors.badRequest(`not a usable search archive: ${e.message}`)
        if (e instanceof QuotaExceeded) throw quotaRefusal(e)
        throw e
      }
    } catch (e) {
      if (received.read) removeWorkFiles(received.read.files)
      throw e
    } finally {
      if (received.spool) rmSync(received.spool, { force: true })
    }
  }

  /**
   * Writes the compressed archive to a fresh temporary file in the search working directory: at most
   * QUARRY_MAX_IMPORT_SIZE (400) and at most the room the importer's quota leaves (413; an import stores at least
   * as many bytes as it has records, so no larger archive could fit).
   */
  async function spool(stream: ReadableStream<Uint8Array>, quota: OwnerQuota | undefined): Promise<string> {
    const limit = config.maxImportBytes
    const room = quota ? Math.max(0, quota.limit - quota.used) : Number.POSITIVE_INFINITY
    const dir = workDir(config.dataDir)
    mkdirSync(dir, { recursive: true })
    const path = join(dir, `import-${crypto.randomUUID()}.tar.gz`)
    const sink = Bun.file(path).writer()
    let size = 0
    try {
      for await (const chunk of stream) {
        size += chunk.byteLength
        if (size > limit) throw new ArchiveError(`the archive is larger than the limit of ${limit} bytes`)
        if (size > room) throw new QuotaExceeded(quota!.limit, quota!.used, size)
        sink.write(chunk)
        await sink.flush()
      }
      await sink.end()
      return path
    } catch (e) {
      await Promise.resolve(sink.end()).catch(() => undefined)
      rmSync(path, { force: true })
      throw e
    }
  }

  return new Elysia({ name: 'quarry-searchctrl', detail: area('Searches') })
    .use(authGuard(auth))
    .post(
      '/api/searchctrl/launch',
      async ({ caller, body, request }) => {
        const metadata = rawMembers(rawBody(request), ['Metadata'])?.get('Metadata')
        if (metadata !== undefined) checkJsonShape(metadata, 'Metadata')
        let query
        try {
          query = await searches.parse(body.SearchString)
        } catch (e) {
          if (e instanceof QueryError) throw Errors.badQuery(e.message, e.position)
          throw e
        }
        admitQuery(auth, caller, query)
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
        await cluster.sync()
        return { SearchID: s.record.id }
      },
      {
        access: 'Search',
        body: LaunchBody,
        response: { 200: Launched, ...refusals(429) },
        detail: { summary: 'Launch a search', description: 'Runs a query on the embedded engine (docs/query-language.md); you are attached to it.' },
      },
    )
    .get(
      '/api/searchctrl',
      async ({ caller, query }) => listing(caller, caller.admin && query.admin === 'true'),
      {
        access: 'AttachSearch',
        query: AdminQuery,
        response: t.Array(ListEntry),
        detail: { summary: 'List the searches you can see', description: 'Yours and those shared with a group of yours; with `?admin=true` an admin gets all.' },
      },
    )
    .get('/api/searchctrl/all', async ({ caller }) => listing(caller, true), {
      access: 'admin',
      response: t.Array(ListEntry),
      detail: { summary: 'List every search on the server' },
    })
    .get('/api/searchctrl/:id', async ({ caller, params, request }) => ((await cluster.route(request, checkId(params.id), () => viewer(caller))) as never) ?? [toDetail(searches.viewable(await viewer(caller), params.id))], {
      access: 'AttachSearch',
      params: IdParams,
      response: t.Array(Detail),
      detail: { summary: 'Get a search\'s summary', description: 'A one-element array (the shape the clients read).' },
    })
    .get(
      '/api/searchctrl/:id/details',
      async ({ caller, params, request, query }) => {
        const forwarded = await cluster.route(request, checkId(params.id), () => viewer(caller))
        if (forwarded) return forwarded as never
        const waitMs = waitOf(query.wait)
        const v = await viewer(caller)
        const s = searches.viewable(v, params.id)
        if (waitMs > 0 && s.running && s.runner) {
          await untilSettled(s.runner, waitMs, request.signal)
          // deleted (or no longer the caller's to see) meanwhile: 404 as for any later request
          return toDetails(searches.viewable(v, params.id), clock(), config.searchGraceMs)
        }
        return toDetails(s, clock(), config.searchGraceMs)
      },
      {
        access: 'AttachSearch',
        params: IdParams,
        query: DetailsQuery,
        response: Details,
        detail: {
          summary: 'Get a search\'s full record',
          description: 'With `wait`, a long-poll: a running search\'s record comes as soon as it finishes (or fails, or is stopped), at the latest after `wait` seconds; a client follows a search with it instead of polling.',
        },
      },
    )
    .patch(
      '/api/searchctrl/:id/background',
      async ({ caller, params, request }) => {
        const forwarded = await cluster.route(request, checkId(params.id), () => viewer(caller))
        if (forwarded) return forwarded
        searches.background(await viewer(caller), params.id)
        await cluster.sync()
        return jsonNull()
      },
      { access: 'BackgroundSearch', params: IdParams, response: refusals(409), detail: { summary: 'Background a search', description: 'It stays after its last client leaves; only an ACTIVE or BACKGROUNDED search.' } },
    )
    .patch(
      '/api/searchctrl/:id/save',
      async ({ caller, params, request, body }) => {
        const text = rawBody(request)
        const forwarded = await cluster.route(request, checkId(params.id), () => viewer(caller), text)
        if (forwarded) return forwarded
        if (text.trim() !== '') checkJsonShape(text, 'the metadata')
        const metadata = text.trim() === '' ? undefined : body
        await searches.save(await viewer(caller), params.id, metadata)
        await cluster.sync()
        return jsonNull()
      },
      {
        access: 'SaveSearch',
        params: IdParams,
        body: t.Unknown({ description: 'optional: any JSON, kept as the search\'s Metadata' }),
        detail: { summary: 'Save a search', description: 'It becomes SAVING, then SAVED once dormant; a JSON body becomes its Metadata.' },
      },
    )
    .put(
      '/api/searchctrl/:id/stop',
      async ({ caller, params, request }) => {
        const forwarded = await cluster.route(request, checkId(params.id), () => viewer(caller))
        if (forwarded) return forwarded
        searches.stop(await viewer(caller), params.id)
        await cluster.sync()
        return jsonNull()
      },
      { access: 'Search', params: IdParams, detail: { summary: 'Stop a running search', description: 'Its output stays usable; its owner or an admin. A saved or dormant search answers 400.' } },
    )
    .delete(
      '/api/searchctrl/:id',
      async ({ caller, params, request }) => {
        const forwarded = await cluster.route(request, checkId(params.id), () => viewer(caller))
        if (forwarded) return forwarded
        await searches.delete(await viewer(caller), params.id)
        await cluster.sync()
        return jsonNull()
      },
      { access: 'Search', params: IdParams, detail: { summary: 'Delete a search and its results', description: 'Its owner or an admin.' } },
    )
    .put(
      '/api/searchctrl/:id/attach',
      async ({ caller, params, request }) => {
        const forwarded = await cluster.route(request, checkId(params.id), () => viewer(caller))
        if (forwarded) return forwarded
        searches.attach(await viewer(caller), params.id, clientOf(caller), clientExpiresOf(caller))
        await cluster.sync()
        return jsonNull()
      },
      { access: 'AttachSearch', params: IdParams, detail: { summary: 'Attach to a search', description: 'Attaches your session (or API token).' } },
    )
    .put(
      '/api/searchctrl/:id/detach',
      async ({ caller, params, request }) => {
        const forwarded = await cluster.route(request, checkId(params.id), () => viewer(caller))
        if (forwarded) return forwarded
        const v = await viewer(caller)
        // A token without AttachSearch may still leave a search it is attached to (one it launched): no more.
        if (releaseOnly(request) && !searches.viewable(v, params.id).clients.has(clientOf(caller))) throw Errors.missingPermission('AttachSearch')
        searches.detach(v, params.id, clientOf(caller))
        await cluster.sync()
        return jsonNull()
      },
      {
        access: { key: 'AttachSearch', releaseOwn: true },
        params: IdParams,
        detail: {
          summary: 'Detach from a search',
          description: 'Detaches your session (or API token). A token without AttachSearch may detach from a search it is attached to itself (one it launched), and from no other.',
        },
      },
    )
    .get(
      '/api/searchctrl/:id/download/:format',
      async ({ caller, params, request }) => {
        const forwarded = await cluster.route(request, checkId(params.id), () => viewer(caller))
        if (forwarded) return forwarded
        const s = searches.viewable(await viewer(caller), params.id)
        if (params.format === 'archive') {
          if (s.save !== 'saved') throw Errors.conflict(`search ${s.record.id} is ${stateWords(s)}: only a saved search can be exported`)
          return new Response(await searches.exportArchive(s), { headers: downloadHeaders('application/gzip', `search-${s.record.id}.tar.gz`) })
        }
        // The value renderers (table, chart, gauge...) give their own downloads; the renderers of entries the records.
        const renderer = rendererOf(s)
        const offered = [...renderer.downloads, 'archive'].join(', ')
        if (!renderer.downloads.includes(params.format))
          throw Errors.badRequest(`unknown download format ${JSON.stringify(params.format)} for the ${renderer.name} renderer (${offered})`)
        const own = renderer.download?.({ count: s.record.itemCount, read: (a, b) => searches.readRecords(s, a, b) }, params.format, {
          start: s.record.startRange,
          end: s.record.endRange,
        })
        if (own) {
          const type = params.format === 'json' ? JSON_TYPE : params.format === 'csv' ? 'text/csv; charset=utf-8' : 'text/plain; charset=utf-8'
          return new Response(textStream(own), {
            headers: { ...downloadHeaders(type), 'content-disposition': contentDisposition('attachment', `search-${s.record.id}.${params.format === 'text' ? 'txt' : params.format}`) },
          })
        }
        const format = DOWNLOADS[params.format]
        if (!format) throw Errors.badRequest(`unknown download format ${JSON.stringify(params.format)} (${offered})`)
        const bytes = await searches.resultBytes(s)
        // results are user content: the download headers, and always an attachment (text included)
        return new Response(format.body(bytes), {
          headers: { ...downloadHeaders(format.type), 'content-disposition': contentDisposition('attachment', `search-${s.record.id}.${format.ext}`) },
        })
      },
      {
        access: { key: 'Download', download: true, cookie: true },
        params: DownloadParams,
        response: refusals(409),
        detail: {
          summary: 'Download a search\'s results or archive',
          description:
            'The formats of the search\'s renderer (SearchInfo.RenderDownloadFormats): for entries (text, raw, hex, pcap) `json` (an array of records), `csv` or `text`; for table and chart `csv` (a header row, then rows; numbers as they are) and `json` (an array of row objects); for gauge, numbercard and stackgraph `json` (what the clients read) and `csv`. For a saved search also `archive` (docs/search-archive.md).',
        },
      },
    )
    .post(
      '/api/searchctrl/import',
      async ({ caller, request, query }) => {
        const limit = config.maxImportBytes
        const declared = Number(request.headers.get('content-length') ?? 0)
        if (declared > limit + MULTIPART_OVERHEAD) throw Errors.badRequest(`the archive exceeds the limit of ${limit} bytes`)
        const { read, gid, batchName, batchInfo } = await receiveImport(caller, request, query.GID)
        try {
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
          await cluster.sync()
          return toDetails(s, now, config.searchGraceMs)
        } catch (e) {
          throw e instanceof QuotaExceeded ? quotaRefusal(e) : e
        } finally {
          removeWorkFiles(read.files) // gone already when adopted
        }
      },
      {
        access: { key: 'SaveSearch', cookie: true },
        query: ImportQuery,
        parse: multipartUpload(
          t.Object({
            file: FilePart('the search archive (docs/search-archive.md), as exported by GET /api/searchctrl/{id}/download/archive'),
            GID: t.Optional(t.String({ description: 'a group to share the imported search with (admins: any; others: a group of theirs)' })),
            BatchName: t.Optional(t.String({ description: 'shown in the details as Import.BatchName' })),
            BatchInfo: t.Optional(t.String({ description: 'shown in the details as Import.BatchInfo' })),
          }),
        ),
        response: { 200: Details, ...refusals(507) },
        detail: {
          summary: 'Import a search archive as a saved search of yours',
          description: 'Multipart `file` (the archive) with optional GID, BatchName, BatchInfo (GID also in the query). Answers the new search\'s details.',
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
        detail: { summary: 'Get your search history', description: 'Your launches, newest first (NoHistory launches are not recorded).' },
      },
    )
}
