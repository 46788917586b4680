// The one HTTP client of the CLI: base URL, authentication (a token as `Service-Token`, or the JWT of the saved
// login as `Authorization: Bearer`), the server's `{"Error": ...}` turned into ApiError, and archives streamed
// from and to disk (never held in memory) with an optional progress report.
import { nodeFs, nodePath } from './builtins'
import pkg from '../package.json'
import { ApiError, CliError } from './errors'

/** Called as bytes go out or come in; `total` is undefined when the server does not say. */
export type Progress = { start(total: number | undefined): void; advance(bytes: number): void; stop(): void }

export interface ClientOptions {
  server: string
  /** API token secret, sent as Service-Token; wins over the JWT. */
  token?: string
  /** JWT of a saved login. */
  jwt?: string
  /** PEM certificates an https server's chain must lead to, instead of the system's trusted CAs (--ca). */
  ca?: string
}

type Query = Record<string, string | number | boolean | undefined>

/** What the server's request log shows for the CLI's requests. */
export const USER_AGENT = `quarry/${pkg.version}`

export class Client {
  constructor(readonly options: ClientOptions) {}

  get server(): string {
    return this.options.server
  }

  /** Whether requests carry an API token (whose permissions may be narrower than its owner's). */
  get usesToken(): boolean {
    return Boolean(this.options.token)
  }

  /** Whether requests carry any credential at all. */
  get authenticated(): boolean {
    return Boolean(this.options.token || this.options.jwt)
  }

