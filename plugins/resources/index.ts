// Resources (docs/api.md "Resources and user files"): metadata in the store, contents in the blob store. Read: owner,
// members of a group in GroupACL, everyone for a global resource, admins. Write and delete: owner and admins. A caller
// who may not read gets 404; a reader who may not write gets 403. An admin's token acts as a normal user.
import { Elysia, t } from 'elysia'
import { type BlobStore, BlobTooLargeError, discardBlob, openBody } from '../../server/blob'
import { UUID, canReach, checkSharing } from '../../server/rules/sharing'
import { contents, sharingList } from '../../server/http/wire'
import type { Config } from '../../server/runtime/config'
import { Errors } from '../../server/http/errors'
import type { FreeSpaceFloor } from '../../server/runtime/disk-space'
import { QuotaExceeded, Quotas, quotaRefusal, quotaRefusalWhileStreaming } from '../../server/store/quota'
import { itemLabels, itemName } from '../../server/rules/names'
import type { Logger } from '../../server/runtime/log'
import { authGuard } from '../auth/guard'
import { Empty } from '../auth/schema'
import type { AuthService, Caller } from '../auth/service'
import { FilePart, MultipartError, UploadTooLargeError, multipartUpload, streamFilePart } from '../../server/upload/multipart'
import type { ResourceRow, ResourcesRepo } from './repo'
import {
  AdminQuery,
  CloneBody,
  ContentTypeQuery,
  ContentTypeResult,
  CreateResourceBody,
  GuidParams,
  ResourceMetadata,
  UpdateResourceBody,
  toMetadata,
} from './schema'
import { sniffContentType } from '../../server/upload/sniff'
import { area, refusals } from '../../server/http/openapi'
import type { GroupsRepo } from '../groups/repo'

/** contenttype: the clients' default, the least it reads, and our cap on what one call returns. */
const SNIFF_DEFAULT = 512
const SNIFF_MIN = 128
const SNIFF_MAX = 1024 * 1024
/** Room for the multipart framing around the file when Content-Length is checked against the resource limit. */
const MULTIPART_OVERHEAD = 64 * 1024

/** A fresh blob key for each version of a resource's contents. */
const newBlobKey = (guid: string) => `resources/${guid}/${crypto.randomUUID()}`


export interface ResourcesDeps {
  config: Config
  repos: { groups: GroupsRepo; resources: ResourcesRepo }
  blobs: BlobStore
  auth: AuthService
  log: Logger
  clock: () => number
  quotas: Quotas
  /** The free-space floor checked before contents are written (server/runtime/disk-space.ts). */
  space: FreeSpaceFloor
}

