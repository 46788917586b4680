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

/**
 * A download answer: the blob store's body with its type and length. `Content-Disposition: inline` is set because
 * Bun otherwise adds `filename="<the blob's file name>"` for a disk blob sent as a file, which would show the
 * store's internal key to the caller; `inline` is what a response without the header means anyway.
 */
export function contents(body: Blob | ReadableStream<Uint8Array> | Uint8Array, type: string, size: number): Response {
  return new Response(body, { headers: { 'content-type': type, 'content-length': String(size), 'content-disposition': 'inline' } })
}
