// Status of the web server and the embedded engine (spec "status objects"): GET /api/stats/ping and
// GET /api/stats/sysDesc, keyed by `webserver` and by ENGINE_KEY (the embedded engine runs in this process,
// so both describe the same host).
import { Elysia, t } from 'elysia'
import type { SearchManager } from '../../server/search/manager'
import { authGuard } from '../auth/guard'
import type { AuthService } from '../auth/service'
import { type SystemDescription, describeSystem } from './system'

/** The key of the embedded engine in the status objects (where a distributed setup names `<indexer>:<port>`). */
export const ENGINE_KEY = 'embedded'

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

export function statsPlugin({ auth, searches }: { auth: AuthService; searches: SearchManager }) {
  let described: SystemDescription | undefined
  return new Elysia({ name: 'quarry-stats' })
    .use(authGuard(auth))
    .get(
      '/api/stats/ping',
      async () => {
        let engine = 'OK'
        try {
          await searches.ping()
        } catch (e) {
          engine = `ERROR: ${e instanceof Error ? e.message : String(e)}`
        }
        // This answer is itself the proof that the web server is up.
        return { webserver: 'OK', [ENGINE_KEY]: engine }
      },
      {
        access: 'Stats',
        response: t.Record(t.String(), t.String()),
        detail: { summary: 'Status of the web server and the embedded engine ("OK" when up)' },
      },
    )
    .get(
      '/api/stats/sysDesc',
      async () => {
        described ??= await describeSystem()
        return { webserver: described, [ENGINE_KEY]: described }
      },
      {
        access: 'Stats',
        response: t.Record(t.String(), SysDesc),
        detail: { summary: 'Host facts of the web server and the embedded engine' },
      },
    )
}
