// Configuration: read once from the environment at start, typed and validated.
// Nothing else in the server reads process.env; createApp() receives a Config.
import { memoryLimit } from './memory'
import type { S3Config } from '../blob/s3'
import { type TrustedProxies, parseTrustedProxies } from '../http/client-address'
import { type SyslogConfig, parseSyslogConfig } from '../ingest/syslog/config'
import { TIMESTAMP_FORMATS, timestampFormat, zoneProblem } from '../ingest/timestamps'

export type LogLevel = 'debug' | 'info' | 'warn' | 'error'

export interface Config {
  listenHost: string
  listenPort: number
  dataDir: string
  /** Initial password of UID 1 `admin`, used only when the store is empty. */
  adminPassword: string | undefined
  /**
   * HS256 signing key from configuration; when absent it is generated once and kept in the store (server_settings), so
   * every replica on one PostgreSQL database signs and checks with the same key (the first to start makes it).
   */
  jwtKey: string | undefined
  sessionIdleMs: number
  sessionLifetimeMs: number
  /** Largest JSON, form or text request body. */
  maxBodyBytes: number
  maxFileBytes: number
  maxResourceBytes: number
  /** Largest search archive POST /api/searchctrl/import accepts (compressed bytes). */
  maxImportBytes: number
  /** Bytes each non-admin user may store (resources, user files, saved searches; server/store/quota.ts); undefined: no limit. */
  userQuotaBytes: number | undefined
  /** Distinct ingest tags the store may hold; a batch that would pass it is refused whole (413). */
  maxTags: number
  /** Bytes per second each user may ingest, per replica (server/ingest/rate.ts); undefined: no limit. */
  ingestRateBytes: number | undefined
  /** Bytes of ingest batches being stored at once, all listeners together; past it a batch is refused (503, busy). */
  ingestMaxPendingBytes: number
  /** QUARRY_OTLP_TAG_ATTRIBUTE: the resource attribute whose value is an OTLP log record's tag. */
  otlpTagAttribute: string
  /** QUARRY_OTLP_DEFAULT_TAG: the tag of OTLP records whose resource lacks that attribute. */
  otlpDefaultTag: string
  /** QUARRY_LOKI_TAG_LABEL: the label whose value is a Loki push entry's tag. */
  lokiTagLabel: string
  /** QUARRY_LOKI_DEFAULT_TAG: the tag of Loki streams without that label. */
  lokiDefaultTag: string
  /** QUARRY_INGEST_MAX_DECOMPRESSED: the most a compressed shipper's body (gzip, snappy; every protocol) may decompress to. */
  ingestMaxDecompressedBytes: number
  /** QUARRY_INGEST_MAX_RECORDS: the most records (OTLP log records, Loki entries) one shipper's request may hold. */
  ingestMaxRecords: number
  /** Documents one Elasticsearch bulk request may hold; past it the request is refused whole (413). */
  esMaxDocs: number
  /** Events (or raw lines) one Splunk HEC request may hold; past it the request is refused whole (413). */
  hecMaxEvents: number
  /** The tag of a HEC event that names neither a sourcetype nor an index that is a valid tag. */
  hecDefaultTag: string
  /** Bytes that must stay free on the data directory's filesystem; writes past it are refused (507); 0: no floor. */
  minFreeSpaceBytes: number
  /** A search that is neither backgrounded nor saved is removed this long after its last client left. */
  searchGraceMs: number
  /** Searches that are not saved one user may have at a time (running or kept); a launch past it is refused (429). */
  maxSearchesPerUser: number
  /**
   * Open WebSockets (search and stats) one user may hold on one replica, those of their API tokens included; an
   * upgrade past it is refused (429).
   */
  wsPerUser: number
  /** Unreferenced blobs younger than this are left alone by the blob sweep (uploads in flight). */
  blobSweepGraceMs: number
  /** Failed logins per account (or unknown user name) within loginFailureWindowMs before 429 (docs/api.md). */
  /** After SIGTERM/SIGINT, in-flight requests get this long to finish; then their connections are closed. */
  shutdownGraceMs: number
  loginMaxFailures: number
  loginFailureWindowMs: number
  /** UID 1 is never locked: its failed logins are instead limited to this many per minute, shared by all requests. */
  adminLoginRate: number
  /** Most rows the login throttle keeps at once: new user names past it get 429 until the sweep frees rows. */
  loginThrottleEntries: number
  minPasswordLength: number
  /** The access-control policy of docs/api.md "API tokens": when true, only admins may use the token API. */
  tokenApiAdminOnly: boolean
  logLevel: LogLevel
  /**
   * Where an upload's SHA-1 is computed: 'worker' (a thread of its own, beside the receiving; the default) or 'thread'
   * (the JS thread, no hand-off: less CPU, more memory held; server/blob/sha1.ts).
   */
  uploadHash: 'worker' | 'thread'
  /** The S3 blob store; when undefined, blobs live on local disk under dataDir. */
  s3: S3Config | undefined
  /** The PostgreSQL store (postgres://user:password@host[:port]/database); when undefined, SQLite in dataDir. */
  databaseUrl: string | undefined
  /**
   * QUARRY_SINGLE_SERVER: this server is alone on its PostgreSQL database, so its blobs may stay in its data directory.
   * Without it, PostgreSQL needs the S3 blob store (replicas share their blobs there).
   */
  singleServer: boolean
  /** A periodic job's lease lasts this long unrenewed: a dead replica's jobs move to another within it (server/runtime/jobs.ts). */
  leaseTtlMs: number
  /** Expired sessions, login-throttle rows and notifications are removed this often (by one replica of a cluster). */
  sweepIntervalMs: number
  /** Entries are compacted into sealed segments of about this many bytes (server/search/segments.ts). */
  segmentBytes: number
  /** Bytes of decoded segments kept in memory between searches (server/search/segments.ts). */
  segmentCacheBytes: number
  /** How often the compaction runs (by one replica of a cluster). */
  compactIntervalMs: number
  /**
   * The retention rules of QUARRY_RETENTION (tag ''), QUARRY_RETENTION_TAGS and QUARRY_RETENTION_SIZES; the admin API's
   * stored rules take precedence field by field (server/search/retention.ts). 0: no limit.
   */
  retentionRules: { tag: string; maxAgeMs: number | null; maxBytes: number | null }[]
  /** How often the retention sweep runs (by one replica of a cluster). */
  retentionIntervalMs: number
  /** Cost of the password hash; only tests lower it (never taken from the environment). */
  passwordHash: { memoryCost: number; timeCost: number }
  buildId: string
  /** GET /api/settings `MapTileUrl`: where the GUI fetches map tiles. */
  mapTileUrl: string
  /** GET /api/settings `DisableMapTileProxy`: true tells the GUI to fetch tiles from mapTileUrl itself. */
  disableMapTileProxy: boolean
  /** Unexpired notifications one sender may hold at once (QUARRY_NOTIFICATIONS_PER_USER). */
  notificationsPerUser: number
  /** Lifetime of a notification sent without an expiry (QUARRY_NOTIFICATION_LIFETIME). */
  notificationLifetimeMs: number
  /** Bearer token GET /metrics requires; undefined: /metrics is public (like Grafana's by default). */
  metricsToken: string | undefined
  /** Reverse proxies whose X-Forwarded-For is believed (server/http/client-address.ts); undefined: none. */
  trustedProxies: TrustedProxies | undefined
  /** Certificate and key files (PEM) for HTTPS; undefined: plain HTTP. Read by server/main.ts at start. */
  tls: { certFile: string; keyFile: string } | undefined
  /**
   * QUARRY_ADVERTISE: where other replicas reach this one (an http(s) origin); undefined: QUARRY_LISTEN's address
   * with the port the server got (see clusterRefusal).
   */
  advertise: string | undefined
  /** QUARRY_CLUSTER_SECRET: what replicas show each other on the internal routes (server/cluster); required in a cluster. */
  clusterSecret: string | undefined
  /** QUARRY_BLOB_TIMEOUT: how long a blob store operation may wait for the store before it fails with 503. */
  blobTimeoutMs: number
  /**
   * QUARRY_PEER_CA: a PEM file of the CA certificates the other replicas' https addresses are checked against
   * (read by server/main.ts at start); undefined: the system's CAs.
   */
  peerCaFile: string | undefined
  /** The syslog listeners (QUARRY_SYSLOG_*; none unless configured) and their bounds (server/ingest/syslog). */
  syslog: SyslogConfig
  /** QUARRY_TIMESTAMP_ZONE: the zone of times read from lines that write none (server/ingest/timestamps.ts). */
  timestampZone: string
  /** QUARRY_TIMESTAMP_FORMAT: the one timestamp format looked for in lines (the platform's name); undefined: any. */
  timestampFormat: string | undefined
  /** QUARRY_INGEST_MAX_LINE: the longest line POST /api/ingest/lines takes; a longer one refuses the request (400). */
  ingestMaxLineBytes: number
}

