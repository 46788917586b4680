// Notifications (docs/api.md, "Notifications"), as the Go client (`client/notifications.go`) and the js-client
// (`src/functions/notifications`) call them. A notification goes to every user (broadcast: admins only), to one
// user, or to one group, and is listed to its recipients until it expires (then it is swept) and while it is not
// ignored (IgnoreUntil). Who may address whom:
// - a broadcast reaches every account, so only an admin (with a session) sends one;
// - a non-admin (and every token, even an admin's, which carries no admin rights) sends only to themselves and to
//   groups they are a member of: a group they belong to is one they already share items with (the sharing rule of
//   docs/security.md), while writing into a stranger's list would let any user push text, and links, at anyone;
// - an admin sends to any user or group.
// Each sender holds at most config.notificationsPerUser unexpired notifications, each of at most MAX_MESSAGE
// characters, so no caller can fill the store.
import { Elysia, t } from 'elysia'
import type { Config } from '../../server/runtime/config'
import { Errors } from '../../server/http/errors'
import { parseTime } from '../../server/runtime/time'
import { bareNumber } from '../../server/http/wire'
import { authGuard } from '../auth/guard'
import { Empty } from '../auth/schema'
import type { AuthService, Caller } from '../auth/service'
import type { NotificationChanges, NotificationRow, NotificationsRepo } from './repo'
import {
  CreateNotificationBody, ListQuery, NotificationParams, NotificationRecord, NotificationSet, UpdateNotificationBody, toRecord,
} from './schema'
import { area, refusals } from '../../server/http/openapi'
import type { UsersRepo } from '../users/repo'
import type { GroupsRepo } from '../groups/repo'

export interface NotificationsDeps {
  config: Config
  repos: { users: UsersRepo; groups: GroupsRepo; notifications: NotificationsRepo }
  auth: AuthService
  clock: () => number
}

type CreateBody = typeof CreateNotificationBody.static
type Target = { broadcast: boolean; uid: number; gid: number }

/** A wire time; unset (absent, null, "", the zero time) is 0. */
function timeOf(name: string, value: string | null | undefined): number {
  const ms = parseTime(value)
  if (ms === undefined) throw Errors.badRequest(`${name} must be an RFC 3339 time`)
  return ms
}

/**
 * The Go client's `after`: Go's layout "2006-01-02T15:04:05.999999999Z07" writes the offset as Z, ±hh or ±hh:mm.
 * The zero time (its first call) is no filter.
 */
function afterOf(value: string | undefined): number {
  if (value === undefined) return 0
  // A '+' sent unescaped in a query string arrives as a space.
  const normalized = value.replace(/ (\d{2}(?::\d{2})?)$/, '+$1').replace(/([+-]\d{2})$/, '$1:00')
  const ms = parseTime(normalized)
  if (ms === undefined) throw Errors.badRequest('after must be an RFC 3339 time')
  return Math.max(ms, 0)
}

/**
 * A link a GUI may put behind the message: an http(s) URL, or a path of this server. Anything else (javascript:,
 * data:, a protocol-relative //host) could run script or lead elsewhere from a trusted-looking place.
 */
function checkLink(link: string) {
  if (link === '') return
  if (link.startsWith('/') && !link.startsWith('//') && !link.startsWith('/\\') && !/[\u0000-\u001f\u007f\s]/.test(link)) return
  let url: URL | undefined
  try {
    url = new URL(link)
  } catch {
    url = undefined
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password || /[\u0000-\u001f\u007f\s]/.test(link))
    throw Errors.badRequest('Link must be an http(s) URL or a path starting with /')
}

/**
 * A message is text for people: no control characters but tab and line breaks. NUL in particular: PostgreSQL's
 * TEXT cannot hold it, so refusing it here keeps both stores answering alike.
 */
function checkMessage(msg: string) {
  if (!/\S/.test(msg)) throw Errors.badRequest('Msg must not be blank')
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(msg)) throw Errors.badRequest('Msg must not contain control characters')
}

