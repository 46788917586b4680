// `quarry` inside the container image (/usr/local/bin/quarry runs this file): the CLI, talking to the server of its
// own container unless told otherwise. Without --server or QUARRY_URL the CLI would try the last login's server or
// http://127.0.0.1:8080, which is not this server when QUARRY_LISTEN names another port; so QUARRY_URL is set, when
// unset, to the address of QUARRY_LISTEN as seen from inside the container (a server on 0.0.0.0 or :: is asked on
// loopback, as the HEALTHCHECK does), https when the server serves TLS (QUARRY_TLS_CERT). --server still wins.
import { run } from '../cli/main'
import { parseListen } from '../server/runtime/config'

/** The URL of the server that QUARRY_LISTEN (and QUARRY_TLS_CERT) configure, from its own host; undefined when unreadable. */
export function ownServerUrl(listen: string | undefined, tls: boolean): string | undefined {
  let parsed: { host: string; port: number }
  try {
    parsed = parseListen(listen || '0.0.0.0:8080')
  } catch {
    return undefined // the server refuses to start with it too; the CLI's own default stays
  }
  const host = parsed.host === '0.0.0.0' ? '127.0.0.1' : parsed.host === '::' ? '::1' : parsed.host
  return `${tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${parsed.port}`
}

if (import.meta.main) {
  const env = process.env
  const url = env.QUARRY_URL ? undefined : ownServerUrl(env.QUARRY_LISTEN, Boolean(env.QUARRY_TLS_CERT))
  const code = await run(process.argv.slice(2), url ? { ...env, QUARRY_URL: url } : env)
  if (code !== undefined) process.exitCode = code
}
