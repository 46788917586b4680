// Streaming multipart/form-data: hands the part named `file` to a sink as a web stream while the request body is
// still arriving, so an upload is never held in memory (Request.formData would buffer all of it); the other parts
// are small text fields, read with a small limit. Shared by resources and user files. Parsing is
// @fastify/busboy's; this file only bridges web streams to it, with backpressure both ways.
import type { Busboy, BusboyFileStream } from '@fastify/busboy'
import { t } from 'elysia'
import type { TObject } from '@sinclair/typebox'

/** The body is not a well-formed multipart form with a `file` part, or it ended early: the caller's fault (400). */
export class MultipartError extends Error {
  override name = 'MultipartError'
}

/**
 * A body longer than the upload's limit plus MULTIPART_OVERHEAD (declared or counted while streaming): 413 on the
 * routes that map it, and never worse than the 400 of a MultipartError on those that do not.
 */
export class UploadTooLargeError extends MultipartError {
  override name = 'UploadTooLargeError'
  constructor(readonly maxBytes: number) {
    super(`the upload exceeds the limit of ${maxBytes} bytes`)
  }
}

/** Room for the multipart framing and the small text fields around the file in a whole request body. */
export const MULTIPART_OVERHEAD = 64 * 1024

/** The parts of each upload route's form, by its parse hook (see multipartUpload). */
const uploadForms = new WeakMap<object, TObject>()

/**
 * Marks an upload route (`parse: multipartUpload(Form)`): the body parser (server/http/body.ts) admits the caller and
 * then leaves the body unread, for the handler to stream with streamUpload (Elysia would buffer a form whole).
 * `form` names the parts the handler reads; it is what the OpenAPI document shows as the route's multipart body
 * (the parts are read by streamUpload and checked by the handler, not by this schema). A new hook per route:
 * Elysia writes into the hook objects it is given.
 */
export function multipartUpload(form: TObject) {
  const leave = ({ contentType }: { contentType: string }) => (/^multipart\/form-data/i.test(contentType) ? 'streamed' : undefined)
  uploadForms.set(leave, form)
  return leave
}

/** The form of an upload route's parse hook, or undefined for any other hook. */
export function uploadFormOf(parseHook: unknown): TObject | undefined {
  return typeof parseHook === 'function' ? uploadForms.get(parseHook) : undefined
}

/** A file part of an upload form, as the OpenAPI document shows it (binary contents). */
export const FilePart = (description: string) => t.Unsafe<Blob>({ type: 'string', format: 'binary', description })

/** How many chunks of the file the bridge lets pile up before it stops feeding the parser. */
const QUEUE_CHUNKS = 4

/**
 * Streams the first part named `file` of the request's multipart body into `sink` and answers what the sink
 * answered, once the whole body has been read and found well-formed. Throws MultipartError for a malformed
 * body, a missing `file` part or a body that breaks off; whatever the sink throws (e.g. too large) is passed on.
 * When the body turns out bad after the sink already succeeded, `discard` gets the sink's result to undo it.
 * Other parts are read and dropped (a text part over FIELD_LIMIT is a MultipartError).
 */
export async function streamFilePart<T>(
  request: Request,
  sink: (stream: ReadableStream<Uint8Array>) => Promise<T>,
  discard: (result: T) => Promise<void>,
  opts: UploadOptions,
): Promise<T> {
  return (await streamUpload(request, sink, discard, opts)).result
}

export interface UploadOptions {
  /**
   * The most the file part may hold. The whole body may hold MULTIPART_OVERHEAD more (framing, small fields,
   * parts that are dropped); past that, declared or counted, it is an UploadTooLargeError, so no part of a form,
   * kept or not, makes the server read without end. (The file part itself is bounded by the sink.)
   */
  maxBytes: number
  /** Largest text part; FIELD_LIMIT by default. */
  fieldLimit?: number
}

/** What streamUpload read besides the file: the small text fields (first value of each name) and the file's name. */
export interface UploadForm<T> {
  result: T
  /** Text parts by name; a repeated name keeps its first value. */
  fields: Record<string, string>
  /** The filename the `file` part declared, if any. */
  filename?: string
}

/** Largest text part streamUpload accepts by default; text parts are small fields, never contents. */
export const FIELD_LIMIT = 64 * 1024

/**
 * As streamFilePart, and also answers the other parts as text fields. A text part longer than `fieldLimit`
 * bytes is a MultipartError (never silently cut short).
 */