export function notificationsPlugin({ config, repos, auth, clock }: NotificationsDeps) {
  const { notifications } = repos

  async function send(caller: Caller, body: CreateBody, target: Target, set: { headers: Record<string, unknown> }) {
    const now = clock()
    let expires = timeOf('Expires', body.Expires)
    // The Go client: "If expiration time is invalid, the webserver will instead set a default expiration."
    if (expires === 0) expires = now + config.notificationLifetimeMs
    else if (expires <= now) throw Errors.badRequest('Expires must be in the future')
    const ignoreUntil = timeOf('IgnoreUntil', body.IgnoreUntil)
    checkMessage(body.Msg)
    const link = body.Link ?? ''
    checkLink(link)
    const id = await notifications.create(
      {
        sender: caller.uid,
        ...target,
        type: body.Type ?? 0,
        level: body.Level ?? '',
        link,
        msg: body.Msg,
        sent: now,
        expires,
        ignoreUntil,
      },
      config.notificationsPerUser,
      now,
    )
    if (id === undefined)
      throw Errors.tooManyRequests(
        `a sender may have at most ${config.notificationsPerUser} unexpired notifications (QUARRY_NOTIFICATIONS_PER_USER); delete some or let them expire`,
      )
    return bareNumber(set, id)
  }

  /** The one target of POST /api/notifications/targeted, and whether the caller may address it. */
  async function targetOf(caller: Caller, body: CreateBody): Promise<Target> {
    if (body.Broadcast === true) throw Errors.badRequest('a broadcast is sent with POST /api/notifications/broadcast')
    const uid = body.UID ?? 0
    const gid = body.GID ?? 0
    if ((uid > 0) === (gid > 0)) throw Errors.badRequest('name exactly one target: a UID or a GID')
    if (uid > 0) {
      if (uid !== caller.uid) {
        if (!caller.admin) throw Errors.forbidden('only admins may send a notification to another user')
        if (!(await repos.users.get(uid))) throw Errors.notFound('user')
      }
      return { broadcast: false, uid, gid: 0 }
    }
    if (!caller.admin) {
      if (!(await repos.groups.isMember(caller.uid, gid))) throw Errors.forbidden('a notification may go only to a group of your own')
    } else if (!(await repos.groups.get(gid))) throw Errors.notFound('group')
    return { broadcast: false, uid: 0, gid }
  }

  /**
   * The notification `id` as the caller may act on it: 'all' for its sender and admins, 'recipient' for the one
   * user it is addressed to (who may snooze, expire or delete it, not rewrite it). 404 when the caller does not
   * see it (or it expired), 403 when they see it but it is not theirs (a broadcast, a group's).
   */
  async function reachable(caller: Caller, id: number): Promise<{ n: NotificationRow; right: 'all' | 'recipient' }> {
    const n = await notifications.get(id)
    if (!n || n.expires <= clock()) throw Errors.notFound('notification')
    if (caller.admin || n.sender === caller.uid) return { n, right: 'all' }
    if (n.uid === caller.uid) return { n, right: 'recipient' }
    const sees = n.broadcast || (n.gid > 0 && (await repos.groups.isMember(caller.uid, n.gid)))
    if (!sees) throw Errors.notFound('notification')
    throw Errors.forbidden('only its sender and admins may change or delete this notification')
  }

  return new Elysia({ name: 'quarry-notifications', detail: area('Notifications') })
    .use(authGuard(auth))
    .get(
      '/api/notifications',
      async ({ caller, query }) => {
        const after = afterOf(query.after)
        const now = clock()
        const rows = query.admin === 'true' && caller.admin ? await notifications.listAll(now, after) : await notifications.listFor(caller.uid, now, after)
        const set: Record<string, typeof NotificationRecord.static> = {}
        for (const n of rows) set[String(n.id)] = toRecord(n)
        return set
      },
      {
        access: 'NotificationRead',
        query: ListQuery,
        response: NotificationSet,
        detail: {
          summary: 'Get your notifications',
          description:
            "Keyed by id (`{}` when none): broadcast, to you, or to your groups; unexpired and not ignored. `?after=<time>`: sent after it; `?admin=true` by an admin: everyone's, ignored ones too.",
        },
      },
    )
    .post('/api/notifications/broadcast', async ({ caller, body, set }) => {
      if (body.Broadcast === false || (body.UID ?? 0) > 0 || (body.GID ?? 0) > 0)
        throw Errors.badRequest('a broadcast names no UID or GID (use POST /api/notifications/targeted)')
      return send(caller, body, { broadcast: true, uid: 0, gid: 0 }, set)
    }, {
      access: 'admin',
      body: CreateNotificationBody,
      response: { 200: t.Integer(), ...refusals(429) },
      detail: { summary: 'Broadcast a notification to every user', description: 'Answers its id.' },
    })
    .post('/api/notifications/targeted/self', async ({ caller, body, set }) => {
      if (body.Broadcast === true || (body.GID ?? 0) > 0 || ((body.UID ?? 0) > 0 && body.UID !== caller.uid))
        throw Errors.badRequest('a notification to yourself names no other target')
      return send(caller, body, { broadcast: false, uid: caller.uid, gid: 0 }, set)
    }, {
      access: 'NotificationWrite',
      body: CreateNotificationBody,
      response: { 200: t.Integer(), ...refusals(429) },
      detail: { summary: 'Send a notification to yourself', description: 'Answers its id.' },
    })
    .post('/api/notifications/targeted', async ({ caller, body, set }) => send(caller, body, await targetOf(caller, body), set), {
      access: 'NotificationWrite',
      body: CreateNotificationBody,
      response: { 200: t.Integer(), ...refusals(404, 429) },
      detail: { summary: 'Send a notification to a user or a group', description: 'UID: yourself, or anyone for an admin; GID: a group of yours, or any for an admin. Answers its id.' },
    })
    .put(
      '/api/notifications/:id',
      async ({ caller, params, body }) => {
        const { n, right } = await reachable(caller, params.id)
        if ((body.UID && body.UID !== n.uid) || (body.GID && body.GID !== n.gid) || (body.Broadcast === true && !n.broadcast))
          throw Errors.badRequest('the target of a notification cannot be changed: delete it and send a new one')
        const changes: NotificationChanges = {}
        if (body.Msg) (checkMessage(body.Msg), (changes.msg = body.Msg))
        if (body.Type !== undefined) changes.type = body.Type
        if (body.Level !== undefined) changes.level = body.Level
        if (body.Link !== undefined) (checkLink(body.Link), (changes.link = body.Link))
        if (body.Expires !== undefined) {
          const expires = timeOf('Expires', body.Expires)
          // A time already past is taken: the notification then expires at once (a way to dismiss it).
          if (expires !== 0) changes.expires = expires
        }
        if (body.IgnoreUntil !== undefined) changes.ignoreUntil = timeOf('IgnoreUntil', body.IgnoreUntil)
        if (right === 'recipient') {
          const rewrites =
            (changes.msg !== undefined && changes.msg !== n.msg) ||
            (changes.type !== undefined && changes.type !== n.type) ||
            (changes.level !== undefined && changes.level !== n.level) ||
            (changes.link !== undefined && changes.link !== n.link)
          if (rewrites) throw Errors.forbidden('the recipient may change only Expires and IgnoreUntil of a notification')
        }
        await notifications.update(n.id, changes)
        return toRecord({ ...n, ...changes })
      },
      {
        access: 'NotificationWrite',
        params: NotificationParams,
        body: UpdateNotificationBody,
        response: NotificationRecord,
        detail: { summary: 'Change a notification', description: 'Its sender or an admin; its one recipient may change Expires and IgnoreUntil only. Answers it.' },
      },
    )
    .delete(
      '/api/notifications/:id',
      async ({ caller, params }) => {
        const { n } = await reachable(caller, params.id)
        await notifications.delete(n.id)
        return {}
      },
      {
        access: 'NotificationWrite',
        params: NotificationParams,
        response: Empty,
        detail: { summary: 'Delete a notification', description: 'Its sender, its one recipient, or an admin.' },
      },
    )
}
