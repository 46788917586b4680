// Starts Quarry: configuration → data directory (private, locked) → store → blob store → app → listen.
// SIGTERM/SIGINT drain in-flight requests for QUARRY_SHUTDOWN_GRACE, then close what is left, wait for the uploads
// that were cut off to remove their partial files, and close the store.
import { accessSync, constants, mkdirSync, readFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { createApp } from './app'
import { clearTextWarning } from './cluster'
import { type BlobStore, createDiskBlobStore, createS3BlobStore, trackPuts } from './blob'
import { allocatorSetting } from './runtime/allocator'
import { ConfigError, advertisedOrigin, checkServerConfig, isCluster, loadConfig } from './runtime/config'
import { engineKey } from '../plugins/stats'
import { describeSystem } from '../plugins/stats/system'
import {
  DataDirBusyError,
  type DataDirLock,
  PRIVATE_DIR_MODE,
  PRIVATE_UMASK,
  type Tightened,
  isPrivateDir,
  lockDataDir,
  replicaId,
  secureDataDir,
  secureDataDirContents,
} from './runtime/datadir'
import { createLogger } from './runtime/log'
import { probeBlobStore } from './blob/probe'
import { type Store, blobReferences, createSqliteStore } from './repos'
import type { PgPool } from './store/pg'
import { type ClusterEvents, localEvents, pgEvents } from './runtime/events'
import { Jobs } from './runtime/jobs'
import { sweepBlobs } from './blob/sweep'
import { setHashOnWorker } from './blob/sha1'
import { MULTIPART_OVERHEAD } from './upload/multipart'
import { type SyslogListeners, SyslogListenError, startSyslog } from './ingest/syslog'

/** Unattended searches past their grace period are removed at least this often (and on every search request). */
const SEARCH_SWEEP_MS = 10_000
/** The store and the blob store are checked at least this often (their readiness checks). */
const DEPENDENCY_CHECK_MS = 10_000
/** Searches being saved by a replica that died are looked for this often (once it counts as dead). */
const ORPHAN_CHECK_MS = 10_000
/** The blob sweep runs at start and then this often, so a deleted user's contents do not linger long. */
const BLOB_SWEEP_MS = 6 * 3_600_000
/** Partial files (blob temporaries, search working files) no upload or search owns are removed this often... */
const PARTIAL_SWEEP_MS = 10 * 60_000
/** ...once they have not been written for this long. */
const PARTIAL_GRACE_MS = 10 * 60_000
/** After the shutdown grace, how long the uploads that were cut off get to remove their partial files. */
const UPLOAD_CLEANUP_MS = 3000
/**
 * The metrics registry (prom-client and its default collectors: event loop lag, GC, process figures) is made this
 * long after the server listens, or at the first scrape if that comes sooner: off the path of the first answers
 * (server/runtime/metrics.ts; Quarry's own metrics count from the first request either way).
 */
const METRICS_WARMUP_MS = 1000

export async function main(env: Record<string, string | undefined> = process.env): Promise<void> {
  // Everything made from here on, by us or by a library (SQLite's -wal and -shm), is private to this account.
  process.umask(PRIVATE_UMASK)
  let loaded
  try {
    loaded = loadConfig(env)
    checkServerConfig(loaded.config)
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`quarry: invalid configuration: ${e.message}`)
      process.exit(2)
    }
    throw e
  }
  const { config, warnings } = loaded
  const log = createLogger(config.logLevel)
  setHashOnWorker(config.uploadHash === 'worker')
  for (const w of warnings) log.warn(w)
  let tls: { cert: string; key: string } | undefined
  let peerCa: string | undefined
  try {
    tls = config.tls && (await readTls(config.tls))
    peerCa = config.peerCaFile === undefined ? undefined : await readPeerCa(config.peerCaFile)
  } catch (e) {
    console.error(`quarry: invalid configuration: ${(e as Error).message}`)
    process.exit(2)
  }

  // One server per data directory: the lock is taken before anything in it is read, changed or removed.
  let lock: DataDirLock
  try {
    mkdirSync(config.dataDir, { recursive: true, mode: PRIVATE_DIR_MODE })
    lock = lockDataDir(config.dataDir)
  } catch (e) {
    if (e instanceof DataDirBusyError) console.error(`quarry: ${e.message}`)
    else console.error(`quarry: cannot use the data directory ${config.dataDir}${notWritable(e) ? ' (not writable)' : ''}: ${firstLine(e)}`)
    process.exit(notWritable(e) ? 2 : 1)
  }
  const reportTightened = (tightened: Tightened | undefined) => {
    if (tightened)
      log.warn('the data directory was readable by other accounts; its modes are now 0700 (directories) and 0600 (files)', {
        dataDir: config.dataDir,
        was: tightened.was,
        dirs: tightened.dirs,
        files: tightened.files,
      })
  }
  const contentsLater = isPrivateDir(config.dataDir)
  let store: Store
  let pgPool: PgPool | undefined
  try {
    // A private directory's contents are out of other accounts' reach: they are walked once the server listens.
    if (!contentsLater) reportTightened(secureDataDir(config.dataDir))
    if (config.databaseUrl) {
      // Loaded only by a server on PostgreSQL: a SQLite one does not pay for the client and its repositories.
      const { createPgStore } = await import('./repos.pg')
      const pg = await createPgStore(config.databaseUrl)
      pgPool = pg.sql
      store = pg
    } else store = createSqliteStore(join(config.dataDir, 'quarry.db'))
  } catch (e) {
    const where = config.databaseUrl ? `PostgreSQL store at ${(await import('./store/pg')).redact(config.databaseUrl)}` : `store in ${config.dataDir}`
    console.error(`quarry: cannot open the ${where}${notWritable(e) ? ' (not writable)' : ''}: ${firstLine(e)}`)
    lock.release()
    process.exit(notWritable(e) ? 2 : 1)
  }
  // The S3 bucket is checked (and created when missing) here, so a wrong endpoint or key stops the start.
  let opened: BlobStore
  try {
    opened = config.s3 ? await createS3BlobStore(config.s3) : await createDiskBlobStore({ dataDir: config.dataDir })
  } catch (e) {
    const where = config.s3 ? `S3 bucket ${config.s3.bucket} at ${config.s3.endpoint}` : `${config.dataDir}/blobs`
    console.error(`quarry: cannot open the blob store (${where})${notWritable(e) ? ' (not writable)' : ''}: ${firstLine(e)}`)
    await store.close()
    lock.release()
    process.exit(notWritable(e) ? 2 : 1)
  }
  // Both stores must take a write before the server serves: a read-only store or blob directory would otherwise
  // start fine and fail every change (500s). One line and exit 2, as for bad configuration: the operator must act.
  const refuse = (line: string): never => {
    console.error(`quarry: ${line}`)
    void store.close()
    lock.release()
    process.exit(2)
  }
  try {
    await store.settings.probeWrite()
  } catch (e) {
    refuse(`the store in ${config.dataDir} is not writable: ${firstLine(e)}`)
  }
  // The blob store's probe is a write and its removal (fsyncs on disk, round trips to S3): it runs while the app is
  // built (mostly waiting, while building is all CPU), and the server listens only once it has passed (bench/README.md,
  // cold start). Its failure is still one line and exit 2, also when building the app failed meanwhile.
  const blobProbe = (async () => {
    // On disk, a probe write can succeed in a fan-out directory an earlier write left behind even when the blob
    // directory itself refuses new ones (most later uploads would then fail): its own writability is checked too.
    await probeBlobStore(opened)
    if (!config.s3) accessSync(join(config.dataDir, 'blobs'), constants.W_OK)
  })().then(
    () => undefined,
    (e: unknown) => ({ e }),
  )
  const blobsWritable = async () => {
    const failed = await blobProbe
    if (!failed) return
    const where = config.s3 ? `the S3 bucket ${config.s3.bucket} at ${config.s3.endpoint}` : `${join(config.dataDir, 'blobs')}`
    refuse(`the blob store (${where}) is not writable: ${firstLine(failed.e)}`)
  }
  const uploads = trackPuts(opened)
  const blobs = uploads.blobs
  // This process among the replicas of one database (lease holder, sender of cluster events): named by its data
  // directory, which one process at a time uses, so a restart after a crash holds its leases again at once. With
  // SQLite there is one process per store: its name is fixed.
  let replica = 'local'
  if (pgPool) {
    try {
      replica = `${hostname()}:${replicaId(config.dataDir)}`
    } catch (e) {
      console.error(`quarry: cannot use the data directory ${config.dataDir}: ${firstLine(e)}`)
      await store.close()
      lock.release()
      process.exit(1)
    }
  }
  let events: ClusterEvents = localEvents()
  if (pgPool) {
    try {
      events = await pgEvents(pgPool, replica, log)
    } catch (e) {
      console.error(`quarry: cannot listen for cluster events on the PostgreSQL store: ${firstLine(e)}`)
      await store.close()
      lock.release()
      process.exit(1)
    }
  }
  const jobs = new Jobs({ leases: store.leases, holder: replica, ttlMs: config.leaseTtlMs, log })
  const built = await createApp({ config, store, blobs, log, deferFirstAdmin: true, events, peerCa, replica }).catch(async (e: unknown) => {
    await blobsWritable()
    throw e
  })
  await blobsWritable()
  const { app, auth, searches, cluster, metrics, createFirstAdmin, entries, readiness, ingest, removal } = built

  // Handlers go in before listening, so a signal that arrives as soon as the port is open still drains.
  let searchSweep: ReturnType<typeof setInterval> | undefined
  let partialSweep: ReturnType<typeof setInterval> | undefined
  let dependencyWatch: ReturnType<typeof setInterval> | undefined
  let syslog: SyslogListeners | undefined
  let stopping = false
  const shutdown = async (signal: string, exitCode = 0) => {
    if (stopping) return
    stopping = true
    log.info('shutting down', { signal, graceMs: config.shutdownGraceMs })
    for (const timer of [searchSweep, partialSweep, dependencyWatch]) if (timer) clearInterval(timer)
    // Leases given up now, so another replica takes the jobs at its next ask rather than after the lease expires.
    const jobsStopped = jobs.stop(1000)
    const stopStarted = performance.now()
    const server = app.server
    if (server) {
      // Stops accepting at once; in-flight requests get the grace period, then their connections are closed (a
      // client trickling an upload in must not hold the shutdown for ever).
      const drained = server.stop(false).then(() => true)
      if (!(await Promise.race([drained, Bun.sleep(config.shutdownGraceMs).then(() => false)]))) {
        log.warn('closing the requests still in flight after the shutdown grace', { graceMs: config.shutdownGraceMs, requests: server.pendingRequests })
        await server.stop(true)
      }
    }
    // Syslog connections stop being read; what was read is stored within the grace, before the store closes.
    await syslog?.stop(config.shutdownGraceMs)
    // The uploads cut off fail and remove their partial files (temporary files, S3 multipart uploads).
    if (!(await uploads.settled(UPLOAD_CLEANUP_MS))) log.warn('an upload cut off by the shutdown did not finish removing its partial file')
    await cluster.stop() // the other replicas stop listing this one and its searches at once
    await searches.close() // running searches stop; saved ones are moved or finished at the next start
    await jobsStopped
    await events.close().catch(() => undefined)
    await store.close()
    lock.release()
    log.info('stopped', { signal, ms: Math.round(performance.now() - stopStarted) })
    process.exit(exitCode)
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))

  try {
    app.listen({
      hostname: config.listenHost,
      port: config.listenPort,
      // Elysia asks for SO_REUSEPORT, with which a second server on the same port starts fine and takes half the
      // connections; a port in use must stop the start instead.
      reusePort: false,
      ...(tls ? { tls: { ...tls, ciphers: TLS12_CIPHERS } } : {}),
      // Every route bounds its own body (server/http/body.ts, the upload routes) and answers 413 with an error body;
      // this is only Bun's outer net, above the largest upload with its form framing. Past it Bun itself answers
      // a bare 413 and closes, for a body no route could take anyway.
      maxRequestBodySize:
        Math.max(config.maxBodyBytes, config.maxFileBytes, config.maxResourceBytes, config.maxImportBytes) + MULTIPART_OVERHEAD,
    })
  } catch (e) {
    const inUse = (e as { code?: string }).code === 'EADDRINUSE'
    const host = config.listenHost.includes(':') ? `[${config.listenHost}]` : config.listenHost
    console.error(`quarry: cannot listen on ${host}:${config.listenPort}: ${inUse ? 'address in use' : e instanceof Error ? e.message : e}`)
    await searches.close()
    await events.close().catch(() => undefined)
    await store.close()
    lock.release()
    process.exit(1)
  }
  const address = `${tls ? 'https' : 'http'}://${config.listenHost.includes(':') ? `[${config.listenHost}]` : config.listenHost}:${app.server?.port}`
  lock.describe(address)
  try {
    // The registry (server/cluster): a replica's key in the status objects is its advertised host:port; a single
    // server keeps the key it always had.
    const port = app.server?.port ?? config.listenPort
    const origin = advertisedOrigin(config, port)
    const clearText = isCluster(config) ? clearTextWarning(origin) : undefined
    if (clearText) log.warn(clearText, { advertise: origin })
    await cluster.start({
      name: isCluster(config) ? hostPort(origin) : engineKey(config.listenHost, port),
      address: origin,
      description: await describeSystem(),
    })
  } catch (e) {
    console.error(`quarry: cannot join the replica registry: ${firstLine(e)}`)
    await shutdown('start-up failure', 1)
  }
  // Only now that the server can serve: a failed start leaves no admin behind, so the password is shown by the start
  // that works. A request in the moment before this sees an empty user table: its login fails like a wrong password.
  try {
    await createFirstAdmin()
  } catch (e) {
    console.error(`quarry: cannot create the first admin account: ${firstLine(e)}`)
    await shutdown('start-up failure', 1)
  }
  log.info('listening', { address, dataDir: config.dataDir, blobStore: blobs.kind, replica, allocator: allocatorSetting() })
  if (config.syslog.listeners.length > 0) {
    try {
      syslog = await startSyslog(config.syslog, { sink: ingest, log, clock: Date.now, tls: tls && { ...tls, ciphers: TLS12_CIPHERS } })
    } catch (e) {
      if (!(e instanceof SyslogListenError)) throw e
      console.error(`quarry: ${e.message}`)
      await shutdown('start-up failure', 1)
    }
  }
  if (contentsLater)
    secureDataDirContents(config.dataDir).then(reportTightened, (e: unknown) => log.error('the data directory could not be walked to tighten its modes', { error: firstLine(e) }))
  setTimeout(() => {
    metrics.warmUp().catch((e: unknown) => log.error('the metrics registry could not be made', { error: firstLine(e) }))
  }, METRICS_WARMUP_MS).unref()

  // Cluster-wide jobs: they act on the shared store and blob store, so one replica at a time runs each (server/runtime/jobs.ts).
  jobs.start({
    name: 'session-sweep',
    everyMs: config.sweepIntervalMs,
    // expired sessions (their sockets end on every replica) and the login throttle's lapsed rows
    run: () => auth.sweepExpiredSessions(),
  })
  jobs.start({
    name: 'notification-sweep',
    everyMs: config.sweepIntervalMs,
    // expired notifications are already invisible; this only frees their rows
    run: () => store.notifications.sweepExpired(Date.now()),
  })
  jobs.start({
    name: 'segment-compaction',
    everyMs: config.compactIntervalMs,
    // Rows into sealed segments (server/search/segments.ts): one replica at a time, so two do not write the same
    // segment (if they did, the second transaction finds its rows gone, writes nothing and drops its blob). A period
    // that finds a run started by ingest in flight leaves the rows to it and the next period: two runs of this process
    // over the same rows would compress the same segment twice and drop one (seen in bench/engine.sh's ingest).
    run: async () => (entries.compacting ? 0 : entries.compact()),
  })
  // Between ingest batches too, in short runs, by the holder of the compaction's lease: it keeps up with the ingest.
  entries.compactOnIngest(() => jobs.holds('segment-compaction'))
  jobs.start({
    name: 'retention-sweep',
    everyMs: config.retentionIntervalMs,
    // At takeover too: a deletion cut off by a crash is finished at the restart (server/search/retention.ts).
    atTakeover: true,
    run: () => removal.sweep(),
  })
  jobs.start({
    name: 'orphaned-searches',
    everyMs: ORPHAN_CHECK_MS,
    // Searches a dead replica was saving: listed in ERROR with the reason, for their owners (server/cluster).
    run: () => cluster.failOrphans(),
  })
  jobs.start({
    name: 'blob-sweep',
    everyMs: BLOB_SWEEP_MS,
    atTakeover: true,
    // In the background: the server answers while a large store is being listed.
    run: () => sweepBlobs({ blobs, references: () => blobReferences(store), now: Date.now(), graceMs: config.blobSweepGraceMs, log }),
  })

  // The store and the blob store are checked even when no load balancer asks, so that an outage and its end are
  // logged (once each, server/runtime/dependencies.ts) whatever the traffic.
  const watchDependencies = () => void readiness().catch(() => undefined)
  watchDependencies()
  dependencyWatch = setInterval(watchDependencies, DEPENDENCY_CHECK_MS)
  dependencyWatch.unref()

  // Per replica: each sweeps what only it has, the searches it runs (in its memory) and the partial files in its own
  // data directory.
  searchSweep = setInterval(() => searches.sweep(), SEARCH_SWEEP_MS)
  searchSweep.unref()

  // Partial files of uploads and imports cut off by a crash go without waiting for the next start.
  partialSweep = setInterval(() => {
    Promise.all([opened.sweepPartial(PARTIAL_GRACE_MS), searches.sweepWorkFiles(PARTIAL_GRACE_MS)]).then(
      ([blobTemps, workFiles]) => {
        if (blobTemps + workFiles > 0) log.info('partial files removed', { blobTemps, workFiles })
      },
      (e: unknown) => log.error('partial file sweep failed', { error: e instanceof Error ? e.message : String(e) }),
    )
  }, PARTIAL_SWEEP_MS)
  partialSweep.unref()
}

