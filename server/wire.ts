// Small pieces of the wire format of decisions §1 that handlers apply themselves.

export const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * Answers a bare JSON number (a new UID, GID or ID) with a JSON content type, which Elysia would
 * otherwise send as text. Done per route rather than in a global hook, which would cost every request.
 */
export function bareNumber(set: { headers: Record<string, unknown> }, value: number): number {
  set.headers['content-type'] = JSON_TYPE
  return value
}

/** A sharing list (GIDs, GroupACL) as stored and answered: each GID once, ascending. */
export function sharingList(gids: readonly number[] | null | undefined): number[] {
  return [...new Set(gids ?? [])].sort((a, b) => a - b)
}
