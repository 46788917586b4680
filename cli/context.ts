// What every command shares: the global options (from the command line or the environment), the server they
// name, the client built for it and the output mode.
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

/** --server, QUARRY_URL, the server of the last login, or the default, in that order. */
export function serverUrl(): string {
  if (globals.server) return normalizeServer(globals.server)
  return readCredentials().current ?? DEFAULT_SERVER
}

/** The client for the chosen server, with the token when one is given, else the saved login's JWT. */
export function client(): Client {
  const server = serverUrl()
  if (globals.token) return new Client({ server, token: globals.token })
  return new Client({ server, jwt: readCredentials().servers[server]?.jwt })
}

export function output(): Output {
  return new Output(globals.json)
}

export function usingToken(): boolean {
  return Boolean(globals.token)
}