export class ConfigError extends Error {}

const S3_VARIABLES = ['QUARRY_S3_ENDPOINT', 'QUARRY_S3_BUCKET', 'QUARRY_S3_ACCESS_KEY', 'QUARRY_S3_SECRET_KEY', 'QUARRY_S3_REGION']

const KNOWN = new Set([
  'QUARRY_LISTEN', 'QUARRY_DATA_DIR', 'QUARRY_ADMIN_PASSWORD', 'QUARRY_JWT_KEY', 'QUARRY_SESSION_IDLE_TIMEOUT',
  'QUARRY_SESSION_LIFETIME', 'QUARRY_MAX_BODY_SIZE', 'QUARRY_MAX_FILE_SIZE', 'QUARRY_MAX_RESOURCE_SIZE', 'QUARRY_BLOB_SWEEP_GRACE',
  'QUARRY_LOGIN_MAX_FAILURES', 'QUARRY_LOGIN_FAILURE_WINDOW', 'QUARRY_MIN_PASSWORD_LENGTH', 'QUARRY_LOG_LEVEL',
  'QUARRY_MAP_TILE_URL', 'QUARRY_DISABLE_MAP_TILE_PROXY',
  'QUARRY_USER_QUOTA',
  'QUARRY_MAX_TAGS', 'QUARRY_INGEST_RATE', 'QUARRY_INGEST_MAX_PENDING', 'QUARRY_MIN_FREE_SPACE',
  'QUARRY_ES_MAX_DOCS', 'QUARRY_HEC_MAX_EVENTS', 'QUARRY_HEC_DEFAULT_TAG',
  'QUARRY_NOTIFICATIONS_PER_USER', 'QUARRY_NOTIFICATION_LIFETIME',
  'QUARRY_ADMIN_LOGIN_RATE', 'QUARRY_LOGIN_THROTTLE_ENTRIES',
  'QUARRY_BUILD_ID', 'QUARRY_TOKEN_API_ADMIN_ONLY', 'QUARRY_SEARCH_GRACE', 'QUARRY_MAX_IMPORT_SIZE', 'QUARRY_SHUTDOWN_GRACE',
  'QUARRY_DATABASE_URL', 'QUARRY_SINGLE_SERVER', 'QUARRY_LEASE_TTL', 'QUARRY_SWEEP_INTERVAL', 'QUARRY_SEGMENT_SIZE', 'QUARRY_SEGMENT_CACHE', 'QUARRY_COMPACT_INTERVAL', 'QUARRY_ADVERTISE', 'QUARRY_CLUSTER_SECRET',
  'QUARRY_RETENTION', 'QUARRY_RETENTION_TAGS', 'QUARRY_RETENTION_SIZES', 'QUARRY_RETENTION_INTERVAL',
  'QUARRY_MAX_SEARCHES_PER_USER', 'QUARRY_UPLOAD_HASH', 'QUARRY_WS_PER_USER',
  'QUARRY_METRICS_TOKEN', 'QUARRY_TRUSTED_PROXIES', 'QUARRY_TLS_CERT', 'QUARRY_TLS_KEY',
  'QUARRY_BLOB_TIMEOUT', 'QUARRY_PEER_CA',
  'QUARRY_OTLP_TAG_ATTRIBUTE', 'QUARRY_OTLP_DEFAULT_TAG', 'QUARRY_LOKI_TAG_LABEL', 'QUARRY_LOKI_DEFAULT_TAG',
  'QUARRY_INGEST_MAX_DECOMPRESSED', 'QUARRY_INGEST_MAX_RECORDS',
  'QUARRY_TIMESTAMP_ZONE', 'QUARRY_TIMESTAMP_FORMAT', 'QUARRY_INGEST_MAX_LINE',
  ...S3_VARIABLES,
  'QUARRY_SYSLOG_TCP', 'QUARRY_SYSLOG_UDP', 'QUARRY_SYSLOG_TLS', 'QUARRY_SYSLOG_TAG', 'QUARRY_SYSLOG_TCP_TAG', 'QUARRY_SYSLOG_UDP_TAG',
  'QUARRY_SYSLOG_TLS_TAG', 'QUARRY_SYSLOG_MAX_MESSAGE', 'QUARRY_SYSLOG_MAX_CONNECTIONS', 'QUARRY_SYSLOG_FRAME_TIMEOUT',
  'QUARRY_SYSLOG_UDP_QUEUE',
  // read by the CLI, not the server
  'QUARRY_URL', 'QUARRY_TOKEN', 'QUARRY_DEBUG', 'QUARRY_CA',
])

const UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }
const UNITS_BYTES: Record<string, number> = { '': 1, b: 1, k: 1024, kib: 1024, m: 1024 ** 2, mib: 1024 ** 2, g: 1024 ** 3, gib: 1024 ** 3 }

/** "90s", "60m", "24h", "7d" or a bare number of seconds. */
export function parseDuration(name: string, raw: string): number {
  const m = /^(\d+)(ms|s|m|h|d)?$/.exec(raw.trim())
  if (!m) throw new ConfigError(`${name}: "${raw}" is not a duration (examples: 90s, 60m, 24h)`)
  const ms = Number(m[1]) * UNITS_MS[m[2] ?? 's']!
  if (ms <= 0 || !Number.isSafeInteger(ms)) throw new ConfigError(`${name}: must be a positive duration`)
  return ms
}

/** "1048576", "512KiB", "10MiB", "2GiB" (case-insensitive). */
export function parseBytes(name: string, raw: string): number {
  const m = /^(\d+)\s*([a-z]*)$/i.exec(raw.trim())
  const unit = UNITS_BYTES[(m?.[2] ?? '').toLowerCase()]
  if (!m || unit === undefined) throw new ConfigError(`${name}: "${raw}" is not a size (examples: 1048576, 512KiB, 10MiB)`)
  const bytes = Number(m[1]) * unit
  if (bytes <= 0 || !Number.isSafeInteger(bytes)) throw new ConfigError(`${name}: must be a positive size`)
  return bytes
}

/** A size, or `unlimited` (undefined) for no limit at all. */
function parseLimit(name: string, raw: string): number | undefined {
  if (raw.trim().toLowerCase() === 'unlimited') return undefined
  if (/^\s*0+\s*[a-z]*\s*$/i.test(raw)) throw new ConfigError(`${name}: "${raw}" must be a positive size or unlimited (0 is not a limit)`)
  try {
    return parseBytes(name, raw)
  } catch {
    throw new ConfigError(`${name}: "${raw}" is not a size or unlimited (examples: 10GiB, 500MiB, unlimited)`)
  }
}

/** A size, or 0 for none. */
function parseSizeOrZero(name: string, raw: string): number {
  if (/^\s*0+\s*[a-z]*\s*$/i.test(raw)) return 0
  try {
    return parseBytes(name, raw)
  } catch {
    throw new ConfigError(`${name}: "${raw}" is not a size (examples: 1GiB, 500MiB, 0 for none)`)
  }
}

/** A tag name (engine/parse.ts TAG_NAME): 1 to 128 letters, digits, '.', '_' or '-'. */
function parseTag(name: string, raw: string): string {
  const v = raw.trim()
  if (!/^[A-Za-z0-9._-]{1,128}$/.test(v)) throw new ConfigError(`${name}: "${raw}" is not a tag (1 to 128 letters, digits, '.', '_' or '-')`)
  return v
}

/** An attribute or label name: printable, no blanks, at most 256 characters. */
function parseName(name: string, raw: string): string {
  const v = raw.trim()
  if (!/^[\x21-\x7e]{1,256}$/.test(v)) throw new ConfigError(`${name}: "${raw}" is not a name (1 to 256 printable characters without blanks)`)
  return v
}