export async function streamUpload<T>(
  request: Request,
  /** `fields`: the text fields that came before the file part (a route may refuse on them before reading the file). */
  sink: (stream: ReadableStream<Uint8Array>, fields: Readonly<Record<string, string>>) => Promise<T>,
  discard: (result: T) => Promise<void>,
  opts: UploadOptions,
): Promise<UploadForm<T>> {
  const fieldLimit = opts.fieldLimit ?? FIELD_LIMIT
  const bodyLimit = opts.maxBytes + MULTIPART_OVERHEAD
  if (Number(request.headers.get('content-length') ?? 0) > bodyLimit) throw new UploadTooLargeError(opts.maxBytes)
  const fields: Record<string, string> = Object.create(null)
  let filename: string | undefined
  const contentType = request.headers.get('content-type') ?? ''
  if (!/^multipart\/form-data\s*;/i.test(contentType)) throw new MultipartError('expected a multipart/form-data body with a part named file')
  if (!request.body) throw new MultipartError('the multipart body is empty')
  // The parser loads with the first upload, not at start (~5 ms of imports; bench/README.md, cold start).
  const { Busboy: Parser } = await import('@fastify/busboy')
  let bb: InstanceType<typeof Busboy>
  try {
    bb = new Parser({
      headers: { 'content-type': contentType },
      limits: { fields: 64, fieldSize: fieldLimit, parts: 256, headerPairs: 64 },
      // A part named file is the contents even without a filename (curl -F 'file=<path' sends none).
      isPartAFile: (field, _type, filename) => field === 'file' || filename !== undefined,
    })
  } catch (e) {
    throw new MultipartError(`malformed multipart form: ${(e as Error).message}`)
  }

  const reader = request.body.getReader()
  // The memory of every body chunk fed to the parser (see the file part's data handler).
  const fed = new WeakSet<ArrayBufferLike>()
  /** Wakes the feed loop when the sink wants more of the file. */
  let wantMore: (() => void) | undefined
  let failure: unknown
  let fileController: ReadableStreamDefaultController<Uint8Array> | undefined
  let sinkResult: Promise<T> | undefined
  let resolveSettled!: () => void
  let rejectSettled!: (e: unknown) => void
  const settled = new Promise<void>((resolve, reject) => {
    resolveSettled = resolve
    rejectSettled = reject
  })
  settled.catch(() => {})

  /** Stops everything on the first failure: the body, the parser and the stream the sink reads. */
  const abort = (e: unknown) => {
    if (failure !== undefined) return
    failure = e
    try {
      fileController?.error(e)
    } catch {}
    fileController = undefined
    reader.cancel().catch(() => {})
    bb.destroy()
    rejectSettled(e)
  }

  bb.on('field', (name: string, value: string, _nameTruncated: boolean, valueTruncated: boolean) => {
    if (valueTruncated) abort(new MultipartError(`the form field ${JSON.stringify(name.slice(0, 64))} exceeds ${fieldLimit} bytes`))
    else if (!Object.hasOwn(fields, name)) fields[name] = value
  })
  bb.on('file', (name: string, file: BusboyFileStream, fileName?: string) => {
    if (name !== 'file' || sinkResult) {
      file.resume()
      return
    }
    filename = fileName
    const web = new ReadableStream<Uint8Array>(
      {
        start(controller) {
          fileController = controller
          // The file stream is never paused (backpressure is applied by not feeding the parser, in the feed loop),
          // so each chunk arrives here while the parser is still in the write that produced it. The parser hands
          // out slices of the body chunk it was given, which nothing reuses: those go on without a copy (this halves
          // the garbage of an upload). Anything else is a slice of its own look-behind buffer (streamsearch's, at
          // most a boundary long), which it rewrites on later writes: copied. (Read in @fastify/busboy 3.2.6: what
          // it rewrites there is always a prefix of the boundary, so the bytes stay the same; we do not rely on it.)
          file.on('data', (chunk: Buffer) => {
            if (fileController !== controller) return
            controller.enqueue(fed.has(chunk.buffer) ? new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength) : new Uint8Array(chunk))
          })
          file.on('end', () => {
            if (fileController !== controller) return
            fileController = undefined
            controller.close()
          })
          file.on('error', (e: Error) => abort(new MultipartError(`malformed multipart form: ${e.message}`)))
        },
        pull() {
          wantMore?.()
          wantMore = undefined
        },
        cancel() {
          fileController = undefined
          file.resume()
          wantMore?.()
          wantMore = undefined
        },
      },
      { highWaterMark: QUEUE_CHUNKS },
    )
    sinkResult = sink(web, { ...fields })
    sinkResult.catch((e) => abort(e))
  })
  bb.on('error', (e: unknown) => abort(new MultipartError(`malformed multipart form: ${(e as Error).message ?? e}`)))
  bb.on('finish', () => resolveSettled())

  let received = 0
  const feed = (async () => {
    for (;;) {
      let chunk: Awaited<ReturnType<typeof reader.read>>
      try {
        chunk = await reader.read()
      } catch {
        abort(new MultipartError('the request body broke off'))
        return
      }
      if (failure !== undefined) return
      if (chunk.done) break
      received += chunk.value.byteLength
      if (received > bodyLimit) {
        abort(new UploadTooLargeError(opts.maxBytes))
        return
      }
      // Backpressure to the client: while the sink has QUEUE_CHUNKS of the file unread, the parser gets no more.
      while (fileController && (fileController.desiredSize ?? 1) <= 0) {
        await Promise.race([new Promise<void>((resolve) => (wantMore = resolve)), settled.catch(() => {})])
        if (failure !== undefined) return
      }
      fed.add(chunk.value.buffer)
      if (!bb.write(chunk.value)) {
        // The parser waits until the sink has taken what it already has (backpressure to the client).
        await Promise.race([new Promise((resolve) => bb.once('drain', resolve)), settled.catch(() => {})])
        if (failure !== undefined) return
      }
    }
    bb.end()
  })()

  try {
    await feed
    await settled
  } catch {}
  if (failure === undefined && !sinkResult) failure = new MultipartError('the multipart form has no part named file')
  if (failure !== undefined) {
    // Let the sink finish failing (it removes what it wrote), or undo what it completed before the body went bad.
    if (sinkResult) {
      const done = await sinkResult.then(
        (r) => ({ ok: true as const, r }),
        () => ({ ok: false as const }),
      )
      if (done.ok) await discard(done.r)
    }
    throw failure
  }
  return { result: await sinkResult!, fields, filename }
}
