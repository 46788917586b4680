// The request body of the shippers' HTTP protocols that read their own (Elasticsearch bulk, Splunk HEC): at most
// `maxBytes` are read off the wire (a larger declared Content-Length is refused unread), and a gzip body is inflated to
// at most `maxInflatedBytes` (node:zlib stops there), so neither a large body nor a gzip bomb can hold more memory.
import { nodeZlib } from '../runtime/lazy-builtins'
import { isAscii } from 'node:buffer'
import { readLimited as readBody } from '../http/body'

/** Why a body was not taken: the HTTP status, the reason for the metrics, and a message that says which bound. */
export class BodyRefused extends Error {
  override name = 'BodyRefused'
  constructor(
    readonly status: 400 | 413 | 415,
    message: string,
  ) {
    super(message)
  }
  get reason(): 'invalid' | 'too-large' {
    return this.status === 413 ? 'too-large' : 'invalid'
  }
}

export interface BodyLimits {
  /** QUARRY_MAX_BODY_SIZE: bytes read off the wire. */
  maxBytes: number
  /** QUARRY_INGEST_MAX_DECOMPRESSED: bytes a gzip body may inflate to. */
  maxInflatedBytes: number
}


/** The body as sent, inflated when its Content-Encoding is gzip; throws BodyRefused. */
export async function readShipperBody(request: Request, limits: BodyLimits): Promise<Uint8Array> {
  // No shipper sends a form; a multipart body here is a mistake, refused as on every route that takes no upload.
  if (/^\s*multipart\/form-data/i.test(request.headers.get('content-type') ?? ''))
    throw new BodyRefused(415, 'multipart bodies are not taken here: send the protocol\'s own body (NDJSON, JSON events or lines)')
  const encoding = (request.headers.get('content-encoding') ?? '').trim().toLowerCase()
  const gzip = encoding === 'gzip' || encoding === 'x-gzip'
  if (!gzip && encoding !== '' && encoding !== 'identity')
    throw new BodyRefused(415, `Content-Encoding ${encoding} is not supported: send the body as is or gzip`)
  const wire = await readLimited(request, limits.maxBytes)
  if (!gzip) return wire
  try {
    return nodeZlib().gunzipSync(wire, { maxOutputLength: limits.maxInflatedBytes })
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE')
      throw new BodyRefused(413, `the gzip body inflates past the limit of ${limits.maxInflatedBytes} bytes (QUARRY_INGEST_MAX_DECOMPRESSED)`)
    throw new BodyRefused(400, 'the body is not valid gzip (Content-Encoding: gzip)')
  }
}

function readLimited(request: Request, limit: number): Promise<Uint8Array> {
  return readBody(request, limit, (status, message) => new BodyRefused(status, status === 413 ? `${message} (QUARRY_MAX_BODY_SIZE)` : message))
}

/** An ingest tag made of `name`: characters a tag may not hold become '_', cut to 128; undefined when nothing is left. */
export function tagOf(name: string): string | undefined {
  const tag = name.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 128)
  return tag === '' ? undefined : tag
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * The text of `body[from, to)`, or undefined when it is not UTF-8. In an all-ASCII body (what shippers send, JSON
 * escaping the rest; the check costs 0.01 ms per MB) each line is read as Latin-1, a small string of its own: one
 * string of the whole body sliced per line took twice as long over a 1,000-document request (0.86 against 0.48 ms
 * with the parse), its 200 KB taken fresh from the system each time, and the strict UTF-8 decoder 2.5 times as long
 * again (bench/README.md, ES bulk). Any other body is decoded line by line, strictly.
 */
export function textOf(body: Uint8Array): (from: number, to: number) => string | undefined {
  if (isAscii(body)) {
    const b = Buffer.from(body.buffer, body.byteOffset, body.byteLength)
    return (from, to) => b.toString('latin1', from, to)
  }
  return (from, to) => {
    try {
      return utf8.decode(body.subarray(from, to))
    } catch {
      return undefined
    }
  }
}
