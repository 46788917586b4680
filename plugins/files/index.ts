// User files (docs/api.md "Resources and user files", "Sharing items with groups"): metadata in the store, contents in
// the blob store.
// Read: owner, members of a group in GIDs, everyone for a global file, admins. Write and delete: owner and
// admins. A caller who may not read gets 404; a reader who may not write gets 403. An admin's token acts as a
// normal user. Several files may share a GUID: the one used is the caller's own, else one shared with a group
// of the caller, else a global one (else, for an admin, anyone's). Every route also takes the ThingUUID, from
// every caller under the same rules (docs/api.md "Resources and user files"): the js-client reads each file back by
// ThingUUID.
import { Elysia, t } from 'elysia'
import { type BlobStore, BlobTooLargeError, discardBlob, openBody } from '../../server/blob'
import { type Reacher, UUID, canReach, checkSharing, pickReached } from '../../server/rules/sharing'
import { contents, sharingList } from '../../server/http/wire'
import type { Config } from '../../server/runtime/config'
import { Errors } from '../../server/http/errors'
import type { FreeSpaceFloor } from '../../server/runtime/disk-space'
import { type OwnerQuota, QuotaExceeded, Quotas, quotaRefusal, quotaRefusalWhileStreaming } from '../../server/store/quota'
import { itemLabels, itemName } from '../../server/rules/names'
import type { Logger } from '../../server/runtime/log'
import { FilePart, MultipartError, type UploadForm, UploadTooLargeError, multipartUpload, streamUpload } from '../../server/upload/multipart'
import { sniffContentType } from '../../server/upload/sniff'
import { authGuard } from '../auth/guard'
import { Empty } from '../auth/schema'
import type { AuthService, Caller } from '../auth/service'
import type { FileRow, FilesRepo } from './repo'
import { AdminQuery, CreateFileForm, IdParams, PatchFileBody, UserFile, parseCreateFields, toUserFile } from './schema'
import { area, refusals } from '../../server/http/openapi'
import type { UsersRepo } from '../users/repo'
import type { GroupsRepo } from '../groups/repo'

/** Room for the multipart framing (and the small fields) around the file when Content-Length is checked. */
const MULTIPART_OVERHEAD = 64 * 1024
/** Text parts (name, desc, guid, meta) are small fields. */
const FIELD_LIMIT = 32 * 1024
/** How many leading bytes content sniffing looks at (WHATWG MIME sniffing). */
const SNIFF_BYTES = 512
/** Type of a file without contents (docs/api.md "Resources and user files"). */
export const EMPTY_TYPE = 'empty'

/** A fresh blob key for each version of a file's contents. */
const newBlobKey = (thingUuid: string) => `files/${thingUuid}/${crypto.randomUUID()}`


interface Stored {
  size: number
  type: string
}

export interface FilesDeps {
  config: Config
  repos: { users: UsersRepo; groups: GroupsRepo; files: FilesRepo }
  blobs: BlobStore
  auth: AuthService
  log: Logger
  clock: () => number
  quotas: Quotas
  /** The free-space floor checked before contents are written (server/runtime/disk-space.ts). */
  space: FreeSpaceFloor
}

/**
 * POST and PUT /api/files/{id} are the same operation (docs/api.md "Resources and user files"): one set of hooks for
 * both, made afresh per route because Elysia writes into the hook object it is given (one object shared by two routes
 * breaks both).
 */
const replaceHooks = () => ({
  access: 'UserFileWrite' as const,
  params: IdParams,
  query: AdminQuery,
  parse: multipartUpload(t.Object({ file: FilePart('the new contents (other parts are ignored)') })),
  response: { 200: UserFile, ...refusals(507) },
  detail: { summary: 'Replace a file\'s contents', description: 'Multipart; only the `file` part is used. Answers the record.' },
})