/**
 * The TLS 1.2 suites offered: forward secrecy (ECDHE) and AEAD only, for ECDSA and RSA certificates (Mozilla's
 * "intermediate" profile without its finite-field DHE). Suites with RSA key exchange (AES128-SHA, AES128-GCM-SHA256)
 * would let a stolen key decrypt recorded traffic, and CBC suites are refused too. TLS 1.3, whose suites all have
 * forward secrecy, is offered as well; TLS 1.1 and older the runtime never accepts.
 */
const TLS12_CIPHERS = [
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
].join(':')

/**
 * The PEM certificate (chain) and key of QUARRY_TLS_CERT and QUARRY_TLS_KEY, checked before anything starts: an
 * unreadable file, one that is not PEM, or a key that does not belong to the certificate is one line naming it.
 */
async function readTls(files: { certFile: string; keyFile: string }): Promise<{ cert: string; key: string }> {
  // node:crypto only with TLS: its import alone costs ~8 ms of a start (bench/README.md, cold start).
  const { X509Certificate, createPrivateKey } = await import('node:crypto')
  const read = (name: string, path: string) => {
    try {
      return readFileSync(path, 'utf8')
    } catch (e) {
      throw new Error(`${name}: cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`)
    }
  }
  const cert = read('QUARRY_TLS_CERT', files.certFile)
  const key = read('QUARRY_TLS_KEY', files.keyFile)
  let x509: InstanceType<typeof X509Certificate>
  try {
    x509 = new X509Certificate(cert)
  } catch {
    throw new Error(`QUARRY_TLS_CERT: ${files.certFile} is not a PEM certificate`)
  }
  let privateKey
  try {
    privateKey = createPrivateKey(key)
  } catch {
    throw new Error(`QUARRY_TLS_KEY: ${files.keyFile} is not a PEM private key (or it is encrypted)`)
  }
  if (!x509.checkPrivateKey(privateKey)) throw new Error(`QUARRY_TLS_KEY: ${files.keyFile} is not the key of the certificate in ${files.certFile}`)
  return { cert, key }
}

