// Users: accounts, locking, passwords, admin status, default search group, preferences, memberships and
// session lists (docs/api.md "Users and groups").
import { Elysia, t } from 'elysia'
import { rawBody } from '../../server/http/body'
import { Errors, conflictOnDuplicate } from '../../server/http/errors'
import { checkJsonShape } from '../../server/http/json-shape'
import { checkName, checkUserName, nameSkeleton } from '../../server/rules/names'
import { formatTime } from '../../server/runtime/time'
import { JSON_TYPE, bareNumber } from '../../server/http/wire'
import { type Maybe, then, valueNow } from '../../server/store/maybe'
import type { Config } from '../../server/runtime/config'
import { initialPasswordPath, removeInitialPassword } from '../../server/runtime/initial-password'
import type { Logger } from '../../server/runtime/log'
import { authGuard, selfOrAdmin } from '../auth/guard'
import { Empty, SessionList } from '../auth/schema'
import { type AuthService, type Caller, sessionOf } from '../auth/service'
import { GroupDetails, toGroupDetails } from '../groups/schema'
import type { UserChanges, UserRow, UsersRepo } from './repo'
import {
  AdminStatus, CreateUserBody, GroupsBody, PasswordBody, PreferenceRecord, SearchGroupBody, UidGidParams, UidParams,
  UpdateUserBody, UserDetails, toPreferenceRecord, toUserDetails,
} from './schema'
import { area, rawAnswer, refusals } from '../../server/http/openapi'
import { rawJson } from '../../server/http/raw-json'
import type { GroupsRepo } from '../groups/repo'
import type { SessionsRepo } from '../auth/repo'

/** The account that can never be renamed, deleted, demoted or locked (docs/api.md "Users and groups"). */
export const PRIMARY_ADMIN = 'admin'
const PREFS = 'prefs'
const USER_TAKEN = 'user name is taken'

export interface UsersDeps {
  config: Config
  repos: { users: UsersRepo; groups: GroupsRepo; sessions: SessionsRepo }
  auth: AuthService
  clock: () => number
  log: Logger
  /** Called after a user was deleted, for what other areas keep outside the store (their searches). */
  onUserDeleted?: (uid: number) => Promise<void>
}

