// What every command shares: the global options (from the command line or the environment), the server they
// name, the client built for it and the output mode.
import { nodeFs } from './builtins'
import { Client } from './client'
import { readCredentials } from './credentials'
import { UsageError } from './errors'
import { Output } from './output'

export const DEFAULT_SERVER = 'http://127.0.0.1:8080'

export interface Globals {
  /** --server or QUARRY_URL. */
  server?: string
  /** --token or QUARRY_TOKEN. */
  token?: string
  /** --ca or QUARRY_CA: a PEM file the server's certificate is checked against instead of the system store. */
  ca?: string
  json: boolean
}

let globals: Globals = { json: false }

export function setGlobals(g: Globals): void {
  globals = g
}

/** The server URL without trailing slashes; a URL that is not http(s) is bad usage. */
export function normalizeServer(raw: string): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new UsageError(`--server: "${raw}" is not a URL (example: http://127.0.0.1:8080)`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--server: "${raw}" must be an http or https URL`)
  return url.href.replace(/\/+$/, '')
}

/**
 * The CA file for `server`: --ca (QUARRY_CA), else the one remembered with the saved login to that server; undefined:
 * the system's trusted CAs.
 */
export function caFile(server: string): string | undefined {
  if (globals.ca) return globals.ca
  // Only https has certificates to check: a command to an http server does not read the credentials file for a CA
  // (with a token it then reads no file at all before its first request).
  return server.startsWith('https:') ? readCredentials().servers[server]?.ca : undefined
}

/** The PEM text of caFile(server). A file that cannot be read is bad usage. */
export function caCertificates(server = serverUrl()): string | undefined {
  const file = caFile(server)
  if (!file) return undefined
  const option = globals.ca ? '--ca' : `the CA file remembered with the login to ${server} (pass --ca to replace it)`
  let pem: string
  try {
    pem = nodeFs().readFileSync(file, 'utf8')
  } catch (e) {
    throw new UsageError(`${option}: cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`)
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new UsageError(`${option}: ${file} holds no PEM certificate`)
  return pem
}

/** --ca as given, or undefined (login remembers it with the session, as an absolute path). */
export function givenCa(): string | undefined {
  return globals.ca
}

/** --server, QUARRY_URL, the server of the last login, or the default, in that order. */
export function serverUrl(): string {
  if (globals.server) return normalizeServer(globals.server)
  return readCredentials().current ?? DEFAULT_SERVER
}

/** The client for the chosen server, with the token when one is given, else the saved login's JWT. */
export function client(): Client {
  const server = serverUrl()
  const ca = caCertificates(server)
  if (globals.token) return new Client({ server, token: globals.token, ca })
  return new Client({ server, jwt: readCredentials().servers[server]?.jwt, ca })
}

export function output(): Output {
  return new Output(globals.json)
}

export function usingToken(): boolean {
  return Boolean(globals.token)
}