/**
 * The CA certificates of QUARRY_PEER_CA (PEM), checked before anything starts: an unreadable file, or one without a
 * PEM certificate, is one line naming it.
 */
async function readPeerCa(file: string): Promise<string> {
  const { X509Certificate } = await import('node:crypto')
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (e) {
    throw new Error(`QUARRY_PEER_CA: cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`)
  }
  const first = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(text)?.[0]
  try {
    if (!first) throw new Error('no certificate')
    new X509Certificate(first)
  } catch {
    throw new Error(`QUARRY_PEER_CA: ${file} holds no PEM certificate`)
  }
  return text
}

/** host:port of an origin, with the scheme's default port spelt out (the status objects' key shape). */
function hostPort(origin: string): string {
  const u = new URL(origin)
  return `${u.hostname}:${u.port || (u.protocol === 'https:' ? '443' : '80')}`
}

/** A file system or SQLite refusal to write: the operator must fix modes, ownership or the mount (exit 2). */
function notWritable(e: unknown): boolean {
  const code = String((e as { code?: unknown })?.code ?? '')
  return ['EACCES', 'EPERM', 'EROFS'].includes(code) || code.startsWith('SQLITE_READONLY') || /readonly database/i.test(firstLine(e))
}

function firstLine(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0]!
}

// Not a top-level await: the server also builds as one CommonJS bundle with bytecode (`npm run build:server`,
// started by `bun dist/server/main.js`: half the cold start of `bun run server/main.ts`, bench/README.md).
if (import.meta.main) void main()
