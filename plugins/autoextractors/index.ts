// Auto-extractors (gravwell/wiki configuration/autoextractors.md; the Go client's EXTRACTORS_* routes, the TypeScript
// client's functions/auto-extractors): definitions that tell the `ax` module how to extract the fields of a tag.
//
// Routes: GET /api/autoextractors (the definitions the caller reads: own, shared with a group of theirs, global;
// every definition for an admin with ?admin=true) · POST (create: answers the new UUID as a JSON string) · PUT (the
// body's UUID names the definition; answers it) · GET|DELETE /api/autoextractors/:id · GET .../engines (the
// modules a definition may name) · POST .../test (the syntax check) · POST .../upload (a TOML definition file in the
// multipart part `extraction`; answers the UUIDs written) · GET .../download?id=... (the TOML file of those).
//
// Rules, as the other shared items (docs/api.md "Sharing items with groups"):
// - Read: owner, members of a group in GIDs, everyone for a global definition, admins. Change and delete: the owner
//   and admins. Admins reach every definition on the item routes without ?admin=true: the TypeScript client lists
//   with ?admin=true and then deletes and changes without it. Others get 404 for what they may not read, 403 for
//   what they read but may not change. Only admins set Global or another owner; GIDs as checkSharing says.
// - A definition has a module from GET .../engines, at least one valid tag (Tag and Tags together, no repeats) and
//   params; 400 otherwise, nothing stored. It is not compiled when stored, as on the platform (the clients store
//   definitions whose arguments are checked only at search time), except a `regex` definition, whose pattern must
//   compile within the query compile budget: `ax` compiles definitions when a search starts, and a pattern that
//   takes seconds to compile must not get that far. The syntax check compiles any definition as a search would.
// - Several definitions may cover one tag (the clients create them so); `ax` uses, per tag, the search owner's own,
//   else one shared with a group of the owner, else a global one, the most recently changed first (extractorsFor).
// - One user owns at most MAX_PER_USER definitions (each search loads those it reaches).
// - Upload: every definition of the file is checked before any is written; one with the name of one of the
//   caller's own definitions replaces it (re-uploading a file updates its definitions), the others are created.
import { Elysia, type Static, t } from 'elysia'
import { QueryError } from '../../engine/errors'
import type { AutoExtractorDefinition, ModuleDef } from '../../engine/module'
import { compileExtractor, extractorCall, extractorModules } from '../../engine/modules/ax'
import { TAG_NAME } from '../../engine/parse'
import { ApiError, Errors } from '../../server/http/errors'
import { downloadHeaders } from '../../server/http/headers'
import { itemLabels, itemName } from '../../server/rules/names'
import { area, refusals } from '../../server/http/openapi'
import { type Reacher, UUID, canReach, checkSharing, reachRank, requestedOwner } from '../../server/rules/sharing'
import { FilePart, multipartUpload } from '../../server/upload/multipart'
import { rawJson } from '../../server/http/raw-json'
import { sharingList } from '../../server/http/wire'
import { authGuard } from '../auth/guard'
import { Empty } from '../auth/schema'
import type { AuthService, Caller } from '../auth/service'
import { DefinitionFileError, type FileDefinition, parseDefinitionFile, writeDefinitionFile } from './file'
import { MAX_SAMPLE, type Suggestion, generateSuggestions } from './generate'
import type { AutoExtractorFor, AutoExtractorRow, AutoExtractorsRepo } from './repo'
import {
  AdminQuery,
  AutoExtractorBody,
  AutoExtractorRecord,
  DownloadQuery,
  GenerateRequest,
  GenerateResponse,
  IdParams,
  MAX_ARGS,
  MAX_PARAMS,
  MAX_TAGS,
  SyntaxCheck,
  SyntaxRefused,
  toRecord,
} from './schema'
import { MAX_DESC, MAX_NAME } from '../files/schema'
import type { UsersRepo } from '../users/repo'
import type { GroupsRepo } from '../groups/repo'

/**
 * Definitions one user may own: each search of theirs loads every definition it reaches, so their number is bounded
 * (a create or upload past it is refused with 400).
 */
