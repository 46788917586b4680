// Health for load balancers, supervisors and the container's HEALTHCHECK. Liveness answers without touching anything
// (with each dependency's state as the last operations found it); readiness says whether this replica can serve: its
// metadata store answers a query with every migration applied. The blob store is checked too (a tiny object written
// and removed again) and reported, but does not decide readiness: it is shared by every replica, so an outage of it
// would take them all out of the load balancer at once, although everything that needs only the metadata store
// (logins, users, dashboards...) still works; what needs blobs answers 503 naming the blob store meanwhile.
// Both routes are public and cheap: concurrent readiness calls share one check, and a result is reused for
// READY_CACHE_MS, so anonymous callers cannot make the server write faster than that.
import type { BlobStore } from '../../server/blob'
import type { Dependencies } from '../../server/runtime/dependencies'
import { probeBlobStore } from '../../server/blob/probe'
import type { SettingsRepo } from './repo'

export const READY_CACHE_MS = 1000
/** A check that has not answered in this long counts as failed (a hung store or S3 endpoint). */
export const READY_TIMEOUT_MS = 5000
/**
 * Readiness waits this long at most for the blob store's probe, which does not decide it: a load balancer's check
 * (HAProxy's `inter 2s` in deploy/haproxy.cfg) must get its answer in time while the blob store hangs. A probe still
 * running then goes on (the next readiness call shares it) and is reported as not answering yet.
 */
export const READY_BLOB_WAIT_MS = 1000

export type CheckName = 'store' | 'migrations' | 'blobs'
export interface Readiness {
  ready: boolean
  checks: Record<CheckName, string>
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e)).split('\n')[0]!.slice(0, 200)

function within<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS)
  })
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer))
}

/** `dependencies`: told what each check found (the blob store's probe tells it itself, through the guarded store). */
export function readinessCheck(settings: Pick<SettingsRepo, 'migrationState'>, blobs: BlobStore, dependencies?: Pick<Dependencies, 'ok' | 'failed'>, clock: () => number = Date.now): () => Promise<Readiness> {
  let last: { at: number; result: Readiness } | undefined
  let running: Promise<Readiness> | undefined
  let probing: Promise<void> | undefined
  const check = async (): Promise<Readiness> => {
    const checks: Record<CheckName, string> = { store: 'ok', migrations: 'ok', blobs: 'ok' }
    probing ??= within(probeBlobStore(blobs), 'the blob store').finally(() => {
      probing = undefined
    })
    const probe = probing.then(
      () => 'ok',
      (e: unknown) => `failed: ${message(e)}`,
    )
    const [state] = await Promise.allSettled([within(settings.migrationState(), 'the store')])
    let timer: ReturnType<typeof setTimeout> | undefined
    checks.blobs = await Promise.race([
      probe,
      new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve(`failed: no answer within ${READY_BLOB_WAIT_MS} ms (still checking)`), READY_BLOB_WAIT_MS)
      }),
    ]).finally(() => clearTimeout(timer))
    if (state.status === 'rejected') {
      dependencies?.failed('store', state.reason)
      checks.store = `failed: ${message(state.reason)}`
      checks.migrations = 'unknown'
    } else {
      dependencies?.ok('store')
      if (!state.value.current)
        checks.migrations = `failed: the store is at schema version ${state.value.applied}, this server needs ${state.value.known}`
    }
    return { ready: checks.store === 'ok' && checks.migrations === 'ok', checks }
  }
  return () => {
    if (last && clock() - last.at < READY_CACHE_MS) return Promise.resolve(last.result)
    running ??= check()
      .then((result) => {
        last = { at: clock(), result }
        return result
      })
      .finally(() => {
        running = undefined
      })
    return running
  }
}
