// The one error catalogue. Every refusal the API makes is an ApiError built here; the error plugin turns
// it, and every error Elysia raises, into `{"Error": "..."}` with the status of docs/api.md "Conventions".
import { Elysia } from 'elysia'
import { BlobUnavailableError } from '../blob'
import type { Logger } from '../runtime/log'
import { noteErrorAnswer, pathOf, requestIdOf } from './request-log'
import { isUnstorableText } from '../store/pg-text'
import { UniqueViolation } from '../store/unique'
import { JSON_TYPE } from './wire'

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Extra members of the error body, e.g. `Cap` for a missing token permission. */
    readonly extra?: Record<string, unknown>,
  ) {
    super(message)
  }
}

export const Errors = {
  badRequest: (message: string) => new ApiError(400, message),
  unauthenticated: (message = 'authentication required') => new ApiError(401, message),
  forbidden: (message = 'permission denied') => new ApiError(403, message),
  missingPermission: (cap: string) => new ApiError(403, `permission ${cap} required`, { Cap: cap }),
  adminOnly: () => new ApiError(403, 'admin rights required'),
  notFound: (what: string) => new ApiError(404, `${what} not found`),
  conflict: (message: string) => new ApiError(409, message),
  tooLarge: (limit: number) => new ApiError(413, `request body exceeds the limit of ${limit} bytes`),
  /** A body type the route does not take (multipart outside the upload routes). */
  unsupportedMediaType: (message: string) => new ApiError(415, message),
  tooManyRequests: (message: string) => new ApiError(429, message),
  /** The server cannot take this now and may later (ingest back-pressure): answered with Retry-After. */
  serviceUnavailable: (message: string) => new ApiError(503, message),
  /** A write that would take its owner past the storage quota (server/store/quota.ts); `adding` unknown while streaming. */
  quotaExceeded: (limit: number, used: number, adding?: number) =>
    new ApiError(
      413,
      `storage quota exceeded: the quota is ${limit} bytes per user (QUARRY_USER_QUOTA), ${used} bytes are in use` +
        (adding === undefined ? ', and this would store more than the rest' : `, and this would add ${adding}`),
    ),
  /** The server's disk has reached its free-space floor (server/runtime/disk-space.ts). */
  insufficientStorage: (floor: number) =>
    new ApiError(507, `the server is out of storage space: writes are refused while less than ${floor} bytes are free (QUARRY_MIN_FREE_SPACE)`),
  /** An ingest batch whose new tags would pass the store's number of distinct tags. */
  tooManyTags: (limit: number, known: number, adding: number) =>
    new ApiError(
      413,
      `too many distinct tags: the store may hold ${limit} (QUARRY_MAX_TAGS), it holds ${known}, and this batch would add ${adding}; nothing was stored`,
    ),
  /** A search query that does not parse: `Position` is the 0-based character offset of the problem. */
  badQuery: (message: string, position: number) => new ApiError(400, message, { Position: position }),
} as const

/** Runs a store write; a taken name becomes 409 with the given message. */
export async function conflictOnDuplicate<T>(message: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write()
  } catch (e) {
    if (e instanceof UniqueViolation) throw Errors.conflict(message)
    throw e
  }
}

/** Short, value-free description of a validation failure: which part and property, never the input. */
function describeValidation(error: unknown): string {
  const e = error as { type?: string; valueError?: { path?: string; message?: string; value?: unknown } }
  const part = e.type ?? 'request'
  const path = e.valueError?.path ?? ''
  const message = e.valueError?.message
  // TypeBox words a failed union (e.g. a path number) as "Expected union value"; say what it means instead.
  const reason =
    e.valueError && e.valueError.value === undefined
      ? 'is required'
      : !message || /union/i.test(message) ? 'wrong type or value' : message.toLowerCase()
  const where = path ? `${part} property ${path.replace(/^\//, '').replaceAll('/', '.')}` : part
  return `invalid ${where}: ${reason}`
}

/**
 * A value that failed validation and that Elysia then failed to describe: outside NODE_ENV=production, Elysia 1.4's
 * ValidationError puts the value into a template string ("... but found: ${value}"), which throws a TypeError for an
 * object with its own `toString` key (`{"User": {"toString": 1}}`, found by the generated bad-input test). So the
 * error that reaches the hook is that TypeError, raised inside ValidationError's constructor, instead of the
 * validation failure itself: the request was refused by its schema all the same, and is the caller's fault.
 */
function isUndescribableValidationFailure(error: unknown): boolean {
  return error instanceof TypeError && /^\s+at new ValidationError\b/m.test(error.stack ?? '')
}

export function errorPlugin(log: Logger) {
  // A plain function whose source returns no call: Elysia reads a hook's source and would otherwise take it for an
  // async one, await it, and so make every route's whole handler async (a promise per request, errors or not).
  return new Elysia({ name: 'quarry-errors' }).onError({ as: 'global' }, ({ code, error: raised, set, request }) => {
    const answer = errorAnswer(log, code, raised, set, request)
    noteErrorAnswer(request, answer)
    return answer
  })
}

function errorAnswer(log: Logger, code: string | number, raised: unknown, set: { headers: Record<string, string | number>; status?: number | string }, request: Request) {
  set.headers['content-type'] = JSON_TYPE
  // Elysia wraps what a parse hook throws (401, 413, 415 from the body parser) in its own ParseError. The
  // only parse hook is ours (server/http/body.ts), which refuses bad bodies with an ApiError: anything else it
  // threw is a fault of ours, not a malformed body.
  const cause = (raised as { cause?: unknown }).cause
  const error = code === 'PARSE' && cause instanceof Error ? cause : raised
  if (error instanceof ApiError) {
    if (error !== raised) set.headers['connection'] = 'close'
    set.status = error.status
    return { Error: error.message, ...error.extra }
  }
  switch (code) {
    case 'NOT_FOUND':
      set.status = 404
      return { Error: 'no such route' }
    case 'PARSE':
      if (error !== raised) break // what our parser threw, see above
      set.status = 400
      return { Error: 'malformed request body' }
    case 'VALIDATION':
      // A response that breaks its own schema is our fault, not the caller's.
      if ((error as { type?: string }).type === 'response') break
      set.status = 400
      return { Error: describeValidation(error) }
    case 'UNKNOWN':
      if (!isUndescribableValidationFailure(error)) break
      set.status = 400
      return { Error: 'invalid request: wrong type or value' }
    case 'INVALID_COOKIE_SIGNATURE':
      set.status = 400
      return { Error: 'invalid cookie' }
  }
  if (error instanceof BlobUnavailableError) {
    set.status = 503
    return { Error: error.message }
  }
  if (isUnstorableText(error)) {
    set.status = 400
    return { Error: 'the request holds a character no text may contain (NUL)' }
  }
  const requestId = requestIdOf(request)
  log.error('internal error', {
    rid: requestId,
    method: request.method,
    path: pathOf(request.url),
    error: error instanceof Error ? (error.stack ?? error.message) : String(error),
  })
  set.status = 500
  return { Error: `internal server error (request id ${requestId})` }
}
