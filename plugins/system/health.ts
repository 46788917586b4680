// Health for load balancers, supervisors and the container's HEALTHCHECK. Liveness answers without touching anything;
// readiness checks what a request needs: the store answers a query with every migration applied, and the blob store
// takes a write (a tiny object, removed again). Both are public and cheap: concurrent readiness calls share one check,
// and a result is reused for READY_CACHE_MS, so anonymous callers cannot make the server write faster than that.
import type { BlobStore } from '../../server/blob'
import { probeBlobStore } from '../../server/blob/probe'
import type { Store } from '../../server/store'

export const READY_CACHE_MS = 1000
/** A check that has not answered in this long counts as failed (a hung store or S3 endpoint). */
export const READY_TIMEOUT_MS = 5000

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

export function readinessCheck(store: Store, blobs: BlobStore, clock: () => number = Date.now): () => Promise<Readiness> {
  let last: { at: number; result: Readiness } | undefined
  let running: Promise<Readiness> | undefined
  const check = async (): Promise<Readiness> => {
    const checks: Record<CheckName, string> = { store: 'ok', migrations: 'ok', blobs: 'ok' }
    const [state, blobResult] = await Promise.allSettled([
      within(store.settings.migrationState(), 'the store'),
      within(probeBlobStore(blobs), 'the blob store'),
    ])
    if (state.status === 'rejected') {
      checks.store = `failed: ${message(state.reason)}`
      checks.migrations = 'unknown'
    } else if (!state.value.current) {
      checks.migrations = `failed: the store is at schema version ${state.value.applied}, this server needs ${state.value.known}`
    }
    if (blobResult.status === 'rejected') checks.blobs = `failed: ${message(blobResult.reason)}`
    return { ready: Object.values(checks).every((c) => c === 'ok'), checks }
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
