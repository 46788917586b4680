// Who reaches an item that is owned by a user, shared with groups and maybe global (resources, user files,
// dashboards, library entries), and which one a GUID names when several items share it (docs/api.md "Sharing items with
// groups": owned by the caller, else shared with a group of the caller, else global).
import { Errors } from '../http/errors'
import type { Maybe } from '../store/maybe'

/** An item as the access rules see it; `shared`: the asking user is a member of a group in its sharing list. */
export interface Reachable {
  uid: number
  global: boolean
  shared: boolean
}

export interface Reacher {
  uid: number
  /** Reaches every item (an admin, where the area gives admins that reach). */
  all: boolean
}

/** How the caller reaches an item, best first: 0 owned, 1 through a group, 2 global, 3 by admin reach; undefined: not at all. */
export function reachRank(item: Reachable, who: Reacher): number | undefined {
  if (item.uid === who.uid) return 0
  if (item.shared) return 1
  if (item.global) return 2
  return who.all ? 3 : undefined
}

export function canReach(item: Reachable, who: Reacher): boolean {
  return reachRank(item, who) !== undefined
}

/**
 * The item a GUID names for this caller among every item carrying it: the best reached one (owned > group >
 * global > admin reach), ties to the first in the given order; undefined when the caller reaches none.
 */
export function pickReached<T extends Reachable>(candidates: readonly T[], who: Reacher): T | undefined {
  let best: T | undefined
  let bestRank = Number.POSITIVE_INFINITY
  for (const c of candidates) {
    const r = reachRank(c, who)
    if (r !== undefined && r < bestRank) (best = c), (bestRank = r)
  }
  return best
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
export const NIL_UUID = '00000000-0000-0000-0000-000000000000'

/** A GUID a client asks for, lower-cased; undefined when absent, empty or the nil UUID (Go clients send it for "unset"). */
export function wantedGuid(value: string | null | undefined): string | undefined | 'invalid' {
  if (value === undefined || value === null) return undefined
  const v = value.trim().toLowerCase()
  if (v === '' || v === NIL_UUID) return undefined
  return UUID.test(v) ? v : 'invalid'
}

/**
 * The owner a create request asks for: the caller when absent, 0 or the caller's own UID; another UID only for
 * an admin (403 otherwise) and only of an existing user (400 otherwise).
 */
export async function requestedOwner(
  caller: { uid: number; admin: boolean },
  uid: number | null | undefined,
  userExists: (uid: number) => Promise<boolean>,
): Promise<number> {
  if (!uid || uid === caller.uid) return caller.uid
  if (!caller.admin) throw Errors.forbidden('only admins may set another owner')
  if (!(await userExists(uid))) throw Errors.badRequest(`no user ${uid}`)
  return uid
}

/**
 * Refuses (403) a sharing list (GIDs, GroupACL) the caller may not set (docs/api.md "Sharing items with groups"): an
 * admin acting with a session may name any positive GID; anyone else, an admin's API token included, only groups they
 * belong to, so that nobody puts an item in front of a group they are not part of (a GUID opens the group's item before
 * a global one). GIDs the item already has (`kept`) may stay: a client sends the whole list back on every update.
 */
export async function checkSharing(
  caller: { uid: number; admin: boolean },
  gids: readonly number[] | null | undefined,
  groups: { groupsOf(uid: number): Maybe<readonly { gid: number }[]> },
  kept: readonly number[] = [],
): Promise<void> {
  if (caller.admin || !gids) return
  const had = new Set(kept)
  const added = gids.filter((g) => !had.has(g))
  if (added.length === 0) return
  const mine = new Set((await groups.groupsOf(caller.uid)).map((g) => g.gid))
  const foreign = added.find((g) => !mine.has(g))
  if (foreign !== undefined) throw Errors.forbidden(`you may share only with groups you belong to (not ${foreign})`)
}