export const MAX_PER_USER = 1000

/** The largest definition file an upload takes. */
export const MAX_UPLOAD_BYTES = 1024 * 1024

/** The definition fields a request gives (JSON body or file), before they are checked. */
interface Given {
  tags: string[]
  module: string
  params: string
  args: string
}

export interface AutoExtractorsDeps {
  repos: { users: UsersRepo; groups: GroupsRepo; autoextractors: AutoExtractorsRepo }
  auth: AuthService
  clock: () => number
  modules: readonly ModuleDef[]
  /** Compiles a query as a search launch does (regular expressions on a worker, within the compile budget); throws QueryError. */
  compile: (src: string) => Promise<unknown>
}

export function autoExtractorsPlugin({ repos, auth, clock, modules, compile }: AutoExtractorsDeps) {
  const repo = repos.autoextractors
  const engines = extractorModules(modules)
  const adminView = (caller: Caller, query: { admin?: string }) => caller.admin && query.admin === 'true'
  const reacher = (caller: Caller): Reacher => ({ uid: caller.uid, all: caller.admin })
  const mayChange = (caller: Caller, a: AutoExtractorRow) => caller.admin || a.uid === caller.uid
  const userExists = async (uid: number) => (await repos.users.get(uid)) !== undefined

  /** The definition a UUID names for the caller: 400 for no UUID, 404 when missing or out of the caller's reach. */
  async function reached(caller: Caller, rawId: string | undefined): Promise<AutoExtractorFor> {
    if (!rawId || !UUID.test(rawId)) throw Errors.badRequest('invalid auto-extractor id: expected a UUID')
    const a = await repo.get(rawId.toLowerCase(), caller.uid)
    if (!a || !canReach(a, reacher(caller))) throw Errors.notFound('auto-extractor')
    return a
  }
  async function changeable(caller: Caller, rawId: string | undefined): Promise<AutoExtractorFor> {
    const a = await reached(caller, rawId)
    if (!mayChange(caller, a)) throw Errors.forbidden('only the owner, or an admin, may change this auto-extractor')
    return a
  }

  /** Checks a definition's module, tags, params and args (400 naming what is wrong), without compiling it. */
  function checkShape(g: Given, at: string): void {
    if (g.module === '') throw Errors.badRequest(`${at}Module is missing`)
    if (!engines.includes(g.module)) throw Errors.badRequest(`${at}${JSON.stringify(g.module)} cannot be an auto-extractor module (one of ${engines.join(', ')})`)
    if (g.tags.length === 0) throw Errors.badRequest(`${at}Tag is missing`)
    if (g.tags.length > MAX_TAGS) throw Errors.badRequest(`${at}more than ${MAX_TAGS} tags`)
    const seen = new Set<string>()
    for (const tag of g.tags) {
      if (!TAG_NAME.test(tag)) throw Errors.badRequest(`${at}invalid tag name ${JSON.stringify(tag)}`)
      if (seen.has(tag)) throw Errors.badRequest(`${at}tag ${tag} is named twice`)
      seen.add(tag)
    }
    if (g.params.trim() === '') throw Errors.badRequest(`${at}Params is missing`)
    if (g.params.length > MAX_PARAMS) throw Errors.badRequest(`${at}Params exceeds ${MAX_PARAMS} characters`)
    if (g.args.length > MAX_ARGS) throw Errors.badRequest(`${at}Args exceeds ${MAX_ARGS} characters`)
  }

  /** A definition as it may be stored: its shape checked, and a regex definition compiled (see the header). */
  async function checked(g: Given, where = ''): Promise<Given> {
    const at = where ? `${where}: ` : ''
    checkShape(g, at)
    if (g.module === 'regex') {
      const error = await syntaxError(g)
      if (error) throw Errors.badRequest(`${at}${error}`)
    }
    return g
  }

  /** The error compiling the definition as a search would, or undefined when it compiles. */
  async function syntaxError(g: Given): Promise<string | undefined> {
    const tag = g.tags[0]!
    try {
      await compile(`tag=${tag} ${extractorCall(g)}`)
      compileExtractor(tag, g)
      return undefined
    } catch (e) {
      if (e instanceof QueryError) return `parse error for extractor on tag ${tag}: ${e.reason}`
      throw e
    }
  }

  /** The tags a body gives: Tag first, then Tags; absent ones keep those of `current`. */
  function bodyTags(body: AutoExtractorBody, current: readonly string[] = []): string[] {
    const first = body.Tag !== undefined ? body.Tag : (current[0] ?? '')
    const rest = body.Tags !== undefined ? (body.Tags ?? []) : current.slice(1)
    return [first, ...rest].filter((tag) => tag !== '')
  }

  /** Refuses (400) `adding` more definitions of `uid` when they would pass MAX_PER_USER. */
  async function checkRoom(uid: number, adding: number): Promise<void> {
    const owned = (await repo.listReachable(uid)).filter((a) => a.uid === uid).length
    if (owned + adding > MAX_PER_USER)
      throw Errors.badRequest(`the owner has ${owned} auto-extractors; one user may have at most ${MAX_PER_USER}: delete some first`)
  }

  /** Whether another definition of the caller (not `except`) covers one of these tags. */
  async function tagExists(caller: Caller, tags: readonly string[], except?: string): Promise<boolean> {
    const own = (await repo.listReachable(caller.uid)).filter((a) => a.uid === caller.uid && a.uuid !== except)
    return own.some((a) => a.tags.some((tag) => tags.includes(tag)))
  }

  function newRow(caller: Caller, uid: number, g: Given, extra: { name: string; description: string; labels: string[]; global: boolean; gids: number[] }): AutoExtractorRow {
    return { uuid: crypto.randomUUID(), uid, ...extra, tags: g.tags, module: g.module, params: g.params, args: g.args, updated: clock() }
  }

  return new Elysia({ name: 'quarry-autoextractors', detail: area('Auto-extractors') })
    .use(authGuard(auth))
    .get(
      '/api/autoextractors',
      async ({ caller, query }) => (adminView(caller, query) ? await repo.listAll() : await repo.listReachable(caller.uid)).map(toRecord),
      {
        access: 'ExtractorRead',
        query: AdminQuery,
        response: t.Array(AutoExtractorRecord),
        detail: { summary: 'List the auto-extractors you read', description: 'Your own, those shared with a group of yours and global ones; with `?admin=true` an admin gets every definition.' },
      },
    )
    .get('/api/autoextractors/engines', () => engines, {
      access: 'ExtractorRead',
      response: t.Array(t.String()),
      detail: { summary: 'The modules an auto-extractor may use', description: 'The extraction modules of the query language.' },
    })
    .post(
      '/api/autoextractors',
      async ({ caller, body, set }) => {
        const uid = await requestedOwner(caller, body.UID, userExists)
        if (body.Global && !caller.admin) throw Errors.forbidden('only admins may set Global')
        await checkSharing(caller, body.GIDs, repos.groups)
        const g = await checked({ tags: bodyTags(body), module: body.Module ?? '', params: body.Params ?? '', args: body.Args ?? '' })
        const row = newRow(caller, uid, g, {
          name: itemName(body.Name) ?? '',
          description: body.Desc ?? '',
          labels: itemLabels(body.Labels) ?? [],
          global: body.Global ?? false,
          gids: sharingList(body.GIDs),
        })
        await checkRoom(uid, 1)
        await repo.create(row)
        // a JSON string, as the clients decode it (Elysia would send a returned string as text)
        return rawJson(set, JSON.stringify(row.uuid))
      },
      {
        access: 'ExtractorWrite',
        body: AutoExtractorBody,
        response: { 200: t.String({ description: 'the new definition\'s UUID' }) },
        detail: { summary: 'Create an auto-extractor', description: 'Module, Tag (or Tags) and Params are required. Answers the UUID. Only admins set Global or UID.' },
      },
    )
    .put(
      '/api/autoextractors',
      async ({ caller, body }) => {
        const a = await changeable(caller, body.UUID)
        if (typeof body.Global === 'boolean' && body.Global !== a.global && !caller.admin) throw Errors.forbidden('only admins may set Global')
        await checkSharing(caller, body.GIDs, repos.groups, a.gids)
        let uid: number | undefined
        if (body.UID && body.UID !== a.uid) {
          if (!caller.admin) throw Errors.forbidden('only admins may set another owner')
          if (!(await userExists(body.UID))) throw Errors.badRequest(`no user ${body.UID}`)
          uid = body.UID
        }
        const g = await checked({
          tags: bodyTags(body, a.tags),
          module: body.Module ?? a.module,
          params: body.Params ?? a.params,
          args: body.Args ?? a.args,
        })
        const updated = await repo.update(a.uuid, {
          uid,
          name: body.Name === undefined ? undefined : (itemName(body.Name, 'Name', a.name) ?? ''),
          description: body.Desc,
          labels: body.Labels === undefined ? undefined : (itemLabels(body.Labels, a.labels) ?? []),
          global: caller.admin && typeof body.Global === 'boolean' ? body.Global : undefined,
          gids: body.GIDs === undefined ? undefined : sharingList(body.GIDs),
          tags: g.tags,
          module: g.module,
          params: g.params,
          args: g.args,
          updated: clock(),
        })
        if (!updated) throw Errors.notFound('auto-extractor')
        return toRecord(updated)
      },
      {
        access: 'ExtractorWrite',
        body: AutoExtractorBody,
        response: { 200: AutoExtractorRecord, ...refusals(404) },
        detail: { summary: 'Change an auto-extractor', description: 'The body\'s UUID names it; absent fields keep their value. Its owner or an admin. Answers the definition.' },
      },
    )
    .post(
      '/api/autoextractors/test',
      async ({ caller, body, status }) => {
        const g = { tags: bodyTags(body), module: body.Module ?? '', params: body.Params ?? '', args: body.Args ?? '' }
        const exists = g.tags.length > 0 && (await tagExists(caller, g.tags, body.UUID?.toLowerCase()))
        let error: string | undefined
        try {
          checkShape(g, '')
          error = await syntaxError(g)
        } catch (e) {
          if (!(e instanceof ApiError) || e.status !== 400) throw e
          error = e.message
        }
        return error === undefined ? { TagExists: exists } : status(400, { TagExists: exists, Error: error })
      },
      {
        access: 'ExtractorRead',
        body: AutoExtractorBody,
        response: { 200: SyntaxCheck, 400: SyntaxRefused },
        detail: {
          summary: 'Check an auto-extractor\'s syntax',
          description: 'Compiles the definition as a search would. `TagExists`: another definition of yours covers one of its tags. A definition that does not compile answers 400 with `Error`.',
        },
      },
    )
    .get(
      '/api/autoextractors/download',
      async ({ caller, request, set }) => {
        const url = new URL(request.url)
        const ids = url.searchParams.getAll('id').flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '')
        const defs = ids.length > 0 ? await Promise.all(ids.map((id) => reached(caller, id))) : await repo.listReachable(caller.uid)
        Object.assign(set.headers, downloadHeaders('text/plain; charset=utf-8', 'autoextractors.toml'))
        return writeDefinitionFile(defs.map((a) => ({ tags: a.tags, name: a.name, desc: a.description, module: a.module, params: a.params, args: a.args })))
      },
      {
        access: 'ExtractorRead',
        query: DownloadQuery,
        response: { 200: t.String({ description: 'a TOML definition file' }), ...refusals(404) },
        detail: { summary: 'Download auto-extractors as a definition file', description: '`id` (repeated) names the definitions; without it every one you read. TOML, one `[[extraction]]` table each.' },
      },
    )
    .post(
      '/api/autoextractors/upload',
      async ({ caller, request }) => {
        const defs = await receiveFile(request)
        const own = (await repo.listReachable(caller.uid)).filter((a) => a.uid === caller.uid)
        const planned: { replace?: AutoExtractorRow; given: Given; def: FileDefinition }[] = []
        for (const [i, d] of defs.entries()) {
          const where = `definition ${i + 1}${d.name ? ` (${d.name})` : ''}`
          if (d.name.length > MAX_NAME) throw Errors.badRequest(`${where}: name exceeds ${MAX_NAME} characters`)
          if (d.desc.length > MAX_DESC) throw Errors.badRequest(`${where}: desc exceeds ${MAX_DESC} characters`)
          itemName(d.name, `${where}: name`)
          const given = await checked({ tags: d.tags, module: d.module, params: d.params, args: d.args }, where)
          planned.push({ given, def: d, replace: d.name === '' ? undefined : own.find((a) => a.name === d.name) })
        }
        await checkRoom(caller.uid, planned.filter((p) => !p.replace).length)
        const ids: string[] = []
        for (const p of planned) {
          if (p.replace) {
            const fields = { tags: p.given.tags, module: p.given.module, params: p.given.params, args: p.given.args, description: p.def.desc }
            if (await repo.update(p.replace.uuid, { ...fields, updated: clock() })) {
              ids.push(p.replace.uuid)
              continue
            }
          }
          const row = newRow(caller, caller.uid, p.given, { name: itemName(p.def.name), description: p.def.desc, labels: [], global: false, gids: [] })
          await repo.create(row)
          ids.push(row.uuid)
        }
        return ids
      },
      {
        access: 'ExtractorWrite',
        parse: multipartUpload(
          t.Object({
            extraction: t.Optional(FilePart('the TOML definition file (the part the clients send)')),
            file: t.Optional(FilePart('the TOML definition file, when there is no part named extraction')),
          }),
        ),
        response: { 200: t.Array(t.String()) },
        detail: {
          summary: 'Upload a definition file',
          description: 'A TOML file of `[[extraction]]` tables in the multipart part `extraction`. One named like one of your definitions replaces it; the others are created. Answers their UUIDs.',
        },
      },
    )
    .post(
      '/api/explore/generate',
      async ({ body }) => {
        if (!TAG_NAME.test(body.Tag)) throw Errors.badRequest("Tag must be 1 to 128 letters, digits, '.', '_' or '-'")
        const found = generateSuggestions(body.Tag, body.Entries, decodeBase64)
        // only definitions that compile as a search would compile them are suggested
        for (const [module, list] of Object.entries(found)) {
          const kept: Suggestion[] = []
          for (const g of list) {
            const error = await syntaxError({ tags: [body.Tag], module: g.Extractor.Module, params: g.Extractor.Params, args: g.Extractor.Args })
            if (error === undefined) kept.push(g)
          }
          if (kept.length > 0) found[module] = kept
          else delete found[module]
        }
        // the schema's recursive elements type the same shape (Suggestion) less precisely
        return found as unknown as Static<typeof GenerateResponse>
      },
      {
        access: 'ExtractorRead',
        body: GenerateRequest,
        response: { 200: GenerateResponse },
        detail: {
          summary: 'Suggest auto-extractors for sample entries',
          description:
            `The data explorer's generation: \`{Tag, Entries}\` (at most ${MAX_SAMPLE} entries, Data in base64) answers, per module that reads them ` +
            '(json, kv), a definition naming the fields found, its Confidence (0 to 10), the entries it read and the elements of each (Explore).',
        },
      },
    )
    .get('/api/autoextractors/:id', async ({ caller, params }) => toRecord(await reached(caller, params.id)), {
      access: 'ExtractorRead',
      params: IdParams,
      query: AdminQuery,
      response: { 200: AutoExtractorRecord },
      detail: { summary: 'Get one auto-extractor' },
    })
    .delete(
      '/api/autoextractors/:id',
      async ({ caller, params }) => {
        const a = await changeable(caller, params.id)
        if (!(await repo.delete(a.uuid))) throw Errors.notFound('auto-extractor')
        return {}
      },
      { access: 'ExtractorWrite', params: IdParams, query: AdminQuery, response: Empty, detail: { summary: 'Delete an auto-extractor', description: 'Its owner or an admin.' } },
    )
}