  private url(path: string, query?: Query): string {
    const url = new URL(this.options.server + path)
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v))
    return url.href
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    const h: Record<string, string> = { accept: 'application/json', 'user-agent': USER_AGENT, ...extra }
    if (this.options.token) h['service-token'] = this.options.token
    else if (this.options.jwt) h.authorization = `Bearer ${this.options.jwt}`
    return h
  }

  private async send(method: string, path: string, init: { query?: Query; body?: string | Uint8Array | ReadableStream<Uint8Array>; headers?: Record<string, string> } = {}) {
    const url = this.url(path, init.query)
    try {
      return await fetch(url, {
        method,
        headers: this.headers(init.headers),
        body: init.body,
        redirect: 'manual',
        ...(this.options.ca ? { tls: { ca: this.options.ca } } : {}),
      })
    } catch (e) {
      const message = (e as Error).message
      const hint = /certificate|self.signed|SSL|TLS/i.test(`${message} ${(e as { code?: string }).code ?? ''}`) && !this.options.ca
        ? ' (a server with a certificate of a private CA: pass that CA with --ca FILE or QUARRY_CA)'
        : ''
      throw new CliError(`cannot reach ${this.options.server}: ${message}${hint}`)
    }
  }

  /** A JSON call; answers the parsed body (`null` for an empty one). Non-2xx answers throw ApiError. */
  async call<T = unknown>(
    method: string,
    path: string,
    opts: { query?: Query; json?: unknown; jsonText?: string; raw?: { body: Uint8Array; type: string } } = {},
  ): Promise<T> {
    // jsonText: a body the caller wrote as JSON text already; raw: bytes of another type (quarry ingest's batches).
    const body = opts.jsonText ?? (opts.json === undefined ? undefined : JSON.stringify(opts.json))
    const res = await this.send(method, path, {
      query: opts.query,
      body: opts.raw?.body ?? body,
      headers: opts.raw ? { 'content-type': opts.raw.type } : body === undefined ? {} : { 'content-type': 'application/json' },
    })
    if (!res.ok) throw await this.failure(res)
    const text = await res.text()
    if (text === '') return null as T
    try {
      return JSON.parse(text) as T
    } catch {
      throw new CliError(`${method} ${path}: the server answered something that is not JSON`)
    }
  }

  get = <T = unknown>(path: string, query?: Query) => this.call<T>('GET', path, { query })
  post = <T = unknown>(path: string, json?: unknown) => this.call<T>('POST', path, { json })
  put = <T = unknown>(path: string, json?: unknown) => this.call<T>('PUT', path, { json })
  patch = <T = unknown>(path: string, json?: unknown) => this.call<T>('PATCH', path, { json })
  delete = <T = unknown>(path: string) => this.call<T>('DELETE', path)

  /** A GET whose body the caller streams (results as the server formats them); non-2xx answers throw ApiError. */
  async stream(path: string, query?: Query): Promise<Response> {
    const res = await this.send('GET', path, { query, headers: { accept: '*/*' } })
    if (!res.ok) throw await this.failure(res)
    return res
  }

  /**
   * POSTs (or PUTs) a multipart form: the text `fields`, then the file at `filePath` as the part `file`, streamed
   * from disk. The body's length is known up front, so it goes out with a Content-Length.
   */
  async upload<T = unknown>(
    method: 'POST' | 'PUT',
    path: string,
    filePath: string,
    fields: Record<string, string | undefined>,
    progress?: Progress,
  ): Promise<T> {
    let size: number
    try {
      const st = nodeFs().statSync(filePath)
      if (!st.isFile()) throw new Error('not a regular file')
      size = st.size
    } catch (e) {
      throw new CliError(`cannot read ${filePath}: ${(e as Error).message}`)
    }
    const boundary = `quarry-${crypto.randomUUID()}`
    const encoder = new TextEncoder()
    let head = ''
    for (const [name, value] of Object.entries(fields)) {
      if (value === undefined) continue
      head += `--${boundary}\r\nContent-Disposition: form-data; name="${quoted(name)}"\r\n\r\n${value}\r\n`
    }
    head += `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${quoted(nodePath().basename(filePath))}"\r\n`
    head += 'Content-Type: application/octet-stream\r\n\r\n'
    const headBytes = encoder.encode(head)
    const tailBytes = encoder.encode(`\r\n--${boundary}--\r\n`)
    const file = Bun.file(filePath).stream()
    const reader = file.getReader()
    let stage: 'head' | 'file' | 'done' = 'head'
    let sent = 0
    // The Content-Length promised the file's size at the start; a file that grows or shrinks meanwhile would
    // make a body of another length, so the upload stops with a clear message instead.
    const changed = new CliError(`${filePath} changed while it was being uploaded`)
    let fileChanged = false
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (stage === 'head') {
          stage = 'file'
          progress?.start(size)
          return controller.enqueue(headBytes)
        }
        if (stage === 'file') {
          const { done, value } = await reader.read()
          if (!done) sent += value.byteLength
          if (done ? sent !== size : sent > size) {
            fileChanged = true
            return controller.error(changed)
          }
          if (!done) {
            progress?.advance(value.byteLength)
            return controller.enqueue(value)
          }
          stage = 'done'
          controller.enqueue(tailBytes)
          return controller.close()
        }
      },
      cancel: (reason) => reader.cancel(reason),
    })
    try {
      const res = await this.send(method, path, {
        body,
        headers: {
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': String(headBytes.byteLength + size + tailBytes.byteLength),
        },
      })
      if (!res.ok) throw await this.failure(res)
      const text = await res.text()
      return (text === '' ? null : JSON.parse(text)) as T
    } catch (e) {
      throw fileChanged ? changed : e
    } finally {
      progress?.stop()
    }
  }

  /**
   * GETs `path` into the file `filePath`, streamed to disk: written beside as `<file>.part` and renamed into
   * place only once complete, so a failed download never leaves a truncated file under the asked name.
   * Answers the number of bytes written.
   */
  async download(path: string, filePath: string, progress?: Progress): Promise<number> {
    const res = await this.send('GET', path, { headers: { accept: '*/*' } })
    if (!res.ok) throw await this.failure(res)
    const partial = `${filePath}.part`
    try {
      nodeFs().closeSync(nodeFs().openSync(partial, 'w', 0o644))
    } catch (e) {
      await res.body?.cancel()
      throw new CliError(`cannot write ${filePath}: ${(e as Error).message}`)
    }
    const declared = Number(res.headers.get('content-length') ?? NaN)
    const writer = Bun.file(partial).writer()
    let written = 0
    // Ctrl-C (or a TERM) mid-download: no `<file>.part` is left behind, and the shell sees the signal's exit status.
    const interrupted = (signal: NodeJS.Signals) => {
      progress?.stop()
      nodeFs().rmSync(partial, { force: true })
      process.exit(signal === 'SIGINT' ? 130 : 143)
    }
    process.once('SIGINT', interrupted)
    process.once('SIGTERM', interrupted)
    progress?.start(Number.isFinite(declared) ? declared : undefined)
    try {
      if (res.body) {
        for await (const chunk of res.body) {
          writer.write(chunk)
          await writer.flush()
          written += chunk.byteLength
          progress?.advance(chunk.byteLength)
        }
      }
      await writer.end()
      if (Number.isFinite(declared) && written !== declared) throw new Error(`the download broke off after ${written} of ${declared} bytes`)
      nodeFs().renameSync(partial, filePath)
      return written
    } catch (e) {
      await Promise.resolve(writer.end()).catch(() => {})
      nodeFs().rmSync(partial, { force: true })
      throw e instanceof ApiError || e instanceof CliError ? e : new CliError(`download of ${path} failed: ${(e as Error).message}`)
    } finally {
      process.off('SIGINT', interrupted)
      process.off('SIGTERM', interrupted)
      progress?.stop()
    }
  }

  /** The server's refusal as an ApiError carrying its `Error` (or a login failure's `Reason`). */
  private async failure(res: Response): Promise<ApiError> {
    const text = await res.text().catch(() => '')
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      body = undefined
    }
    const fields = (typeof body === 'object' && body !== null ? body : {}) as { Error?: unknown; Reason?: unknown }
    let message =
      typeof fields.Error === 'string' ? fields.Error
      : typeof fields.Reason === 'string' ? fields.Reason
      : `HTTP ${res.status}${text ? `: ${text.slice(0, 200)}` : ''}`
    if (res.status === 401 && !this.options.token) {
      message += this.options.jwt ? ' (log in again with `quarry login`)' : ' (not logged in: run `quarry login` or pass --token)'
    }
    return new ApiError(res.status, message, body, retryAfterMs(res.headers.get('retry-after')))
  }
}

/** A Retry-After header (delay-seconds, or an HTTP date) in milliseconds from now; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null) return undefined
  const text = header.trim()
  if (/^\d+$/.test(text)) return Number(text) * 1000
  const at = /^[A-Za-z]{3}, /.test(text) ? Date.parse(text) : NaN
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/** A form-data name or filename inside double quotes: no quote, CR or LF may break out of it. */
function quoted(s: string): string {
  return s.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A')
}
