// Small pieces of the wire format of decisions §1 that handlers apply themselves.
import type { TLiteral, TString, TUnion } from '@sinclair/typebox'
import { t } from 'elysia'

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

/**
 * An optional string of a request body that also takes `null`, which the handler sees as `""` (decisions §1:
 * clients send null when they have nothing, for example the js-client's token description). Every optional
 * string field of every body schema is built with it, so the rule holds everywhere and in one place; the
 * OpenAPI document shows the field as the string schema or null. (Request bodies are only decoded; the encode
 * side exists for the type alone.)
 */
export function OptionalText<S extends TString | TUnion<(TString | TLiteral<string>)[]>>(schema: S) {
  return t.Optional(
    t
      .Transform(t.Union([schema, t.Null()]))
      .Decode((v): string => (v === null ? '' : (v as string)))
      .Encode((v) => v as never),
  )
}
