import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import type { GroupRow } from './repo'
import { OptionalText } from '../../server/http/wire'

/** GIDs and UIDs are int32 from 1 upward (docs/api.md). In paths: Elysia's t.Integer, which reads the digits of a segment. */
export const Id = t.Integer({ minimum: 1, maximum: 2147483647 })
/**
 * The same in JSON bodies: a JSON number only. Elysia's t.Integer would also take the string "5", and inside an
 * array turn "" into [] and "5" into [5] (found by the generated-input test), so bodies use TypeBox's own Integer.
 */
export const JsonId = Type.Integer({ minimum: 1, maximum: 2147483647 })
/** A UID in a JSON body where 0 means unset (Go clients send zero values), or null. */
export const JsonOptionalUid = Type.Union([Type.Integer({ minimum: 0, maximum: 2147483647 }), Type.Null()])

export const GroupDetails = t.Object({ GID: t.Integer(), Name: t.String(), Desc: t.String(), Synced: t.Boolean() })
export type GroupDetails = typeof GroupDetails.static

/** At least one character that is not white space. */
export const GroupName = t.String({ minLength: 1, maxLength: 256, pattern: '\\S' })
export const GroupDesc = t.String({ maxLength: 4096 })

export const CreateGroupBody = t.Object({ Name: GroupName, Desc: OptionalText(GroupDesc) })
/** Absent or empty-string fields keep their value (docs/api.md "Users and groups"). */
export const UpdateGroupBody = t.Object({ Name: OptionalText(t.Union([t.Literal(''), GroupName])), Desc: OptionalText(GroupDesc) })

export const GidParams = t.Object({ gid: Id })

export function toGroupDetails(g: GroupRow): GroupDetails {
  return { GID: g.gid, Name: g.name, Desc: g.description, Synced: false }
}
