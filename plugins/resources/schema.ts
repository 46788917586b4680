import { t } from 'elysia'
import { formatTime } from '../../server/runtime/time'
import { JsonId } from '../groups/schema'
import type { ResourceRow } from './repo'
import { OptionalText } from '../../server/http/wire'

/** Resource metadata as the clients read it; Domain and Labels are always present (the clone answer needs them). */
export const ResourceMetadata = t.Object({
  UID: t.Integer(),
  GUID: t.String(),
  LastModified: t.String(),
  VersionNumber: t.Integer(),
  GroupACL: t.Array(t.Integer()),
  Global: t.Boolean(),
  ResourceName: t.String(),
  Description: t.String(),
  Size: t.Integer(),
  Hash: t.String(),
  Synced: t.Boolean(),
  Domain: t.Integer(),
  Labels: t.Array(t.String()),
})
export type ResourceMetadata = typeof ResourceMetadata.static

export const ResourceName = t.String({ minLength: 1, maxLength: 256, pattern: '\\S' })
const Description = t.String({ maxLength: 4096 })
/** Any positive GID, also of a group that does not exist yet (docs/api.md, sharing); null means not shared. */
const GroupACL = t.Union([t.Array(JsonId, { maxItems: 1024 }), t.Null()])

export const CreateResourceBody = t.Object({
  GroupACL: t.Optional(GroupACL),
  Global: t.Optional(t.Boolean()),
  ResourceName,
  Description: OptionalText(Description),
})

/**
 * The full metadata as read; only the user-settable fields are looked at, absent ones keep their value, and so
 * does an empty (or null) ResourceName.
 */
export const UpdateResourceBody = t.Object({
  GroupACL: t.Optional(GroupACL),
  Global: t.Optional(t.Boolean()),
  ResourceName: OptionalText(t.Union([t.Literal(''), ResourceName])),
  Description: OptionalText(Description),
})

export const CloneBody = t.Object({ Name: ResourceName })

export const GuidParams = t.Object({ guid: t.String({ maxLength: 64 }) })

export const AdminQuery = t.Object({ admin: t.Optional(t.String()) })

export const ContentTypeQuery = t.Object({ admin: t.Optional(t.String()), bytes: t.Optional(t.Numeric()) })

export const ContentTypeResult = t.Object({ ContentType: t.String(), Body: t.String() })

export function toMetadata(r: ResourceRow): ResourceMetadata {
  return {
    UID: r.uid,
    GUID: r.guid,
    LastModified: formatTime(r.modified),
    VersionNumber: r.version,
    GroupACL: r.gids,
    Global: r.global,
    ResourceName: r.name,
    Description: r.description,
    Size: r.size,
    Hash: r.hash,
    Synced: false,
    Domain: r.domain,
    Labels: r.labels,
  }
}
