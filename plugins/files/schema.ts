import { OptionalText, sharingList } from '../../server/http/wire'
import { FilePart } from '../../server/upload/multipart'
import { t } from 'elysia'
import { Errors } from '../../server/http/errors'
import { checkJsonShape } from '../../server/http/json-shape'
import { UUID } from '../../server/rules/sharing'
import { formatTime } from '../../server/runtime/time'
import { JsonId } from '../groups/schema'
import type { FileRow } from './repo'

/** The user file record (docs/api.md "Resources and user files"): GIDs and Labels always arrays, strings never null. */
export const UserFile = t.Object({
  GUID: t.String(),
  ThingUUID: t.String(),
  UID: t.Integer(),
  GIDs: t.Array(t.Integer()),
  Global: t.Boolean(),
  Size: t.Integer(),
  Type: t.String(),
  Name: t.String(),
  Desc: t.String(),
  Labels: t.Array(t.String()),
  Updated: t.String(),
})
export type UserFile = typeof UserFile.static

export const MAX_NAME = 256
export const MAX_DESC = 4096
export const MAX_LABELS = 256
export const MAX_GIDS = 1024

const Name = t.String({ maxLength: MAX_NAME })
const Desc = t.String({ maxLength: MAX_DESC })
/** A sharing list: any positive GID, also of a group that does not exist yet (docs/api.md, sharing); null means none. */
export const GIDs = t.Union([t.Array(JsonId, { maxItems: MAX_GIDS }), t.Null()])
export const Labels = t.Union([t.Array(t.String({ maxLength: MAX_NAME }), { maxItems: MAX_LABELS }), t.Null()])

/** PATCH: a structure like a listing entry; only these fields are looked at, absent ones keep their value. */
export const PatchFileBody = t.Object({
  UID: t.Optional(JsonId),
  GIDs: t.Optional(GIDs),
  Global: t.Optional(t.Boolean()),
  Name: OptionalText(Name),
  Desc: OptionalText(Desc),
  Labels: t.Optional(Labels),
})

export const IdParams = t.Object({ id: t.String({ maxLength: 64 }) })

export const AdminQuery = t.Object({ admin: t.Optional(t.String()) })

export function toUserFile(f: FileRow): UserFile {
  return {
    GUID: f.guid,
    ThingUUID: f.thingUuid,
    UID: f.uid,
    GIDs: f.gids,
    Global: f.global,
    Size: f.size,
    Type: f.type,
    Name: f.name,
    Desc: f.description,
    Labels: f.labels,
    Updated: formatTime(f.updated),
  }
}

/**
 * The multipart form of POST /api/files, as documented: the simple form (`name`, `desc`, `guid`) or the detailed
 * one (`meta`); parseCreateFields reads and checks the fields.
 */
export const CreateFileForm = t.Object({
  file: FilePart('the contents; its type is sniffed from the first bytes'),
  name: t.Optional(t.String({ maxLength: MAX_NAME, description: 'simple form: the name (default: the file part\'s filename)' })),
  desc: t.Optional(t.String({ maxLength: MAX_DESC, description: 'simple form: the description' })),
  guid: t.Optional(t.String({ description: 'a GUID to use (a value that is no UUID is replaced by a new one)' })),
  meta: t.Optional(
    t.String({ description: 'detailed form: a JSON object with UID, GIDs, Global, Name, Desc, Labels (UID of another user and Global true: admins only); when present, name and desc are not read' }),
  ),
})

/** What the multipart fields of POST /api/files ask for, checked; absent fields are undefined. */
export interface CreateFields {
  guid?: string
  uid?: number
  gids: number[]
  global: boolean
  name?: string
  desc: string
  labels: string[]
}


/** A sorted list without repeats. */
const isId = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 2147483647

/**
 * The fields of the simple form (`name`, `desc`, `guid`) or the detailed form (`meta`, a JSON object with UID,
 * GIDs, Global, Name, Desc, Labels; unknown keys ignored). Throws 400 for anything malformed. A `guid` that is
 * not a valid UUID is dropped (one is generated).
 */
export function parseCreateFields(fields: Record<string, string>): CreateFields {
  const out: CreateFields = { gids: [], global: false, desc: '', labels: [] }
  const guid = fields.guid ?? fields.GUID
  if (guid !== undefined && UUID.test(guid.trim())) out.guid = guid.trim().toLowerCase()
  if (fields.meta !== undefined) {
    let meta: unknown
    try {
      meta = JSON.parse(fields.meta)
    } catch {
      throw Errors.badRequest('the meta field is not valid JSON')
    }
    checkJsonShape(fields.meta, 'the meta field')
    if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) throw Errors.badRequest('the meta field must be a JSON object')
    const m = meta as Record<string, unknown>
    if (m.UID !== undefined && m.UID !== null && m.UID !== 0) {
      if (!isId(m.UID)) throw Errors.badRequest('invalid meta property UID: wrong type or value')
      out.uid = m.UID
    }
    if (m.GIDs !== undefined && m.GIDs !== null) {
      if (!Array.isArray(m.GIDs) || m.GIDs.length > MAX_GIDS || !m.GIDs.every(isId)) throw Errors.badRequest('invalid meta property GIDs: expected positive group ids')
      out.gids = sharingList(m.GIDs)
    }
    if (m.Global !== undefined && m.Global !== null) {
      if (typeof m.Global !== 'boolean') throw Errors.badRequest('invalid meta property Global: expected a boolean')
      out.global = m.Global
    }
    if (m.Name !== undefined && m.Name !== null) {
      if (typeof m.Name !== 'string' || m.Name.length > MAX_NAME) throw Errors.badRequest('invalid meta property Name: expected a string')
      out.name = m.Name
    }
    if (m.Desc !== undefined && m.Desc !== null) {
      if (typeof m.Desc !== 'string' || m.Desc.length > MAX_DESC) throw Errors.badRequest('invalid meta property Desc: expected a string')
      out.desc = m.Desc
    }
    if (m.Labels !== undefined && m.Labels !== null) {
      if (!Array.isArray(m.Labels) || m.Labels.length > MAX_LABELS || !m.Labels.every((l) => typeof l === 'string' && l.length <= MAX_NAME))
        throw Errors.badRequest('invalid meta property Labels: expected an array of strings')
      out.labels = m.Labels as string[]
    }
    if (typeof m.GUID === 'string' && out.guid === undefined && UUID.test(m.GUID)) out.guid = m.GUID.toLowerCase()
    return out
  }
  if (fields.name !== undefined) {
    if (fields.name.length > MAX_NAME) throw Errors.badRequest(`the name field exceeds ${MAX_NAME} characters`)
    out.name = fields.name
  }
  if (fields.desc !== undefined) {
    if (fields.desc.length > MAX_DESC) throw Errors.badRequest(`the desc field exceeds ${MAX_DESC} characters`)
    out.desc = fields.desc
  }
  return out
}
