// Starts Quarry: configuration → store → blob store → app → listen; SIGTERM/SIGINT drain in-flight requests and close the store.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { createApp } from './app'
import { type BlobStore, createDiskBlobStore, createS3BlobStore } from './blob'
import { ConfigError, loadConfig } from './config'
import { createLogger } from './log'
import { type Store, blobReferences, createSqliteStore } from './store'
import { createPgStore } from './store.pg'
import { redact } from './pg'
import { sweepBlobs } from './blob/sweep'

const EXPIRED_SESSION_SWEEP_MS = 60_000
/** Unattended searches past their grace period are removed at least this often (and on every search request). */
const SEARCH_SWEEP_MS = 10_000
/** The blob sweep runs at start and then this often, so a deleted user's contents do not linger long. */
const BLOB_SWEEP_MS = 6 * 3_600_000

export async function main(env: Record<string, string | undefined> = process.env): Promise<void> {
  let loaded
  try {
    loaded = loadConfig(env)
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`quarry: invalid configuration: ${e.message}`)
      process.exit(2)
    }
    throw e
  }
  const { config, warnings } = loaded
  const log = createLogger(config.logLevel)
  for (const w of warnings) log.warn(w)

  let store: Store
  try {
    mkdirSync(config.dataDir, { recursive: true })
    store = config.databaseUrl ? await createPgStore(config.databaseUrl) : createSqliteStore(join(config.dataDir, 'quarry.db'))
  } catch (e) {
    const where = config.databaseUrl ? `PostgreSQL store at ${redact(config.databaseUrl)}` : `store in ${config.dataDir}`
    console.error(`quarry: cannot open the ${where}: ${e instanceof Error ? e.message : e}`)
    process.exit(1)
  }
  // The S3 bucket is checked (and created when missing) here, so a wrong endpoint or key stops the start.
  let blobs: BlobStore
  try {
    blobs = config.s3 ? await createS3BlobStore(config.s3) : await createDiskBlobStore({ dataDir: config.dataDir })
  } catch (e) {
    const where = config.s3 ? `S3 bucket ${config.s3.bucket} at ${config.s3.endpoint}` : `${config.dataDir}/blobs`
    console.error(`quarry: cannot open the blob store (${where}): ${e instanceof Error ? e.message : e}`)
    await store.close()
    process.exit(1)
  }
  const { app, auth, searches } = await createApp({ config, store, blobs, log })

  // Handlers go in before listening, so a signal that arrives as soon as the port is open still drains.
  let sessionSweep: ReturnType<typeof setInterval> | undefined
  let blobSweep: ReturnType<typeof setInterval> | undefined
  let searchSweep: ReturnType<typeof setInterval> | undefined
  let stopping = false
  const shutdown = async (signal: string) => {
    if (stopping) return
    stopping = true
    log.info('shutting down', { signal })
    if (sessionSweep) clearInterval(sessionSweep)
    if (blobSweep) clearInterval(blobSweep)
    if (searchSweep) clearInterval(searchSweep)
    await app.stop() // stops accepting and waits for in-flight requests
    await searches.close() // running searches stop; saved ones are moved or finished at the next start
    await store.close()
    process.exit(0)
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))

  try {
    app.listen({
      hostname: config.listenHost,
      port: config.listenPort,
      // The JSON limit is enforced per route by the body parser; this is the outer bound for uploads.
      maxRequestBodySize: Math.max(config.maxBodyBytes, config.maxFileBytes, config.maxResourceBytes, config.maxImportBytes),
    })
  } catch (e) {
    console.error(`quarry: cannot listen on ${config.listenHost}:${config.listenPort}: ${e instanceof Error ? e.message : e}`)
    await store.close()
    process.exit(1)
  }
  log.info('listening', { address: `http://${config.listenHost}:${app.server?.port}`, dataDir: config.dataDir, blobStore: blobs.kind })

  sessionSweep = setInterval(() => {
    // A busy store (a long write by another process) must not end the server: log it and try at the next tick.
    auth.sweepExpiredSessions().catch((e: unknown) =>
      log.error('expired session sweep failed', { error: e instanceof Error ? e.message : String(e) }),
    )
  }, EXPIRED_SESSION_SWEEP_MS)
  sessionSweep.unref()
  searchSweep = setInterval(() => searches.sweep(), SEARCH_SWEEP_MS)
  searchSweep.unref()

  // In the background: the server answers while a large store is being listed.
  const runBlobSweep = () =>
    sweepBlobs({ blobs, references: () => blobReferences(store), now: Date.now(), graceMs: config.blobSweepGraceMs, log }).catch((e: unknown) =>
      log.error('blob sweep failed', { error: e instanceof Error ? e.message : String(e) }),
    )
  void runBlobSweep()
  blobSweep = setInterval(() => void runBlobSweep(), BLOB_SWEEP_MS)
  blobSweep.unref()
}

if (import.meta.main) await main()
