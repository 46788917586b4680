// Notifications on the wire, as the published clients send and read them: the Go client's `types.Notification`
// (UID, GID, Sender, Type, Broadcast, Sent, Expires, IgnoreUntil, Msg, Origin, Level and Link with omitempty) and
// the js-client's RawBroadcastedNotification / RawTargetedNotification / RawCreatable* / RawUpdatableNotification.
import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { formatTime } from '../../server/runtime/time'
import { OptionalText } from '../../server/http/wire'
import type { NotificationRow } from './repo'

/** The Go client's Origin is a uuid.UUID ("which device sent it", used by indexers only): Quarry's is the nil UUID. */
export const NIL_UUID = '00000000-0000-0000-0000-000000000000'

/** Longest message, in characters (at most 4 bytes each): with the per-user count, what bounds one sender's rows. */
export const MAX_MESSAGE = 4096
export const MAX_LINK = 2048

export const NotificationRecord = t.Object({
  UID: t.Integer(),
  GID: t.Integer(),
  Sender: t.Integer(),
  Type: t.Integer(),
  Broadcast: t.Boolean(),
  Sent: t.String(),
  Expires: t.String(),
  IgnoreUntil: t.String(),
  Msg: t.String(),
  Origin: t.String(),
  /** Absent when empty (Go's omitempty). */
  Level: t.Optional(t.String()),
  Link: t.Optional(t.String()),
})

/** GET /api/notifications: keyed by the notification's id (a decimal integer; Go reads map[uint64]Notification). */
export const NotificationSet = t.Record(t.String({ pattern: '^[0-9]+$' }), NotificationRecord)

// Numbers and flags of bodies are TypeBox's own: Elysia's t.Integer and t.Boolean would also take "5" and "true".
/** The Go client's int32 ids; 0 means "none" on the wire. */
const Id32 = Type.Integer({ minimum: 0, maximum: 2_147_483_647 })
/** Go's uint32 `Type` (the js-client's customID). */
const TypeNumber = Type.Integer({ minimum: 0, maximum: 4_294_967_295 })
/** The js-client's BroadcastedLevel words and Go's free keyword alike: short and plain. */
const Level = t.String({ maxLength: 32, pattern: '^[A-Za-z0-9_-]*$' })
const Message = t.String({ maxLength: MAX_MESSAGE })

/**
 * Fields both bodies take. `Sent`, `Sender` and `Origin` are the server's facts: taken (the clients send whole
 * records back, the Go client its zero values) and ignored. Absent, null, "" and the zero time are all "unset".
 */
const Common = {
  Type: t.Optional(TypeNumber),
  Expires: OptionalText(t.String({ maxLength: 64 })),
  IgnoreUntil: OptionalText(t.String({ maxLength: 64 })),
  Level: OptionalText(Level),
  Link: OptionalText(t.String({ maxLength: MAX_LINK })),
  Sent: OptionalText(t.String({ maxLength: 64 })),
  Sender: t.Optional(Type.Integer({ minimum: -2_147_483_648, maximum: 2_147_483_647 })),
  Origin: OptionalText(t.String({ maxLength: 64 })),
}

export const CreateNotificationBody = t.Object({
  ...Common,
  Msg: t.String({ minLength: 1, maxLength: MAX_MESSAGE, pattern: '\\S' }),
  UID: t.Optional(Id32),
  GID: t.Optional(Id32),
  Broadcast: t.Optional(Type.Boolean()),
})

/**
 * Absent fields keep their value; so do an empty (or null) message and an unset expiry, since the Go client sends
 * its zero values for what it does not set. An unset IgnoreUntil clears it; null or "" Level or Link clears them.
 * UID, GID and Broadcast may come back as they are (or as Go's zero values), never changed: the target is fixed.
 */
export const UpdateNotificationBody = t.Object({
  ...Common,
  Msg: OptionalText(Message),
  UID: t.Optional(Id32),
  GID: t.Optional(Id32),
  Broadcast: t.Optional(Type.Boolean()),
})

/** In paths: Elysia's t.Integer, which reads the digits of a segment. */
export const NotificationParams = t.Object({ id: t.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) })

export const ListQuery = t.Object({
  /** The Go client's last-read time: only notifications sent after it. */
  after: t.Optional(t.String({ maxLength: 64 })),
  /** `true` by an admin: every user's notifications, ignored ones included (the Go client's AllNotifications). */
  admin: t.Optional(t.String({ maxLength: 16 })),
})

export function toRecord(n: NotificationRow): typeof NotificationRecord.static {
  return {
    UID: n.uid,
    GID: n.gid,
    Sender: n.sender,
    Type: n.type,
    Broadcast: n.broadcast,
    Sent: formatTime(n.sent),
    Expires: formatTime(n.expires),
    IgnoreUntil: formatTime(n.ignoreUntil),
    Msg: n.msg,
    Origin: NIL_UUID,
    ...(n.level ? { Level: n.level } : {}),
    ...(n.link ? { Link: n.link } : {}),
  }
}