function parseBool(name: string, raw: string): boolean {
  const v = raw.trim().toLowerCase()
  if (['1', 'true', 'yes', 'on'].includes(v)) return true
  if (['0', 'false', 'no', 'off'].includes(v)) return false
  throw new ConfigError(`${name}: "${raw}" must be true or false`)
}

function parseCount(name: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min || Number(raw) > max)
    throw new ConfigError(`${name}: "${raw}" must be a whole number from ${min} to ${max}`)
  return Number(raw)
}

/** A retention period: a duration, or `none` (0: keep for ever). */
function parseRetention(name: string, raw: string): number {
  if (['none', 'forever', '0'].includes(raw.trim().toLowerCase())) return 0
  try {
    return parseDuration(name, raw)
  } catch {
    throw new ConfigError(`${name}: "${raw}" is not a period or none (examples: 30d, 720h, none)`)
  }
}

/**
 * `tag=value,tag=value` (QUARRY_RETENTION_TAGS, QUARRY_RETENTION_SIZES): each tag once, each value read by `value`.
 */
function parseTagList(name: string, raw: string | undefined, value: (name: string, raw: string) => number): Map<string, number> {
  const out = new Map<string, number>()
  if (raw === undefined || raw.trim() === '') return out
  for (const item of raw.split(',')) {
    const m = /^\s*([A-Za-z0-9._-]{1,128})\s*=\s*(\S+)\s*$/.exec(item)
    if (!m) throw new ConfigError(`${name}: "${item.trim()}" is not tag=value (example: web=30d,audit=365d)`)
    if (out.has(m[1]!)) throw new ConfigError(`${name}: tag ${m[1]} is named twice`)
    out.set(m[1]!, value(`${name} (${m[1]})`, m[2]!))
  }
  return out
}

function parseRetentionRules(get: (name: string) => string | undefined): Config['retentionRules'] {
  const rules = new Map<string, { tag: string; maxAgeMs: number | null; maxBytes: number | null }>()
  const rule = (tag: string) => rules.get(tag) ?? rules.set(tag, { tag, maxAgeMs: null, maxBytes: null }).get(tag)!
  const store = get('QUARRY_RETENTION')
  if (store !== undefined) rule('').maxAgeMs = parseRetention('QUARRY_RETENTION', store)
  for (const [tag, ms] of parseTagList('QUARRY_RETENTION_TAGS', get('QUARRY_RETENTION_TAGS'), parseRetention)) rule(tag).maxAgeMs = ms
  const size = (n: string, raw: string) => (['none', 'unlimited', '0'].includes(raw.toLowerCase()) ? 0 : parseBytes(n, raw))
  for (const [tag, bytes] of parseTagList('QUARRY_RETENTION_SIZES', get('QUARRY_RETENTION_SIZES'), size)) rule(tag).maxBytes = bytes
  return [...rules.values()]
}

/**
 * Map tiles (GET /api/settings): Quarry runs no tile proxy of its own (the original platform serves one under
 * /api/maps), so by default the GUI is told to fetch OpenStreetMap's tiles itself.
 */
export const DEFAULT_MAP_TILE_URL = 'https://tile.openstreetmap.org'

/** An http(s) URL that every client is given: no user name or password in it. */
function parsePublicUrl(name: string, raw: string): string {
  const value = raw.trim()
  let url: URL | undefined
  try {
    url = new URL(value)
  } catch {}
  if (!url || !['http:', 'https:'].includes(url.protocol) || url.username || url.password)
    throw new ConfigError(`${name}: "${raw}" must be an http(s) URL without credentials (example: https://tile.openstreetmap.org)`)
  return value
}

export function parseListen(raw: string): { host: string; port: number } {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):(\d{1,5})$/.exec(raw.trim())
  const port = Number(m?.[2])
  if (!m || port < 0 || port > 65535) throw new ConfigError(`QUARRY_LISTEN: "${raw}" must be host:port (example: 127.0.0.1:8080)`)
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port }
}

/**
 * The S3 blob store is used when any QUARRY_S3_* variable is set; then endpoint, bucket and both keys are required
 * (the region defaults to us-east-1, MinIO's default).
 */
function parseS3(get: (name: string) => string | undefined): S3Config | undefined {
  if (!S3_VARIABLES.some((name) => get(name) !== undefined)) return undefined
  const required = (name: string) => {
    const v = get(name)
    if (v === undefined) throw new ConfigError(`${name}: must be set when other QUARRY_S3_* variables are (the S3 blob store)`)
    return v
  }
  const endpoint = required('QUARRY_S3_ENDPOINT')
  let url: URL | undefined
  try {
    url = new URL(endpoint)
  } catch {}
  if (!url || !['http:', 'https:'].includes(url.protocol) || url.pathname !== '/' || url.search || url.username)
    throw new ConfigError(`QUARRY_S3_ENDPOINT: "${endpoint}" must be an http(s)://host[:port] URL (example: https://minio.example.com:9000)`)
  const bucket = required('QUARRY_S3_BUCKET')
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket))
    throw new ConfigError(`QUARRY_S3_BUCKET: "${bucket}" is not a valid bucket name (3-63 lowercase letters, digits, dots, hyphens)`)
  const accessKey = required('QUARRY_S3_ACCESS_KEY')
  const secretKey = required('QUARRY_S3_SECRET_KEY')
  const region = get('QUARRY_S3_REGION') ?? 'us-east-1'
  if (!/^[a-z0-9-]+$/.test(region)) throw new ConfigError(`QUARRY_S3_REGION: "${region}" is not a region name (example: us-east-1)`)
  return { endpoint: url.origin, bucket, accessKey, secretKey, region }
}

