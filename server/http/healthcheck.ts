// The container's HEALTHCHECK: asks this host's server for readiness on the port QUARRY_LISTEN configures (a server
// on 0.0.0.0 or :: is asked on loopback). Exit 0 when ready, 1 otherwise, with the reason on stderr.
import { ConfigError, parseListen } from '../runtime/config'

const READY_PATH = '/api/health/ready'

export function readinessUrl(listen: string | undefined): string {
  const { host, port } = parseListen(listen || '127.0.0.1:8080')
  const target = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host
  return `http://${target.includes(':') ? `[${target}]` : target}:${port}${READY_PATH}`
}

if (import.meta.main) {
  let url: string
  try {
    url = readinessUrl(process.env.QUARRY_LISTEN)
  } catch (e) {
    console.error(`healthcheck: ${e instanceof ConfigError ? e.message : e}`)
    process.exit(1)
  }
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2500) }) // within the HEALTHCHECK --timeout of 3s
    if (!res.ok) console.error(`healthcheck: ${url} answered ${res.status} ${await res.text()}`)
    process.exit(res.ok ? 0 : 1)
  } catch (e) {
    console.error(`healthcheck: ${url}: ${e instanceof Error ? e.message : e}`)
    process.exit(1)
  }
}