export function filesPlugin({ config, repos, blobs, auth, log, clock, quotas, space }: FilesDeps) {
  const { files } = repos

  /** Admins reach every file (an admin's token acts as a normal user: `caller.admin` is false then). */
  const reacher = (caller: Caller): Reacher => ({ uid: caller.uid, all: caller.admin })

  async function canRead(caller: Caller, f: FileRow): Promise<boolean> {
    const shared = f.uid !== caller.uid && f.gids.length > 0 && (await files.sharedWith(f.thingUuid, caller.uid))
    return canReach({ ...f, shared }, reacher(caller))
  }

  /**
   * The file an id names for this caller, when the caller may read it; 400 for an id that is no UUID, 404 when
   * nothing readable matches. A ThingUUID names exactly one file: when the id is one, that file is the answer or
   * nothing is (never another file whose GUID happens to be the same text); otherwise the id is a GUID.
   */
  async function readable(caller: Caller, rawId: string): Promise<FileRow> {
    if (!UUID.test(rawId)) throw Errors.badRequest('invalid file id: expected a UUID')
    const id = rawId.toLowerCase()
    const byThing = await files.get(id)
    if (byThing) {
      if (await canRead(caller, byThing)) return byThing
      throw Errors.notFound('file')
    }
    const best = pickReached(await files.byGuid(id, caller.uid), reacher(caller))
    if (!best) throw Errors.notFound('file')
    return best
  }

  /** The file when the caller may change it: 404 when it may not read it, 403 when it only reads. */
  async function writable(caller: Caller, rawId: string): Promise<FileRow> {
    const f = await readable(caller, rawId)
    if (!caller.admin && f.uid !== caller.uid) throw Errors.forbidden('only the owner or an admin may change this file')
    return f
  }

  const adminView = (caller: Caller, query: { admin?: string }) => caller.admin && query.admin === 'true'

  /**
   * Streams the `file` part of a multipart request into the blob store under `key`, sniffing its type on the
   * way, and answers it with the form's small text fields. 413 over maxFileBytes or over the room `quota` leaves
   * (with `replacing` bytes given back by the version it replaces), 400 for a bad form; in every case nothing is
   * left under `key`.
   */
  async function receive(request: Request, key: string, quota: OwnerQuota | undefined, replacing = 0): Promise<UploadForm<Stored>> {
    const limit = config.maxFileBytes
    const room = Quotas.room(quota, replacing)
    const declared = Number(request.headers.get('content-length') ?? 0)
    if (declared > limit + MULTIPART_OVERHEAD) throw Errors.tooLarge(limit)
    if (quota && declared > room + MULTIPART_OVERHEAD) throw quotaRefusalWhileStreaming(quota)
    await space.check(declared)
    try {
      return await streamUpload(
        request,
        async (stream) => {
          const head = new Uint8Array(SNIFF_BYTES)
          let headSize = 0
          const watched = stream.pipeThrough(
            new TransformStream<Uint8Array, Uint8Array>({
              transform(chunk, ctl) {
                if (headSize < SNIFF_BYTES) {
                  const take = Math.min(chunk.byteLength, SNIFF_BYTES - headSize)
                  head.set(chunk.subarray(0, take), headSize)
                  headSize += take
                }
                ctl.enqueue(chunk)
              },
            }),
          )
          const put = await blobs.put(key, watched, { maxBytes: Math.min(limit, room) })
          return { size: put.size, type: put.size === 0 ? EMPTY_TYPE : sniffContentType(head.subarray(0, headSize)) }
        },
        () => blobs.delete(key),
        { maxBytes: limit, fieldLimit: FIELD_LIMIT },
      )
    } catch (e) {
      if (e instanceof UploadTooLargeError) throw Errors.tooLarge(limit)
      if (e instanceof BlobTooLargeError) throw quota && room < limit ? quotaRefusalWhileStreaming(quota) : Errors.tooLarge(limit)
      if (e instanceof MultipartError) throw Errors.badRequest(e.message)
      throw e
    }
  }

  return new Elysia({ name: 'quarry-files', detail: area('User files') })
    .use(authGuard(auth))
    .get(
      '/api/files',
      async ({ caller, query }) => {
        const rows = adminView(caller, query) ? await files.listAll() : await files.listVisible(caller.uid)
        return rows.map(toUserFile)
      },
      {
        access: 'UserFileRead',
        query: AdminQuery,
        response: t.Array(UserFile),
        detail: { summary: 'List the files you can read', description: 'Own, group-shared and global ones; with `?admin=true` an admin gets every file.' },
      },
    )
    .post(
      '/api/files',
      async ({ caller, request }) => {
        const thingUuid = crypto.randomUUID()
        const key = newBlobKey(thingUuid)
        // The caller's quota bounds the stream (an admin's is none: they may also create files for another user,
        // whose quota the commit checks, with the row).
        const { result, fields, filename } = await receive(request, key, await quotas.of(caller.uid, caller.user))
        try {
          const wanted = parseCreateFields(fields)
          const uid = wanted.uid ?? caller.uid
          if (uid !== caller.uid && !caller.admin) throw Errors.forbidden('only admins may create files for another user')
          if (wanted.global && !caller.admin) throw Errors.forbidden('only admins may create global files')
          if (uid !== caller.uid && !(await repos.users.get(uid))) throw Errors.badRequest(`no user ${uid}`)
          await checkSharing(caller, wanted.gids, repos.groups)
          await files.create(
            {
              thingUuid,
              guid: wanted.guid ?? crypto.randomUUID(),
              uid,
              name: itemName(wanted.name ?? filename ?? ''),
              description: wanted.desc,
              global: wanted.global,
              size: result.size,
              type: result.type,
              labels: itemLabels(wanted.labels),
              updated: clock(),
              blobKey: key,
              gids: wanted.gids,
            },
            await quotas.limitFor(uid),
          )
        } catch (e) {
          await discardBlob(blobs, key, log)
          throw e instanceof QuotaExceeded ? quotaRefusal(e) : e
        }
        return toUserFile((await files.get(thingUuid))!)
      },
      {
        access: 'UserFileWrite',
        query: AdminQuery,
        parse: multipartUpload(CreateFileForm),
        response: { 200: UserFile, ...refusals(507) },
        detail: { summary: 'Upload a new file', description: 'Multipart: `file` plus `name`, `desc`, `guid`, or `file` plus `meta` (JSON). Answers the file\'s record.' },
      },
    )
    .get(
      '/api/files/:id',
      async ({ caller, params }) => {
        const read = () => readable(caller, params.id)
        const { row: f, body } = await openBody(blobs, await read(), read)
        const type = f.type === EMPTY_TYPE || f.type === '' ? 'application/octet-stream' : f.type
        return contents(body ?? new Uint8Array(0), type, body ? f.size : 0)
      },
      {
        access: { key: 'UserFileRead', download: true, cookie: true },
        params: IdParams,
        query: AdminQuery,
        detail: { summary: 'Download a file\'s contents', description: 'By GUID or ThingUUID.' },
      },
    )
    .get(
      '/api/files/:id/details',
      async ({ caller, params }) => toUserFile(await readable(caller, params.id)),
      {
        access: 'UserFileRead',
        params: IdParams,
        query: AdminQuery,
        response: UserFile,
        detail: { summary: 'Get a file\'s record', description: 'By GUID or ThingUUID.' },
      },
    )
    .patch(
      '/api/files/:id',
      async ({ caller, params, query, body }) => {
        const f = await writable(caller, params.id)
        if (!caller.admin && body.Global !== undefined && body.Global !== f.global) throw Errors.forbidden('only admins may change Global')
        await checkSharing(caller, body.GIDs, repos.groups, f.gids)
        let uid: number | undefined
        if (adminView(caller, query) && body.UID !== undefined && body.UID !== f.uid) {
          if (!(await repos.users.get(body.UID))) throw Errors.badRequest(`no user ${body.UID}`)
          uid = body.UID
        }
        const updated = await files.update(f.thingUuid, {
          uid,
          name: body.Name === null ? '' : itemName(body.Name, 'Name', f.name),
          description: body.Desc === null ? '' : body.Desc,
          global: caller.admin ? body.Global : undefined,
          gids: body.GIDs === undefined ? undefined : sharingList(body.GIDs),
          labels: body.Labels === undefined ? undefined : (itemLabels(body.Labels, f.labels) ?? []),
          updated: clock(),
        })
        if (!updated) throw Errors.notFound('file')
        return toUserFile(updated)
      },
      {
        access: 'UserFileWrite',
        params: IdParams,
        query: AdminQuery,
        body: PatchFileBody,
        response: UserFile,
        detail: { summary: 'Change a file\'s record', description: 'Name, Desc, GIDs and Labels (admins also Global; with `?admin=true` also UID); answers the record.' },
      },
    )
    .delete(
      '/api/files/:id',
      async ({ caller, params }) => {
        const f = await writable(caller, params.id)
        const deleted = await files.delete(f.thingUuid)
        if (!deleted) throw Errors.notFound('file')
        await discardBlob(blobs, deleted.blobKey, log)
        return {}
      },
      {
        access: 'UserFileWrite',
        params: IdParams,
        query: AdminQuery,
        response: Empty,
        detail: { summary: 'Delete a file', description: 'By GUID or ThingUUID.' },
      },
    )
    .post('/api/files/:id', ({ caller, params, request }) => replace(caller, params.id, request), replaceHooks())
    .put('/api/files/:id', ({ caller, params, request }) => replace(caller, params.id, request), replaceHooks())

  /** New blob key first, then the metadata points at it, then the old blob goes. */
  async function replace(caller: Caller, id: string, request: Request) {
    const f = await writable(caller, id)
    const key = newBlobKey(f.thingUuid)
    // The owner's quota: the new size minus the old counts, while streaming and again with the row.
    const quota = await quotas.of(f.uid)
    const { result } = await receive(request, key, quota, f.size)
    let swapped: Awaited<ReturnType<typeof files.setContents>>
    try {
      swapped = await files.setContents(f.thingUuid, { blobKey: key, size: result.size, type: result.type, updated: clock() }, quota?.limit)
    } catch (e) {
      await discardBlob(blobs, key, log)
      throw e instanceof QuotaExceeded ? quotaRefusal(e) : e
    }
    if (!swapped) {
      // Deleted while the upload ran: nothing points at the new blob.
      await discardBlob(blobs, key, log)
      throw Errors.notFound('file')
    }
    await discardBlob(blobs, swapped.oldKey, log)
    return toUserFile(swapped.row)
  }
}