export function resourcesPlugin({ config, repos, blobs, auth, log, clock, quotas, space }: ResourcesDeps) {
  const { resources } = repos

  function parseGuid(raw: string): string {
    if (!UUID.test(raw)) throw Errors.badRequest('invalid resource GUID')
    return raw.toLowerCase()
  }

  /** Admins reach every resource (an admin's token acts as a normal user: `caller.admin` is false then). */
  async function canRead(caller: Caller, r: ResourceRow): Promise<boolean> {
    const shared = r.uid !== caller.uid && r.gids.length > 0 && (await resources.sharedWith(r.guid, caller.uid))
    return canReach({ ...r, shared }, { uid: caller.uid, all: caller.admin })
  }

  /** The resource when the caller may read it; 404 otherwise (also for one it may not even see). */
  async function readable(caller: Caller, rawGuid: string): Promise<ResourceRow> {
    const r = await resources.get(parseGuid(rawGuid))
    if (!r || !(await canRead(caller, r))) throw Errors.notFound('resource')
    return r
  }

  /** The resource when the caller may change it: 404 when it may not read it, 403 when it only reads. */
  async function writable(caller: Caller, rawGuid: string): Promise<ResourceRow> {
    const r = await readable(caller, rawGuid)
    if (!caller.admin && r.uid !== caller.uid) throw Errors.forbidden('only the owner or an admin may change this resource')
    return r
  }

  return new Elysia({ name: 'quarry-resources', detail: area('Resources') })
    .use(authGuard(auth))
    .get(
      '/api/resources',
      async ({ caller, query }) => {
        const rows = query.admin === 'true' && caller.admin ? await resources.listAll() : await resources.listVisible(caller.uid)
        return rows.map(toMetadata)
      },
      {
        access: 'ResourceRead',
        query: AdminQuery,
        response: t.Array(ResourceMetadata),
        detail: { summary: 'List the resources you can read', description: 'Own, group-shared and global ones; with `?admin=true` an admin gets every resource.' },
      },
    )
    .post(
      '/api/resources',
      async ({ caller, body }) => {
        if (body.Global && !caller.admin) throw Errors.forbidden('only admins may create global resources')
        await checkSharing(caller, body.GroupACL, repos.groups)
        const guid = crypto.randomUUID()
        await resources.create({
          guid,
          uid: caller.uid,
          name: itemName(body.ResourceName, 'ResourceName'),
          description: body.Description ?? '',
          global: body.Global ?? false,
          version: 0,
          size: 0,
          hash: '',
          blobKey: null,
          modified: clock(),
          domain: 0,
          labels: [],
          gids: sharingList(body.GroupACL),
        })
        return toMetadata((await resources.get(guid))!)
      },
      {
        access: 'ResourceWrite',
        body: CreateResourceBody,
        response: ResourceMetadata,
        detail: { summary: 'Create an empty resource', description: 'Upload its contents with PUT /api/resources/{guid}/raw. Only admins may set Global.' },
      },
    )
    .get('/api/resources/:guid', async ({ caller, params }) => toMetadata(await readable(caller, params.guid)), {
      access: 'ResourceRead',
      params: GuidParams,
      query: AdminQuery,
      response: ResourceMetadata,
      detail: { summary: 'Get a resource\'s metadata' },
    })
    .put(
      '/api/resources/:guid',
      async ({ caller, params, body }) => {
        const r = await writable(caller, params.guid)
        await checkSharing(caller, body.GroupACL, repos.groups, r.gids)
        // Regular users change GroupACL, ResourceName and Description; admins also Global; the rest is ignored.
        const updated = await resources.update(r.guid, {
          name: itemName(body.ResourceName || undefined, 'ResourceName', r.name),
          description: body.Description,
          global: caller.admin ? body.Global : undefined,
          gids: body.GroupACL === undefined ? undefined : sharingList(body.GroupACL),
          modified: clock(),
        })
        if (!updated) throw Errors.notFound('resource')
        return toMetadata(updated)
      },
      {
        access: 'ResourceWrite',
        params: GuidParams,
        query: AdminQuery,
        body: UpdateResourceBody,
        response: ResourceMetadata,
        detail: { summary: 'Change a resource\'s metadata', description: 'GroupACL, ResourceName and Description (admins also Global); other fields are ignored.' },
      },
    )
    .delete(
      '/api/resources/:guid',
      async ({ caller, params }) => {
        const r = await writable(caller, params.guid)
        const deleted = await resources.delete(r.guid)
        if (!deleted) throw Errors.notFound('resource')
        await discardBlob(blobs, deleted.blobKey, log)
        return {}
      },
      { access: 'ResourceWrite', params: GuidParams, query: AdminQuery, response: Empty, detail: { summary: 'Delete a resource' } },
    )
    .put(
      '/api/resources/:guid/raw',
      async ({ caller, params, request }) => {
        const r = await writable(caller, params.guid)
        const limit = config.maxResourceBytes
        const declared = Number(request.headers.get('content-length') ?? 0)
        if (declared > limit + MULTIPART_OVERHEAD) throw Errors.tooLarge(limit)
        // The owner's quota bounds the upload while it streams (new size minus old); the commit checks it again.
        const quota = await quotas.of(r.uid)
        const room = Quotas.room(quota, r.size)
        if (quota && declared > room + MULTIPART_OVERHEAD) throw quotaRefusalWhileStreaming(quota)
        await space.check(declared)
        const key = newBlobKey(r.guid)
        let stored: { size: number; sha1: string }
        try {
          stored = await streamFilePart(
            request,
            (stream) => blobs.put(key, stream, { maxBytes: Math.min(limit, room) }),
            () => blobs.delete(key),
            { maxBytes: limit },
          )
        } catch (e) {
          if (e instanceof UploadTooLargeError) throw Errors.tooLarge(limit)
          if (e instanceof BlobTooLargeError) throw quota && room < limit ? quotaRefusalWhileStreaming(quota) : Errors.tooLarge(limit)
          if (e instanceof MultipartError) throw Errors.badRequest(e.message)
          throw e
        }
        let swapped: Awaited<ReturnType<typeof resources.setContents>>
        try {
          swapped = await resources.setContents(r.guid, { blobKey: key, size: stored.size, hash: stored.sha1, modified: clock() }, quota?.limit)
        } catch (e) {
          await discardBlob(blobs, key, log)
          throw e instanceof QuotaExceeded ? quotaRefusal(e) : e
        }
        if (!swapped) {
          // Deleted while the upload ran: nothing points at the new blob.
          await discardBlob(blobs, key, log)
          throw Errors.notFound('resource')
        }
        await discardBlob(blobs, swapped.oldKey, log)
        return toMetadata(swapped.row)
      },
      {
        access: 'ResourceWrite',
        params: GuidParams,
        query: AdminQuery,
        parse: multipartUpload(t.Object({ file: FilePart('the new contents (other parts are ignored)') })),
        response: { 200: ResourceMetadata, ...refusals(507) },
        detail: { summary: 'Upload a resource\'s contents', description: 'A multipart form with one part named `file`; answers the updated metadata (size, hash, version).' },
      },
    )
    .get(
      '/api/resources/:guid/raw',
      async ({ caller, params }) => {
        const read = () => readable(caller, params.guid)
        const { row, body } = await openBody(blobs, await read(), read)
        return body ? contents(body, 'application/octet-stream', row.size) : contents(new Uint8Array(0), 'application/octet-stream', 0)
      },
      {
        access: { key: 'ResourceRead', download: true, cookie: true },
        params: GuidParams,
        query: AdminQuery,
        detail: { summary: 'Download a resource\'s contents' },
      },
    )
    .get(
      '/api/resources/:guid/contenttype',
      async ({ caller, params, query }) => {
        const r = await readable(caller, params.guid)
        const asked = query.bytes
        const n = asked === undefined || !Number.isFinite(asked) || asked < SNIFF_MIN ? SNIFF_DEFAULT : Math.min(Math.floor(asked), SNIFF_MAX)
        const bytes = r.blobKey && r.size > 0 ? await readPrefix(await blobs.get(r.blobKey, { start: 0, end: n - 1 }), n) : new Uint8Array(0)
        return { ContentType: sniffContentType(bytes), Body: Buffer.from(bytes).toString('base64') }
      },
      {
        access: 'ResourceRead',
        params: GuidParams,
        query: ContentTypeQuery,
        response: ContentTypeResult,
        detail: { summary: 'Get a resource\'s content type and first bytes', description: '`?bytes=N` (default 512; at least 128).' },
      },
    )
    .post(
      '/api/resources/:guid/clone',
      async ({ caller, params, body }) => {
        const source = await readable(caller, params.guid)
        // A clone is a full copy of the contents, owned by the caller: it counts against the caller's quota, and is
        // refused before anything is copied when it would not fit (checked again with the row).
        const quota = await quotas.of(caller.uid, caller.user)
        if (quota && source.size > 0 && quota.used + source.size > quota.limit) throw Errors.quotaExceeded(quota.limit, quota.used, source.size)
        if (source.size > 0) await space.check(source.size)
        const guid = crypto.randomUUID()
        const key = source.blobKey ? newBlobKey(guid) : null
        if (source.blobKey && key) await blobs.copy(source.blobKey, key)
        try {
          // The clone is the caller's own, unshared and not global; contents, size, hash and labels come along.
          await resources.create(
            {
              guid,
              uid: caller.uid,
              name: itemName(body.Name),
              description: source.description,
              global: false,
              version: 0,
              size: source.size,
              hash: source.hash,
              blobKey: key,
              modified: clock(),
              domain: source.domain,
              labels: source.labels,
              gids: [],
            },
            quota?.limit,
          )
        } catch (e) {
          await discardBlob(blobs, key, log)
          throw e instanceof QuotaExceeded ? quotaRefusal(e) : e
        }
        return toMetadata((await resources.get(guid))!)
      },
      {
        access: 'ResourceWrite',
        params: GuidParams,
        query: AdminQuery,
        body: CloneBody,
        response: { 200: ResourceMetadata, ...refusals(507) },
        detail: { summary: 'Copy a resource into a new one of yours' },
      },
    )
}

/** Reads at most `n` bytes of a stream, then lets go of it. */
async function readPrefix(stream: ReadableStream<Uint8Array>, n: number): Promise<Uint8Array> {
  const out = new Uint8Array(n)
  let size = 0
  const reader = stream.getReader()
  try {
    while (size < n) {
      const { done, value } = await reader.read()
      if (done) break
      const take = Math.min(value.byteLength, n - size)
      out.set(value.subarray(0, take), size)
      size += take
    }
  } finally {
    reader.cancel().catch(() => {})
  }
  return out.subarray(0, size)
}