/**
 * QUARRY_DATABASE_URL: a postgres:// (or postgresql://) URL with a host and a database name. Only its shape is
 * checked here; whether the server answers is checked when the store opens.
 */
function parseDatabaseUrl(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined
  const example = '(example: postgres://quarry:secret@db.example.com:5432/quarry)'
  let url: URL | undefined
  try {
    url = new URL(raw)
  } catch {}
  if (!url || !['postgres:', 'postgresql:'].includes(url.protocol))
    throw new ConfigError(`QUARRY_DATABASE_URL: must be a postgres://user:password@host[:port]/database URL ${example}`)
  if (!url.hostname) throw new ConfigError(`QUARRY_DATABASE_URL: has no host ${example}`)
  if (url.pathname.length <= 1) throw new ConfigError(`QUARRY_DATABASE_URL: names no database ${example}`)
  return raw
}

/** Shorter tokens could be guessed by a scraper that may try as often as it likes. */
const MIN_METRICS_TOKEN = 16

function parseMetricsToken(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined
  if (raw.length < MIN_METRICS_TOKEN || !/^[\x21-\x7e]+$/.test(raw))
    throw new ConfigError(`QUARRY_METRICS_TOKEN: must be at least ${MIN_METRICS_TOKEN} printable characters without spaces`)
  return raw
}

/** Both files or neither; whether they can be read is checked when the server starts (server/main.ts). */
function parseTls(get: (name: string) => string | undefined): Config['tls'] {
  const certFile = get('QUARRY_TLS_CERT')
  const keyFile = get('QUARRY_TLS_KEY')
  if (certFile === undefined && keyFile === undefined) return undefined
  if (certFile === undefined) throw new ConfigError('QUARRY_TLS_CERT: must be set when QUARRY_TLS_KEY is (HTTPS needs both)')
  if (keyFile === undefined) throw new ConfigError('QUARRY_TLS_KEY: must be set when QUARRY_TLS_CERT is (HTTPS needs both)')
  return { certFile, keyFile }
}

/**
 * QUARRY_ADVERTISE: `host:port` or an http(s)://host:port URL with nothing after the port; answered as an origin
 * (`http://` for host:port, or `https://` when this server serves TLS itself).
 */
function parseAdvertise(raw: string | undefined, tls: boolean): string | undefined {
  if (raw === undefined) return undefined
  const example = '(examples: 10.0.0.5:8080, https://quarry-2.internal:8443)'
  const value = raw.trim()
  let url: URL | undefined
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `${tls ? 'https' : 'http'}://${value}`)
  } catch {}
  if (!url || !['http:', 'https:'].includes(url.protocol) || !url.hostname || url.username || url.password || url.search || url.hash || url.pathname !== '/')
    throw new ConfigError(`QUARRY_ADVERTISE: "${raw}" must be host:port or an http(s)://host:port URL without a path ${example}`)
  if (!url.port && !/:\d+\/?$/.test(value)) throw new ConfigError(`QUARRY_ADVERTISE: "${raw}" names no port ${example}`)
  if (['0.0.0.0', '[::]'].includes(url.hostname) || url.port === '0')
    throw new ConfigError(`QUARRY_ADVERTISE: "${raw}" is not an address another replica can reach ${example}`)
  return url.origin
}

/** Shortest QUARRY_CLUSTER_SECRET, in bytes: as strong as the JWT signing key generated for a single server. */
export const MIN_CLUSTER_SECRET_BYTES = 32

/** A wildcard listen address names no host another replica could reach. */
const isWildcard = (host: string) => ['', '0.0.0.0', '::', '[::]'].includes(host)

/**
 * Why this configuration cannot serve as a replica of a cluster (QUARRY_DATABASE_URL set), as one line; undefined
 * when it can (or when it is not a cluster). Checked by the server at start only: the admin commands that open the
 * store need neither the secret nor an address.
 */
export function clusterRefusal(config: Config): string | undefined {
  if (!isCluster(config)) return undefined
  if (config.clusterSecret === undefined)
    return `QUARRY_CLUSTER_SECRET: must be set when QUARRY_DATABASE_URL is (replicas authenticate each other with it; at least ${MIN_CLUSTER_SECRET_BYTES} bytes, e.g. from openssl rand -base64 48)`
  if (config.advertise === undefined && isWildcard(config.listenHost))
    return `QUARRY_ADVERTISE: must be set when QUARRY_LISTEN listens on every address (${config.listenHost || '0.0.0.0'}) and QUARRY_DATABASE_URL is set: other replicas need the address that reaches this one (example: 10.0.0.5:8080)`
  return undefined
}

/** Whether this server is a replica of a cluster: on PostgreSQL, not declared alone there (QUARRY_SINGLE_SERVER). */
export function isCluster(config: Config): boolean {
  return config.databaseUrl !== undefined && !config.singleServer
}

/** Where other replicas reach this server once it listens on `port`: QUARRY_ADVERTISE, else QUARRY_LISTEN's host. */
export function advertisedOrigin(config: Config, port: number): string {
  if (config.advertise) return config.advertise
  const host = config.listenHost.includes(':') ? `[${config.listenHost}]` : config.listenHost
  return `${config.tls ? 'https' : 'http'}://${host}:${port}`
}

function parseTimestampZone(raw: string): string {
  const problem = zoneProblem(raw)
  if (problem) throw new ConfigError(`QUARRY_TIMESTAMP_ZONE: ${problem}`)
  return raw.trim()
}

function parseTimestampFormat(raw: string | undefined): string | undefined {
  if (raw === undefined || raw.trim() === '') return undefined
  const format = timestampFormat(raw)
  if (!format) throw new ConfigError(`QUARRY_TIMESTAMP_FORMAT: "${raw}" is not a timestamp format (one of ${TIMESTAMP_FORMATS.join(', ')})`)
  return format
}

