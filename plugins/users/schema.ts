import { t } from 'elysia'
import { formatTime } from '../../server/runtime/time'
import { GroupDetails, Id, JsonId, toGroupDetails } from '../groups/schema'
import type { GroupRow } from '../groups/repo'
import type { PreferenceRow, UserRow } from './repo'
import { OptionalText } from '../../server/http/wire'

export const UserDetails = t.Object({
  UID: t.Integer(),
  User: t.String(),
  Name: t.String(),
  Email: t.String(),
  Admin: t.Boolean(),
  Locked: t.Boolean(),
  /** Omitted when unset (docs/api.md "Users and groups"). */
  DefaultGID: t.Optional(t.Integer()),
  TS: t.String(),
  Synced: t.Boolean(),
  Groups: t.Array(GroupDetails),
})
export type UserDetails = typeof UserDetails.static

export const Username = t.String({ minLength: 1, maxLength: 128, pattern: '^[^\\s]+$' })
export const RealName = t.String({ maxLength: 256 })
export const Email = t.String({ maxLength: 256, pattern: '^$|^[^\\s@]+@[^\\s@]+$' })
export const Password = t.String({ maxLength: 1024 })

export const CreateUserBody = t.Object({
  User: Username,
  Pass: t.String({ minLength: 1, maxLength: 1024 }),
  Name: t.String({ minLength: 1, maxLength: 256 }),
  Email: t.String({ minLength: 1, maxLength: 256, pattern: '^[^\\s@]+@[^\\s@]+$' }),
  Admin: t.Boolean(),
})

/** Empty strings and absent fields are ignored (docs/api.md "Users and groups"), hence no minLength here. */
export const UpdateUserBody = t.Object({
  User: OptionalText(t.Union([t.Literal(''), Username])),
  Name: OptionalText(RealName),
  Email: OptionalText(Email),
  Admin: t.Optional(t.Boolean()),
  Locked: t.Optional(t.Boolean()),
})

export const PasswordBody = t.Object({ OrigPass: OptionalText(Password), NewPass: t.String({ minLength: 1, maxLength: 1024 }) })

export const AdminStatus = t.Object({ UID: t.Integer(), Admin: t.Boolean() })

/** `null` clears the default search group, as DELETE does (the js-client sends it that way). */
export const SearchGroupBody = t.Object({ GID: t.Union([JsonId, t.Null()]) })

export const GroupsBody = t.Object({ GIDs: t.Array(JsonId, { maxItems: 10000 }) })

export const PreferenceRecord = t.Object({ Data: t.String(), Name: t.String(), Synced: t.Boolean(), UID: t.Integer(), Updated: t.String() })

export const UidParams = t.Object({ id: Id })
export const UidGidParams = t.Object({ id: Id, gid: Id })

export function toUserDetails(u: UserRow, groups: GroupRow[]): UserDetails {
  return {
    UID: u.uid,
    User: u.username,
    Name: u.name,
    Email: u.email,
    Admin: u.admin,
    Locked: u.locked,
    ...(u.defaultGid ? { DefaultGID: u.defaultGid } : {}),
    TS: formatTime(u.lastActive),
    Synced: false,
    Groups: groups.map(toGroupDetails),
  }
}

export function toPreferenceRecord(p: PreferenceRow) {
  return { Data: Buffer.from(p.data).toString('base64'), Name: p.name, Synced: false, UID: p.uid, Updated: formatTime(p.updated) }
}