/**
 * The definition file of an upload: the multipart part `extraction` (or `file`), at most MAX_UPLOAD_BYTES. A body
 * without a Content-Type whose first line is a multipart boundary is read as that form: the TypeScript client's Node
 * build sends its `form-data` body through node-fetch, which Bun replaces by its own fetch, and that one drops the
 * type naming the boundary (as for POST /api/ingest/lines).
 */
async function receiveFile(request: Request): Promise<FileDefinition[]> {
  const declared = request.headers.get('content-type') ?? ''
  if (declared !== '' && !/^multipart\/form-data\s*;/i.test(declared)) throw Errors.badRequest('expected a multipart/form-data body with a part named extraction')
  const bytes = await readBounded(request, MAX_UPLOAD_BYTES + 64 * 1024)
  const type = declared || boundaryType(bytes)
  if (type === undefined) throw Errors.badRequest('expected a multipart/form-data body with a part named extraction')
  const form = await new Response(bytes, { headers: { 'content-type': type } }).formData().catch(() => {
    throw Errors.badRequest('malformed multipart form')
  })
  const part = form.get('extraction') ?? form.get('file')
  if (part === null) throw Errors.badRequest('the form has no part named extraction')
  const text = typeof part === 'string' ? part : await part.text()
  if (text.length > MAX_UPLOAD_BYTES) throw Errors.badRequest(`the definition file exceeds ${MAX_UPLOAD_BYTES} bytes`)
  try {
    return parseDefinitionFile(text)
  } catch (e) {
    if (e instanceof DefinitionFileError) throw Errors.badRequest(e.message)
    throw e
  }
}