export function usersPlugin({ config, repos, auth, clock, log, onUserDeleted }: UsersDeps) {
  const { users, groups, sessions } = repos

  /** The account's details with its groups: at once on a synchronous store (server/store/maybe.ts). */
  function details(user: UserRow): Maybe<UserDetails> {
    return then(groups.groupsOf(user.uid), (memberOf) => toUserDetails(user, memberOf))
  }

  /** The account `uid` when the caller may act on it: 403 for someone else's, 404 for none. */
  async function ownOrAdmin(caller: Caller, uid: number): Promise<UserRow> {
    if (!selfOrAdmin(caller, uid)) throw Errors.forbidden('you may only act on your own account')
    const user = uid === caller.uid ? caller.user : await users.get(uid)
    if (!user) throw Errors.notFound('user')
    return user
  }

  async function existing(uid: number): Promise<UserRow> {
    const user = await users.get(uid)
    if (!user) throw Errors.notFound('user')
    return user
  }

  /**
   * A user name as stored (server/rules/names.ts: NFC, visible, one script); 409 when it passes for another account's
   * name (the same confusable skeleton), as an exact duplicate does.
   */
  async function newUsername(name: string, exceptUid?: number): Promise<string> {
    const nfc = checkUserName(name)
    const skeleton = nameSkeleton(nfc)
    const twin = (await users.list()).find((u) => u.uid !== exceptUid && nameSkeleton(u.username) === skeleton)
    if (twin) throw Errors.conflict(`${USER_TAKEN}: it looks like the user name ${JSON.stringify(twin.username)}`)
    return nfc
  }

  function checkPassword(password: string) {
    if (password.length < config.minPasswordLength)
      throw Errors.badRequest(`password must be at least ${config.minPasswordLength} characters`)
  }

  return new Elysia({ name: 'quarry-users', detail: area('Users') })
    .use(authGuard(auth))
    // The most frequent request of all (every client asks it first and often): its JSON is written here, without
    // Elysia's per-answer schema check (a copy that strips undeclared members, then a type check: about 1 µs of a
    // 15 µs request, bench/README.md). toUserDetails builds exactly the declared members, and every answer of the test
    // suite is checked closed against UserDetails (test/documented.ts), so the check belongs in the tests.
    .get(
      '/api/info/whoami',
      auth.answersAtOnce
        ? ({ caller, set }) => {
            // the plain form (server/store/maybe.ts valueNow): `body` is assigned, not returned as a call
            let body
            body = rawJson(set, JSON.stringify(valueNow(details(caller.user))))
            return body
          }
        : async ({ caller, set }) => rawJson(set, JSON.stringify(await details(caller.user))),
      { access: 'self', detail: { summary: 'Get your own account', ...rawAnswer(UserDetails) } },
    )
    .get(
      '/api/users',
      async () => {
        const memberships = await groups.allMemberships()
        return (await users.list()).map((u) => toUserDetails(u, memberships.get(u.uid) ?? []))
      },
      { access: 'ListUsers', response: t.Array(UserDetails), detail: { summary: 'List every account' } },
    )
    .post(
      '/api/users',
      async ({ body, set }) => {
        const name = checkName(body.Name, 'Name')
        const email = checkName(body.Email, 'Email')
        const username = await newUsername(body.User)
        checkPassword(body.Pass)
        const passwordHash = await auth.hashPassword(body.Pass)
        const uid = await conflictOnDuplicate(USER_TAKEN, () => users.create({ username, name, email, passwordHash, admin: body.Admin }, clock()))
        return bareNumber(set, uid)
      },
      { access: 'admin', body: CreateUserBody, response: { 200: t.Integer(), ...refusals(409) }, detail: { summary: 'Create an account', description: 'All of User, Pass, Name, Email and Admin are required. Answers the new UID as a bare number; a taken user name answers 409.' } },
    )
    .get('/api/users/preferences', async () => (await users.listPreferences()).map(toPreferenceRecord), {
      access: 'admin',
      response: t.Array(PreferenceRecord),
      detail: { summary: 'List every user\'s stored preferences', description: 'Each record holds its Data base64-encoded.' },
    })
    .get('/api/users/:id', async ({ caller, params }) => details(await ownOrAdmin(caller, params.id)), {
      access: 'ListUsers',
      params: UidParams,
      response: UserDetails,
      detail: { summary: 'Get one account', description: 'Admins may read any account; others only their own.' },
    })
    .put(
      '/api/users/:id',
      async ({ caller, params, body }) => {
        const target = await ownOrAdmin(caller, params.id)
        const changes: UserChanges = {}
        // what is sent back unchanged is not checked again (a name stored before these rules stays usable)
        const username = body.User && body.User !== target.username ? checkUserName(body.User) : undefined
        if (username && username !== target.username) {
          if (target.username === PRIMARY_ADMIN) throw Errors.forbidden('the admin account cannot be renamed')
          changes.username = await newUsername(username, target.uid)
        }
        if (body.Name && body.Name !== target.name) changes.name = checkName(body.Name, 'Name')
        if (body.Email && body.Email !== target.email) changes.email = checkName(body.Email, 'Email')
        if (body.Admin !== undefined && body.Admin !== target.admin) {
          if (!caller.admin) throw Errors.adminOnly()
          if (!body.Admin && target.username === PRIMARY_ADMIN) throw Errors.forbidden('the admin account cannot be demoted')
          changes.admin = body.Admin
        }
        if (body.Locked !== undefined && body.Locked !== target.locked) {
          if (!caller.admin) throw Errors.adminOnly()
          if (body.Locked) refuseLock(caller, target)
          changes.locked = body.Locked
        }
        await auth.endingAccessOf(target.uid, () => conflictOnDuplicate(USER_TAKEN, () => users.update(target.uid, changes)), changes.locked === true)
        return {}
      },
      { access: 'session', params: UidParams, body: UpdateUserBody, response: { 200: Empty, ...refusals(409) }, detail: { summary: 'Change an account', description: 'Changes User, Name and Email (admins also Admin and Locked); absent or empty fields keep their value. Others than admins change only their own account.' } },
    )
    .delete(
      '/api/users/:id',
      async ({ caller, params }) => {
        const target = await existing(params.id)
        if (target.uid === caller.uid) throw Errors.forbidden('you cannot delete your own account')
        if (target.username === PRIMARY_ADMIN) throw Errors.forbidden('the admin account cannot be deleted')
        await auth.endingAccessOf(target.uid, async () => void (await users.delete(target.uid)))
        await onUserDeleted?.(target.uid)
        return {}
      },
      { access: 'admin', params: UidParams, response: Empty, detail: { summary: 'Delete an account', description: 'Deletes the user with their sessions, memberships and preferences. Nobody deletes their own account; the admin account cannot be deleted.' } },
    )
    .put(
      '/api/users/:id/lock',
      async ({ caller, params }) => {
        const target = await existing(params.id)
        refuseLock(caller, target)
        await auth.endingAccessOf(target.uid, () => users.update(target.uid, { locked: true }))
        return {}
      },
      { access: 'admin', params: UidParams, response: Empty, detail: { summary: 'Lock an account', description: 'Ends its sessions at once and refuses new logins; locking a locked account succeeds.' } },
    )
    .delete(
      '/api/users/:id/lock',
      async ({ params }) => {
        await users.update((await existing(params.id)).uid, { locked: false })
        return {}
      },
      { access: 'admin', params: UidParams, response: Empty, detail: { summary: 'Unlock an account', description: 'Unlocking an unlocked account succeeds.' } },
    )
    .put(
      '/api/users/:id/pwd',
      async ({ caller, params, body }) => {
        const target = await ownOrAdmin(caller, params.id)
        // Changing one's own password always needs the current one, admins included (docs/api.md "Users and groups").
        if (target.uid === caller.uid) await auth.confirmPassword(target, body.OrigPass)
        checkPassword(body.NewPass)
        await users.setPasswordHash(target.uid, await auth.hashPassword(body.NewPass))
        // The generated first password is of no use any more: its file goes (here; other replicas at their start).
        if (target.username === PRIMARY_ADMIN && removeInitialPassword(config.dataDir)) log.info('removed the file of the generated admin password: the password was changed', { passwordFile: initialPasswordPath(config.dataDir) })
        // A new password ends the account's other sessions; whoever changed their own keeps theirs.
        await auth.closeAllSessions(target.uid, target.uid === caller.uid ? sessionOf(caller).id : undefined)
        return {}
      },
      { access: 'session', params: UidParams, body: PasswordBody, response: { 200: Empty, ...refusals(429) }, detail: { summary: 'Change a password', description: 'OrigPass is required for your own password (admins too), not when an admin changes someone else\'s. Ends the account\'s other sessions.' } },
    )
    .get(
      '/api/users/:id/admin',
      async ({ caller, params }) => {
        const target = await ownOrAdmin(caller, params.id)
        return { UID: target.uid, Admin: target.admin }
      },
      { access: 'ListUsers', params: UidParams, response: AdminStatus, detail: { summary: 'Get whether a user is an admin' } },
    )
    .put(
      '/api/users/:id/admin',
      async ({ params }) => {
        const target = await existing(params.id)
        await users.update(target.uid, { admin: true })
        return { UID: target.uid, Admin: true }
      },
      { access: 'admin', params: UidParams, response: AdminStatus, detail: { summary: 'Make a user an admin' } },
    )
    .delete(
      '/api/users/:id/admin',
      async ({ params }) => {
        const target = await existing(params.id)
        if (target.username === PRIMARY_ADMIN) throw Errors.forbidden('the admin account cannot be demoted')
        await users.update(target.uid, { admin: false })
        return {}
      },
      { access: 'admin', params: UidParams, response: Empty, detail: { summary: 'Take away a user\'s admin status', description: 'The admin account cannot be demoted.' } },
    )
    .get('/api/users/:id/searchgroup', async ({ caller, params, set }) => bareNumber(set, (await ownOrAdmin(caller, params.id)).defaultGid ?? 0), {
      access: 'ListUsers',
      params: UidParams,
      response: t.Integer(),
      detail: { summary: 'Get a user\'s default search group', description: 'A bare GID, 0 when unset.' },
    })
    .put(
      '/api/users/:id/searchgroup',
      async ({ caller, params, body }) => {
        const target = await ownOrAdmin(caller, params.id)
        // docs/api.md "Users and groups": an admin names any positive GID, also of a group that does not exist yet or
        // that the user is not in (clients set it before they create the group); anyone else only a group they belong
        // to, so that nobody shares their searches with a group they are not part of. `null` clears it (the js-client).
        if (body.GID !== null && !caller.admin && !(await groups.isMember(caller.uid, body.GID)))
          throw Errors.forbidden(`you are not a member of group ${body.GID}`)
        await users.setDefaultGid(target.uid, body.GID)
        return {}
      },
      {
        access: 'SetSearchGroup',
        params: UidParams,
        body: SearchGroupBody,
        response: Empty,
        detail: { summary: 'Set a user\'s default search group', description: 'Admins may set any positive GID; others only a group they belong to. `GID` null clears it.' },
      },
    )
    .delete(
      '/api/users/:id/searchgroup',
      async ({ caller, params }) => {
        await users.setDefaultGid((await ownOrAdmin(caller, params.id)).uid, null)
        return {}
      },
      { access: 'SetSearchGroup', params: UidParams, response: Empty, detail: { summary: 'Clear a user\'s default search group' } },
    )
    .get(
      '/api/users/:id/preferences',
      async ({ caller, params }) => {
        const target = await ownOrAdmin(caller, params.id)
        const prefs = await users.getPreference(target.uid, PREFS)
        // Stored verbatim and answered as stored (docs/api.md "Users and groups"), so large numbers and key order
        // survive.
        return new Response(prefs?.data ?? 'null', { headers: { 'content-type': JSON_TYPE } })
      },
      { access: 'session', params: UidParams, detail: { summary: 'Get a user\'s preferences', description: 'The JSON as stored, `null` when none.' } },
    )
    .put(
      '/api/users/:id/preferences',
      async ({ caller, params, request }) => {
        const target = await ownOrAdmin(caller, params.id)
        // The body parser keeps no raw text for multipart bodies, so rawBody() answers '' for them: refuse
        // such a body here rather than mistake it for an empty one (which clears the preferences).
        const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
        if (type === 'multipart/form-data') throw Errors.badRequest('preferences must be valid JSON')
        const text = rawBody(request)
        if (text.trim() === '') {
          await users.deletePreference(target.uid, PREFS)
          return {}
        }
        try {
          JSON.parse(text)
        } catch {
          throw Errors.badRequest('preferences must be valid JSON')
        }
        checkJsonShape(text, 'preferences')
        await users.setPreference(target.uid, PREFS, text, clock())
        return {}
      },
      { access: 'session', params: UidParams, body: t.Unknown(), response: Empty, detail: { summary: 'Store a user\'s preferences', description: 'Any valid JSON, stored as sent; only that user or an admin.' } },
    )
    .delete(
      '/api/users/:id/preferences',
      async ({ caller, params }) => {
        await users.deletePreference((await ownOrAdmin(caller, params.id)).uid, PREFS)
        return {}
      },
      { access: 'session', params: UidParams, response: Empty, detail: { summary: 'Clear a user\'s preferences' } },
    )
    .get('/api/users/:id/group', async ({ caller, params }) => (await groups.groupsOf((await ownOrAdmin(caller, params.id)).uid)).map(toGroupDetails), {
      access: 'ListGroups',
      params: UidParams,
      response: t.Array(GroupDetails),
      detail: { summary: 'List the groups of a user', description: 'The user themselves or an admin.' },
    })
    .post(
      '/api/users/:id/group',
      async ({ params, body }) => {
        const target = await existing(params.id)
        for (const gid of body.GIDs) if (!(await groups.get(gid))) throw Errors.notFound(`group ${gid}`)
        await groups.addMember(target.uid, [...new Set(body.GIDs)])
        return {}
      },
      { access: 'admin', params: UidParams, body: GroupsBody, response: Empty, detail: { summary: 'Add a user to groups', description: 'Adds the listed GIDs to the user\'s memberships.' } },
    )
    .delete(
      '/api/users/:id/group/:gid',
      async ({ params }) => {
        const target = await existing(params.id)
        if (!(await groups.get(params.gid))) throw Errors.notFound('group')
        await groups.removeMember(target.uid, params.gid)
        return {}
      },
      { access: 'admin', params: UidGidParams, response: Empty, detail: { summary: 'Remove a user from a group', description: 'Succeeds also when the user was not a member.' } },
    )
    .get(
      '/api/users/:id/sessions',
      async ({ caller, params }) => {
        const target = await ownOrAdmin(caller, params.id)
        const list = (await sessions.listForUser(target.uid)).filter((s) => auth.isLive(s, clock()))
        return {
          UID: target.uid,
          User: target.username,
          Sessions: list.map((s) => ({ Origin: s.origin, LastHit: formatTime(s.lastHit), TempSession: s.temp, Synced: false })),
        }
      },
      { access: 'session', params: UidParams, response: SessionList, detail: { summary: 'List a user\'s sessions', description: 'Your own; admins any user\'s.' } },
    )
}

/** Nobody locks themselves out, and the admin account stays reachable. */
function refuseLock(caller: Caller, target: UserRow) {
  if (target.uid === caller.uid) throw Errors.forbidden('you cannot lock your own account')
  if (target.username === PRIMARY_ADMIN) throw Errors.forbidden('the admin account cannot be locked')
}