function parseClusterSecret(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined
  if (Buffer.byteLength(raw) < MIN_CLUSTER_SECRET_BYTES)
    throw new ConfigError(`QUARRY_CLUSTER_SECRET: must be at least ${MIN_CLUSTER_SECRET_BYTES} bytes (e.g. from openssl rand -base64 48)`)
  return raw
}

function trustedProxies(raw: string | undefined): TrustedProxies | undefined {
  if (raw === undefined) return undefined
  try {
    return parseTrustedProxies(raw)
  } catch (e) {
    throw new ConfigError(`QUARRY_TRUSTED_PROXIES: ${(e as Error).message}`)
  }
}

/** Builds the configuration from an environment; throws ConfigError with one clear line. */
export function loadConfig(env: Record<string, string | undefined>): { config: Config; warnings: string[] } {
  const get = (name: string) => {
    const v = env[name]
    return v === undefined || v === '' ? undefined : v
  }
  const warnings = Object.keys(env)
    .filter((k) => k.startsWith('QUARRY_') && !KNOWN.has(k))
    .map((k) => `unknown configuration variable ${k} is ignored`)

  const listen = parseListen(get('QUARRY_LISTEN') ?? '127.0.0.1:8080')
  const logLevel = (get('QUARRY_LOG_LEVEL') ?? 'info') as LogLevel
  if (!['debug', 'info', 'warn', 'error'].includes(logLevel))
    throw new ConfigError(`QUARRY_LOG_LEVEL: "${logLevel}" must be one of debug, info, warn, error`)
  const uploadHash = (get('QUARRY_UPLOAD_HASH') ?? 'worker') as Config['uploadHash']
  if (!['worker', 'thread'].includes(uploadHash))
    throw new ConfigError(`QUARRY_UPLOAD_HASH: "${uploadHash}" must be worker or thread`)
  const minPasswordLength = parseCount('QUARRY_MIN_PASSWORD_LENGTH', get('QUARRY_MIN_PASSWORD_LENGTH') ?? '8', 1, 128)
  const adminPassword = get('QUARRY_ADMIN_PASSWORD')
  if (adminPassword !== undefined && adminPassword.length < minPasswordLength)
    throw new ConfigError(`QUARRY_ADMIN_PASSWORD: must be at least ${minPasswordLength} characters`)
  const jwtKey = get('QUARRY_JWT_KEY')
  if (jwtKey !== undefined && jwtKey.length < 32) throw new ConfigError('QUARRY_JWT_KEY: must be at least 32 characters')
  const leaseTtlMs = parseDuration('QUARRY_LEASE_TTL', get('QUARRY_LEASE_TTL') ?? '30s')
  // Below a second, a store round trip or a busy event loop could outlast the lease of a living holder.
  if (leaseTtlMs < 1000 || leaseTtlMs > 3_600_000) throw new ConfigError('QUARRY_LEASE_TTL: must be from 1s to 1h')
  const sweepIntervalMs = parseDuration('QUARRY_SWEEP_INTERVAL', get('QUARRY_SWEEP_INTERVAL') ?? '60s')
  if (sweepIntervalMs < 1000 || sweepIntervalMs > 86_400_000) throw new ConfigError('QUARRY_SWEEP_INTERVAL: must be from 1s to 24h')
  const segmentBytes = parseBytes('QUARRY_SEGMENT_SIZE', get('QUARRY_SEGMENT_SIZE') ?? '4MiB')
  if (segmentBytes < 1024 || segmentBytes > 1024 ** 3) throw new ConfigError('QUARRY_SEGMENT_SIZE: must be from 1KiB to 1GiB')
  // A quarter of the memory the process may use, at most 1 GiB: searches over the recent days of a small server's logs
  // read segments from memory (a decoded segment costs its decompression again once evicted), and the rest is left
  // to searches and the store.
  const segmentCacheBytes = parseSizeOrZero('QUARRY_SEGMENT_CACHE', get('QUARRY_SEGMENT_CACHE') ?? String(Math.min(2 ** 30, Math.floor(memoryLimit() / 4))))
  const compactIntervalMs = parseDuration('QUARRY_COMPACT_INTERVAL', get('QUARRY_COMPACT_INTERVAL') ?? '10s')
  if (compactIntervalMs < 100 || compactIntervalMs > 86_400_000) throw new ConfigError('QUARRY_COMPACT_INTERVAL: must be from 100ms to 24h')
  const retentionIntervalMs = parseDuration('QUARRY_RETENTION_INTERVAL', get('QUARRY_RETENTION_INTERVAL') ?? '1h')
  if (retentionIntervalMs < 100 || retentionIntervalMs > 7 * 86_400_000) throw new ConfigError('QUARRY_RETENTION_INTERVAL: must be from 100ms to 7d')
  const blobTimeoutMs = parseDuration('QUARRY_BLOB_TIMEOUT', get('QUARRY_BLOB_TIMEOUT') ?? '10s')
  // Below 100 ms a healthy S3 round trip under load would fail; past 10 minutes a request would outlive its client.
  if (blobTimeoutMs < 100 || blobTimeoutMs > 600_000) throw new ConfigError('QUARRY_BLOB_TIMEOUT: must be from 100ms to 10m')
  const s3 = parseS3(get)
  const databaseUrl = parseDatabaseUrl(get('QUARRY_DATABASE_URL'))
  const singleServer = parseBool('QUARRY_SINGLE_SERVER', get('QUARRY_SINGLE_SERVER') ?? 'false')
  const sessionIdleMs = parseDuration('QUARRY_SESSION_IDLE_TIMEOUT', get('QUARRY_SESSION_IDLE_TIMEOUT') ?? '60m')
  const sessionLifetimeMs = parseDuration('QUARRY_SESSION_LIFETIME', get('QUARRY_SESSION_LIFETIME') ?? '24h')
  if (sessionLifetimeMs < sessionIdleMs)
    throw new ConfigError('QUARRY_SESSION_LIFETIME: must not be shorter than QUARRY_SESSION_IDLE_TIMEOUT')

  const config: Config = {
    listenHost: listen.host,
    listenPort: listen.port,
    dataDir: get('QUARRY_DATA_DIR') ?? './data',
    adminPassword,
    jwtKey,
    sessionIdleMs,
    sessionLifetimeMs,
    maxBodyBytes: parseBytes('QUARRY_MAX_BODY_SIZE', get('QUARRY_MAX_BODY_SIZE') ?? '4MiB'),
    maxFileBytes: parseBytes('QUARRY_MAX_FILE_SIZE', get('QUARRY_MAX_FILE_SIZE') ?? '8MiB'),
    maxResourceBytes: parseBytes('QUARRY_MAX_RESOURCE_SIZE', get('QUARRY_MAX_RESOURCE_SIZE') ?? '2GiB'),
    maxImportBytes: parseBytes('QUARRY_MAX_IMPORT_SIZE', get('QUARRY_MAX_IMPORT_SIZE') ?? '1GiB'),
    // 10 GiB: room for several resources of the largest default size (2 GiB) and many saved searches, yet one
    // account alone cannot fill a typical server's disk; `unlimited` gives back the behaviour of earlier versions.
    userQuotaBytes: parseLimit('QUARRY_USER_QUOTA', get('QUARRY_USER_QUOTA') ?? '10GiB'),
    // 65,536 tags: far more than ingesters name (a tag is a source kind, not a value), while the map every process
    // keeps of them stays a few MiB at most (tags are at most 128 characters).
    maxTags: parseCount('QUARRY_MAX_TAGS', get('QUARRY_MAX_TAGS') ?? '65536', 1, 10_000_000),
    // 64 MiB/s per user: above what one ingester sends over a typical link, well below what a few users together
    // could make the store write.
    ingestRateBytes: parseLimit('QUARRY_INGEST_RATE', get('QUARRY_INGEST_RATE') ?? '64MiB'),
    // 64 MiB: a few dozen shippers' full batches at once; past it senders are told to come back (503, Retry-After)
    // rather than held in memory.
    ingestMaxPendingBytes: parseBytes('QUARRY_INGEST_MAX_PENDING', get('QUARRY_INGEST_MAX_PENDING') ?? '64MiB'),
    otlpTagAttribute: parseName('QUARRY_OTLP_TAG_ATTRIBUTE', get('QUARRY_OTLP_TAG_ATTRIBUTE') ?? 'service.name'),
    otlpDefaultTag: parseTag('QUARRY_OTLP_DEFAULT_TAG', get('QUARRY_OTLP_DEFAULT_TAG') ?? 'otlp'),
    // job: the label every Promtail scrape config and most Alloy pipelines set to name what they collect.
    lokiTagLabel: parseName('QUARRY_LOKI_TAG_LABEL', get('QUARRY_LOKI_TAG_LABEL') ?? 'job'),
    lokiDefaultTag: parseTag('QUARRY_LOKI_DEFAULT_TAG', get('QUARRY_LOKI_DEFAULT_TAG') ?? 'loki'),
    // 16 MiB: four times the default body limit, past the 5-10x ratio of compressed log batches only for bodies near
    // that limit; what a request can make the server hold stays a bounded multiple of it.
    ingestMaxDecompressedBytes: parseBytes('QUARRY_INGEST_MAX_DECOMPRESSED', get('QUARRY_INGEST_MAX_DECOMPRESSED') ?? '16MiB'),
    // 65,536: several times the batches shippers send (the Collector's batch processor sends 8,192 records, Promtail
    // about 1 MiB of lines), while the entries built for one request stay tens of MiB at most.
    ingestMaxRecords: parseCount('QUARRY_INGEST_MAX_RECORDS', get('QUARRY_INGEST_MAX_RECORDS') ?? '65536', 1, 10_000_000),
    // 100,000: a full default-size body of the smallest useful documents; Filebeat sends 1,600, Logstash 125 per batch.
    esMaxDocs: parseCount('QUARRY_ES_MAX_DOCS', get('QUARRY_ES_MAX_DOCS') ?? '100000', 1, 10_000_000),
    hecMaxEvents: parseCount('QUARRY_HEC_MAX_EVENTS', get('QUARRY_HEC_MAX_EVENTS') ?? '100000', 1, 10_000_000),
    hecDefaultTag: parseTag('QUARRY_HEC_DEFAULT_TAG', get('QUARRY_HEC_DEFAULT_TAG') ?? 'hec'),
    minFreeSpaceBytes: parseSizeOrZero('QUARRY_MIN_FREE_SPACE', get('QUARRY_MIN_FREE_SPACE') ?? '1GiB'),
    searchGraceMs: parseDuration('QUARRY_SEARCH_GRACE', get('QUARRY_SEARCH_GRACE') ?? '10m'),
    // 32: a person watches a few searches at once, a dashboard launches one per tile (rarely more than 20-30); each
    // search holds two working files and its record, so one user holds at most 64 files (10,000 launches of one
    // session filled 20,000 before there was a cap).
    maxSearchesPerUser: parseCount('QUARRY_MAX_SEARCHES_PER_USER', get('QUARRY_MAX_SEARCHES_PER_USER') ?? '32', 1, 100_000),
    // 16: a few browser tabs (one search and one stats socket each) and a CLI or two; each socket may hold a few MiB
    // of unread answers (plugins/ws), so one user's sockets hold at most about 100 MiB.
    wsPerUser: parseCount('QUARRY_WS_PER_USER', get('QUARRY_WS_PER_USER') ?? '16', 1, 10_000),
    blobSweepGraceMs: parseDuration('QUARRY_BLOB_SWEEP_GRACE', get('QUARRY_BLOB_SWEEP_GRACE') ?? '1h'),
    shutdownGraceMs: parseDuration('QUARRY_SHUTDOWN_GRACE', get('QUARRY_SHUTDOWN_GRACE') ?? '10s'),
    loginMaxFailures: parseCount('QUARRY_LOGIN_MAX_FAILURES', get('QUARRY_LOGIN_MAX_FAILURES') ?? '5', 1, 1000),
    loginFailureWindowMs: parseDuration('QUARRY_LOGIN_FAILURE_WINDOW', get('QUARRY_LOGIN_FAILURE_WINDOW') ?? '5m'),
    adminLoginRate: parseCount('QUARRY_ADMIN_LOGIN_RATE', get('QUARRY_ADMIN_LOGIN_RATE') ?? '10', 1, 1000),
    loginThrottleEntries: parseCount('QUARRY_LOGIN_THROTTLE_ENTRIES', get('QUARRY_LOGIN_THROTTLE_ENTRIES') ?? '100000', 100, 10_000_000),
    minPasswordLength,
    tokenApiAdminOnly: parseBool('QUARRY_TOKEN_API_ADMIN_ONLY', get('QUARRY_TOKEN_API_ADMIN_ONLY') ?? 'false'),
    logLevel,
    uploadHash,
    s3,
    databaseUrl,
    singleServer,
    leaseTtlMs,
    sweepIntervalMs,
    segmentBytes,
    segmentCacheBytes,
    compactIntervalMs,
    retentionRules: parseRetentionRules(get),
    retentionIntervalMs,
    passwordHash: { memoryCost: 19456, timeCost: 2 },
    buildId: get('QUARRY_BUILD_ID') ?? 'dev',
    mapTileUrl: parsePublicUrl('QUARRY_MAP_TILE_URL', get('QUARRY_MAP_TILE_URL') ?? DEFAULT_MAP_TILE_URL),
    disableMapTileProxy: parseBool('QUARRY_DISABLE_MAP_TILE_PROXY', get('QUARRY_DISABLE_MAP_TILE_PROXY') ?? 'true'),
    // 1000 of at most 4096 characters: about 16 MiB per sender at worst, far more than any GUI shows.
    notificationsPerUser: parseCount('QUARRY_NOTIFICATIONS_PER_USER', get('QUARRY_NOTIFICATIONS_PER_USER') ?? '1000', 1, 1_000_000),
    notificationLifetimeMs: parseDuration('QUARRY_NOTIFICATION_LIFETIME', get('QUARRY_NOTIFICATION_LIFETIME') ?? '7d'),
    metricsToken: parseMetricsToken(get('QUARRY_METRICS_TOKEN')),
    trustedProxies: trustedProxies(get('QUARRY_TRUSTED_PROXIES')),
    tls: parseTls(get),
    advertise: parseAdvertise(get('QUARRY_ADVERTISE'), get('QUARRY_TLS_CERT') !== undefined),
    clusterSecret: parseClusterSecret(get('QUARRY_CLUSTER_SECRET')),
    blobTimeoutMs,
    peerCaFile: get('QUARRY_PEER_CA'),
    syslog: parseSyslogConfig(get, get('QUARRY_TLS_CERT') !== undefined && get('QUARRY_TLS_KEY') !== undefined, {
      bytes: parseBytes,
      duration: parseDuration,
      count: parseCount,
    }),
    timestampZone: parseTimestampZone(get('QUARRY_TIMESTAMP_ZONE') ?? 'UTC'),
    timestampFormat: parseTimestampFormat(get('QUARRY_TIMESTAMP_FORMAT')),
    // 1 MiB: far longer than any log line (a Java stack trace is a few dozen KiB), as the platform's line reader bounds
    // its token; a longer "line" is a file that is not line-oriented, refused rather than cut into arbitrary entries.
    ingestMaxLineBytes: parseBytes('QUARRY_INGEST_MAX_LINE', get('QUARRY_INGEST_MAX_LINE') ?? '1MiB'),
  }
  return { config, warnings }
}

/**
 * What a server (not the operator tool, which touches no blobs) needs beyond well-formed variables: replicas on one
 * PostgreSQL database must share their blobs through S3. With each one's blobs in its own data directory, an upload
 * to one would be missing on the others (the store would point at a blob only one replica has). Throws ConfigError
 * with one clear line.
 */
export function checkServerConfig(config: Config): void {
  if (config.databaseUrl !== undefined && config.s3 === undefined && !config.singleServer)
    throw new ConfigError(
      'QUARRY_DATABASE_URL: PostgreSQL needs the S3 blob store, through which the replicas of one database share their blobs ' +
        '(set QUARRY_S3_ENDPOINT, QUARRY_S3_BUCKET, QUARRY_S3_ACCESS_KEY and QUARRY_S3_SECRET_KEY), ' +
        'or QUARRY_SINGLE_SERVER=true for one server alone with its blobs in its data directory',
    )
  const refusal = clusterRefusal(config)
  if (refusal) throw new ConfigError(refusal)
}