const fromBase64 = (Uint8Array as unknown as { fromBase64(s: string): Uint8Array }).fromBase64

/** The bytes of standard base64 text, or undefined when it is not that. */
function decodeBase64(s: string): Uint8Array | undefined {
  try {
    return fromBase64(s)
  } catch {
    return undefined
  }
}

/** The multipart type a body's first line names (`--boundary` then CRLF, RFC 2046), if it is one. */
function boundaryType(bytes: Uint8Array): string | undefined {
  const head = Buffer.from(bytes.subarray(0, 74)).toString('latin1')
  const boundary = /^--([0-9A-Za-z'()+_,\-./:=?]{1,70})\r\n/.exec(head)?.[1]
  return boundary === undefined ? undefined : `multipart/form-data; boundary=${boundary}`
}

/** The request body, refused (400) as soon as it passes `max` bytes: never more than that is held. */
async function readBounded(request: Request, max: number): Promise<Uint8Array> {
  if (Number(request.headers.get('content-length') ?? 0) > max) throw Errors.badRequest(`the upload exceeds ${max} bytes`)
  if (!request.body) return new Uint8Array()
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = request.body.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > max) {
      await reader.cancel().catch(() => undefined)
      throw Errors.badRequest(`the upload exceeds ${max} bytes`)
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks)
}

/**
 * The definition ax applies per tag for a search of `uid` over `tags` (['*']: every tag): the owner's own, else one
 * shared with a group of the owner, else a global one; among equals the most recently changed.
 */
export async function extractorsFor(repo: AutoExtractorsRepo, uid: number, tags: readonly string[]): Promise<Map<string, AutoExtractorDefinition>> {
  const all = tags.includes('*')
  const best = new Map<string, { rank: number; updated: number; def: AutoExtractorDefinition }>()
  for (const a of await repo.listReachable(uid)) {
    const rank = reachRank(a, { uid, all: false })
    if (rank === undefined) continue
    for (const tag of a.tags) {
      if (!all && !tags.includes(tag)) continue
      const had = best.get(tag)
      if (had && (had.rank < rank || (had.rank === rank && had.updated >= a.updated))) continue
      best.set(tag, { rank, updated: a.updated, def: { tag, module: a.module, params: a.params, args: a.args } })
    }
  }
  return new Map([...best].map(([tag, b]) => [tag, b.def]))
}
