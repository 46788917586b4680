// Status of the web server and the embedded engine (spec "status objects"): GET /api/stats/ping and
// GET /api/stats/sysDesc, keyed by `webserver` and by the engine's address (the embedded engine runs in this
// process, so both describe the same host).
import { hostname } from 'node:os'
import { Elysia, t } from 'elysia'
import type { Config } from '../../server/config'
import type { SearchManager } from '../../server/search/manager'
import { authGuard } from '../auth/guard'
import type { AuthService } from '../auth/service'
import { type SystemDescription, describeSystem } from './system'
import { area } from '../../server/openapi'

/**
 * The key of the embedded engine in the status objects: `<host>:<port>`, as the spec keys each indexer, taken from
 * where this server listens (the port it was given, or the one it got for port 0). A wildcard listen address
 * names no host, so the machine's host name stands in; an IPv6 literal is bracketed. The cluster issue will
 * add one such key per replica.
 */
export function engineKey(listenHost: string, port: number, machine = hostname()): string {
  const host = ['', '0.0.0.0', '::', '[::]'].includes(listenHost) ? machine : listenHost
  return `${host.includes(':') ? `[${host}]` : host}:${port}`
}

const SysDesc = t.Object({
  VirtSystem: t.String(),
  VirtRole: t.String(),
  CPUCount: t.Integer(),
  CPUModel: t.String(),
  CPUMhz: t.String(),
  CPUCache: t.String(),
  TotalMemoryMB: t.Integer(),
  SystemVersion: t.String(),
})

export function statsPlugin({ config, auth, searches }: { config: Config; auth: AuthService; searches: SearchManager }) {
  let described: SystemDescription | undefined
  /** `port`: the listening server's (undefined when requests come through app.handle, as in tests). */
  const keyOf = (port: number | undefined) => engineKey(config.listenHost, port || config.listenPort)
  return new Elysia({ name: 'quarry-stats', detail: area('Stats') })
    .use(authGuard(auth))
    .get(
      '/api/stats/ping',
      async ({ server }) => {
        let engine = 'OK'
        try {
          await searches.ping()
        } catch (e) {
          engine = `ERROR: ${e instanceof Error ? e.message : String(e)}`
        }
        // This answer is itself the proof that the web server is up.
        return { webserver: 'OK', [keyOf(server?.port)]: engine }
      },
      {
        access: 'Stats',
        response: t.Record(t.String(), t.String()),
        detail: { summary: 'Check the web server and engine status', description: '"OK" for each part that is up.' },
      },
    )
    .get(
      '/api/stats/sysDesc',
      async ({ server }) => {
        described ??= await describeSystem()
        return { webserver: described, [keyOf(server?.port)]: described }
      },
      {
        access: 'Stats',
        response: t.Record(t.String(), SysDesc),
        detail: { summary: 'Get host facts of the server and engine' },
      },
    )
}
