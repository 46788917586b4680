// Status of the web server and the embedded engine (the status objects the clients read): GET /api/stats/ping and
// GET /api/stats/sysDesc, keyed by `webserver` and by the address of each live replica (server/cluster: each
// replica runs its own embedded engine; on SQLite the only one is this process). An app that does not listen (tests
// through app.handle) has registered no replica: it answers its own key as a single server.
import { hostname } from 'node:os'
import { Elysia, t } from 'elysia'
import type { Cluster } from '../../server/cluster'
import type { Config } from '../../server/runtime/config'
import type { SearchManager } from '../../server/search/manager'
import { authGuard } from '../auth/guard'
import type { AuthService } from '../auth/service'
import { type SystemDescription, describeSystem } from './system'
import { area } from '../../server/http/openapi'

/**
 * The key of the embedded engine in the status objects: `<host>:<port>`, as the clients key each indexer, taken from
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

/**
 * The status keys of the live replicas with each one's sysDesc; this process's own under `self` (its live engine
 * status is asked of it directly). Without a registered replica: this process alone, under its listening key.
 */
export async function replicaKeys(cluster: Cluster, fallbackKey: string, described: SystemDescription) {
  const live = await cluster.replicas()
  if (live.length === 0) return { self: fallbackKey, all: [{ key: fallbackKey, description: described }] }
  const self = live.find((r) => r.id === cluster.id)?.name ?? fallbackKey
  return {
    self,
    all: live.map((r) => ({ key: r.name, description: r.id === cluster.id ? described : (JSON.parse(r.description) as SystemDescription) })),
  }
}

export function statsPlugin({ config, auth, searches, cluster }: { config: Config; auth: AuthService; searches: SearchManager; cluster: Cluster }) {
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
        described ??= await describeSystem()
        const { self, all } = await replicaKeys(cluster, keyOf(server?.port), described)
        // This answer is itself the proof that the web server is up; another replica is up while its heartbeat is.
        return { webserver: 'OK', ...Object.fromEntries(all.map((r) => [r.key, r.key === self ? engine : 'OK'])) }
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
        const { all } = await replicaKeys(cluster, keyOf(server?.port), described)
        return { webserver: described, ...Object.fromEntries(all.map((r) => [r.key, r.description])) }
      },
      {
        access: 'Stats',
        response: t.Record(t.String(), SysDesc),
        detail: { summary: 'Get host facts of the server and engine' },
      },
    )
}
