// Small pieces of the wire format of docs/api.md "Conventions" that handlers apply themselves.
import type { TLiteral, TString, TUnion } from '@sinclair/typebox'
import { t } from 'elysia'
import { downloadHeaders } from './headers'

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
 * A download of user content: the blob store's body with its type and length, and the download headers of
 * server/http/headers.ts (sandboxed, not sniffed, an attachment unless the type is only ever displayed). The
 * Content-Disposition it always sets also keeps Bun from adding `filename="<the blob's file name>"` for a disk
 * blob sent as a file, which would show the store's internal key to the caller.
 */
export function contents(body: Blob | ReadableStream<Uint8Array> | Uint8Array, type: string, size: number, filename?: string): Response {
  return new Response(body, { headers: { ...downloadHeaders(type, filename), 'content-length': String(size) } })
}

/**
 * An optional string of a request body that also takes `null`, which the handler sees as `""` (docs/api.md
 * "Conventions": clients send null when they have nothing, for example the js-client's token description). Every
 * optional string field of every body schema is built with it, so the rule holds everywhere and in one place; the
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
