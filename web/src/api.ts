// The console's one way to call the API: JSON over fetch with the session's JWT, and every refusal turned into an
// ApiError carrying the API's own `{"Error"}` text, so pages show what the server said and never a blank screen.
import { session } from './session'

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
    this.name = 'ApiError'
  }
}

type Body = unknown

/** What a failed answer says: the API's `Error` text (a refused login's `Reason`) when it has one, else its status. */
async function refusalOf(response: Response): Promise<ApiError> {
  let text = `${response.status} ${response.statusText}`.trim()
  try {
    const body = (await response.json()) as { Error?: unknown; Reason?: unknown }
    const said = body?.Error ?? body?.Reason
    if (typeof said === 'string' && said) text = said
  } catch {
    // not JSON (a proxy's page, say): the status is all there is
  }
  return new ApiError(response.status, text)
}

/** Sends one request; a 401 ends the session (its JWT expired or was revoked) so the shell shows the login form. */
export async function request(method: string, path: string, body?: Body | FormData, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers)
  const jwt = session.jwt()
  if (jwt) headers.set('authorization', `Bearer ${jwt}`)
  let payload: BodyInit | undefined
  if (body instanceof FormData) payload = body
  else if (body !== undefined) {
    headers.set('content-type', 'application/json')
    payload = JSON.stringify(body)
  }
  let response: Response
  try {
    response = await fetch(path, { ...init, method, headers, body: payload })
  } catch {
    throw new ApiError(0, 'the server could not be reached')
  }
  if (response.status === 401 && jwt) session.end()
  if (!response.ok) throw await refusalOf(response)
  return response
}

/** A JSON answer (an empty body reads as null). */
export async function call<T>(method: string, path: string, body?: Body | FormData): Promise<T> {
  const response = await request(method, path, body)
  const text = await response.text()
  return (text ? JSON.parse(text) : null) as T
}

export const api = {
  get: <T>(path: string) => call<T>('GET', path),
  post: <T>(path: string, body?: Body | FormData) => call<T>('POST', path, body),
  put: <T>(path: string, body?: Body | FormData) => call<T>('PUT', path, body),
  patch: <T>(path: string, body?: Body | FormData) => call<T>('PATCH', path, body),
  delete: <T>(path: string) => call<T>('DELETE', path),
}

/** A URL path with each parameter encoded: `path\`/api/users/${id}\`` never lets a value add a path segment. */
export function path(strings: TemplateStringsArray, ...values: (string | number)[]): string {
  return strings.reduce((out, s, i) => out + s + (i < values.length ? encodeURIComponent(String(values[i])) : ''), '')
}
