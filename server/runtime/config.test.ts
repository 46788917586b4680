import { describe, expect, test } from 'bun:test'
import { ConfigError, advertisedOrigin, checkServerConfig, clusterRefusal, loadConfig, parseBytes, parseDuration, parseListen } from './config'

/** The one-line message with which loadConfig refuses `env`; it must name the variable first. */
function refusal(env: Record<string, string | undefined>, name: string): string {
  let error: unknown
  try {
    loadConfig(env)
  } catch (e) {
    error = e
  }
  expect(error).toBeInstanceOf(ConfigError)
  const message = (error as Error).message
  expect(message.startsWith(`${name}:`)).toBe(true)
  expect(message).not.toContain('\n')
  return message
}

describe('configuration', () => {
  test('defaults', () => {
    const { config, warnings } = loadConfig({})
    expect(config.listenHost).toBe('127.0.0.1')
    expect(config.listenPort).toBe(8080)
    expect(config.dataDir).toBe('./data')
    expect(config.adminPassword).toBeUndefined()
    expect(config.sessionIdleMs).toBe(60 * 60_000)
    expect(config.sessionLifetimeMs).toBe(24 * 3_600_000)
    expect(config.loginMaxFailures).toBe(5)
    expect(config.loginFailureWindowMs).toBe(5 * 60_000)
    expect(config.adminLoginRate).toBe(10)
    expect(config.loginThrottleEntries).toBe(100_000)
    expect(config.logLevel).toBe('info')
    expect(config.uploadHash).toBe('worker')
    expect(config.tokenApiAdminOnly).toBe(false)
    expect(config.blobSweepGraceMs).toBe(3_600_000)
    expect(config.searchGraceMs).toBe(600_000)
    expect(config.maxImportBytes).toBe(1024 ** 3)
    expect(config.mapTileUrl).toBe('https://tile.openstreetmap.org')
    expect(config.disableMapTileProxy).toBe(true)
    expect(config.userQuotaBytes).toBe(10 * 1024 ** 3)
    expect(config.shutdownGraceMs).toBe(10_000)
    expect(config.maxSearchesPerUser).toBe(32)
    expect(config.notificationsPerUser).toBe(1000)
    expect(config.notificationLifetimeMs).toBe(7 * 86_400_000)
    expect(warnings).toEqual([])
  })

  test('values are read and typed', () => {
    const { config } = loadConfig({
      QUARRY_LISTEN: '[::1]:9000',
      QUARRY_DATA_DIR: '/var/lib/quarry',
      QUARRY_ADMIN_PASSWORD: 'long-enough-password',
      QUARRY_SESSION_IDLE_TIMEOUT: '15m',
      QUARRY_SESSION_LIFETIME: '2h',
      QUARRY_MAX_BODY_SIZE: '64KiB',
      QUARRY_LOG_LEVEL: 'warn',
      QUARRY_UPLOAD_HASH: 'thread',
      QUARRY_TOKEN_API_ADMIN_ONLY: 'true',
      QUARRY_MAP_TILE_URL: ' https://tiles.example.com/osm/{z}/{x}/{y}.png?key=abc ',
      QUARRY_DISABLE_MAP_TILE_PROXY: 'false',
      QUARRY_ADMIN_LOGIN_RATE: '30',
      QUARRY_LOGIN_THROTTLE_ENTRIES: '5000',
      QUARRY_SHUTDOWN_GRACE: '90s',
    })
    expect(config.listenHost).toBe('::1')
    expect(config.listenPort).toBe(9000)
    expect(config.dataDir).toBe('/var/lib/quarry')
    expect(config.adminPassword).toBe('long-enough-password')
    expect(config.sessionIdleMs).toBe(15 * 60_000)
    expect(config.sessionLifetimeMs).toBe(2 * 3_600_000)
    expect(config.maxBodyBytes).toBe(65536)
    expect(config.logLevel).toBe('warn')
    expect(config.uploadHash).toBe('thread')
    expect(config.tokenApiAdminOnly).toBe(true)
    expect(config.mapTileUrl).toBe('https://tiles.example.com/osm/{z}/{x}/{y}.png?key=abc')
    expect(config.disableMapTileProxy).toBe(false)
    expect(config.adminLoginRate).toBe(30)
    expect(config.loginThrottleEntries).toBe(5000)
    expect(config.shutdownGraceMs).toBe(90_000)
  })

  test.each([
    [{ QUARRY_LISTEN: '8080' }, 'QUARRY_LISTEN'],
    [{ QUARRY_LISTEN: 'localhost:99999' }, 'QUARRY_LISTEN'],
    [{ QUARRY_LOG_LEVEL: 'loud' }, 'QUARRY_LOG_LEVEL'],
    [{ QUARRY_UPLOAD_HASH: 'gpu' }, 'QUARRY_UPLOAD_HASH'],
    [{ QUARRY_SESSION_IDLE_TIMEOUT: 'soon' }, 'QUARRY_SESSION_IDLE_TIMEOUT'],
    [{ QUARRY_SESSION_IDLE_TIMEOUT: '0' }, 'QUARRY_SESSION_IDLE_TIMEOUT'],
    [{ QUARRY_SESSION_IDLE_TIMEOUT: '2h', QUARRY_SESSION_LIFETIME: '1h' }, 'QUARRY_SESSION_LIFETIME'],
    [{ QUARRY_MAX_BODY_SIZE: 'lots' }, 'QUARRY_MAX_BODY_SIZE'],
    [{ QUARRY_ADMIN_PASSWORD: 'short' }, 'QUARRY_ADMIN_PASSWORD'],
    [{ QUARRY_JWT_KEY: 'too-short' }, 'QUARRY_JWT_KEY'],
    [{ QUARRY_LOGIN_MAX_FAILURES: '-1' }, 'QUARRY_LOGIN_MAX_FAILURES'],
    [{ QUARRY_TOKEN_API_ADMIN_ONLY: 'maybe' }, 'QUARRY_TOKEN_API_ADMIN_ONLY'],
    [{ QUARRY_BLOB_SWEEP_GRACE: 'later' }, 'QUARRY_BLOB_SWEEP_GRACE'],
    [{ QUARRY_SEARCH_GRACE: 'soon' }, 'QUARRY_SEARCH_GRACE'],
    [{ QUARRY_SHUTDOWN_GRACE: 'a while' }, 'QUARRY_SHUTDOWN_GRACE'],
    [{ QUARRY_SHUTDOWN_GRACE: '0s' }, 'QUARRY_SHUTDOWN_GRACE'],
    [{ QUARRY_SEARCH_GRACE: '0s' }, 'QUARRY_SEARCH_GRACE'],
    [{ QUARRY_MAX_IMPORT_SIZE: 'big' }, 'QUARRY_MAX_IMPORT_SIZE'],
    [{ QUARRY_MAP_TILE_URL: 'tiles.example.com' }, 'QUARRY_MAP_TILE_URL'],
    [{ QUARRY_MAP_TILE_URL: 'ftp://tiles.example.com' }, 'QUARRY_MAP_TILE_URL'],
    [{ QUARRY_MAP_TILE_URL: 'https://user:secret@tiles.example.com' }, 'QUARRY_MAP_TILE_URL'],
    [{ QUARRY_DISABLE_MAP_TILE_PROXY: 'perhaps' }, 'QUARRY_DISABLE_MAP_TILE_PROXY'],
    [{ QUARRY_USER_QUOTA: 'plenty' }, 'QUARRY_USER_QUOTA'],
    [{ QUARRY_USER_QUOTA: '0' }, 'QUARRY_USER_QUOTA'],
    [{ QUARRY_USER_QUOTA: '0GiB' }, 'QUARRY_USER_QUOTA'],
    [{ QUARRY_USER_QUOTA: '-5MiB' }, 'QUARRY_USER_QUOTA'],
    [{ QUARRY_MAX_TAGS: '0' }, 'QUARRY_MAX_TAGS'],
    [{ QUARRY_MAX_TAGS: 'many' }, 'QUARRY_MAX_TAGS'],
    [{ QUARRY_MAX_TAGS: '10000001' }, 'QUARRY_MAX_TAGS'],
    [{ QUARRY_INGEST_RATE: 'fast' }, 'QUARRY_INGEST_RATE'],
    [{ QUARRY_INGEST_RATE: '0' }, 'QUARRY_INGEST_RATE'],
    [{ QUARRY_MIN_FREE_SPACE: 'some' }, 'QUARRY_MIN_FREE_SPACE'],
    [{ QUARRY_MIN_FREE_SPACE: '-1GiB' }, 'QUARRY_MIN_FREE_SPACE'],
    [{ QUARRY_ADMIN_LOGIN_RATE: '0' }, 'QUARRY_ADMIN_LOGIN_RATE'],
    [{ QUARRY_ADMIN_LOGIN_RATE: 'fast' }, 'QUARRY_ADMIN_LOGIN_RATE'],
    [{ QUARRY_LOGIN_THROTTLE_ENTRIES: '10' }, 'QUARRY_LOGIN_THROTTLE_ENTRIES'],
    [{ QUARRY_MAX_SEARCHES_PER_USER: '0' }, 'QUARRY_MAX_SEARCHES_PER_USER'],
    [{ QUARRY_MAX_SEARCHES_PER_USER: 'many' }, 'QUARRY_MAX_SEARCHES_PER_USER'],
    [{ QUARRY_WS_PER_USER: '0' }, 'QUARRY_WS_PER_USER'],
    [{ QUARRY_WS_PER_USER: 'lots' }, 'QUARRY_WS_PER_USER'],
    [{ QUARRY_NOTIFICATIONS_PER_USER: '0' }, 'QUARRY_NOTIFICATIONS_PER_USER'],
    [{ QUARRY_NOTIFICATIONS_PER_USER: 'many' }, 'QUARRY_NOTIFICATIONS_PER_USER'],
    [{ QUARRY_NOTIFICATIONS_PER_USER: '1000001' }, 'QUARRY_NOTIFICATIONS_PER_USER'],
    [{ QUARRY_NOTIFICATION_LIFETIME: 'forever' }, 'QUARRY_NOTIFICATION_LIFETIME'],
    [{ QUARRY_NOTIFICATION_LIFETIME: '0d' }, 'QUARRY_NOTIFICATION_LIFETIME'],
  ])('%p is refused with one line naming %s', (env, name) => {
    refusal(env, name)
  })

  test('QUARRY_USER_QUOTA takes a size or unlimited', () => {
    expect(loadConfig({ QUARRY_USER_QUOTA: '500MiB' }).config.userQuotaBytes).toBe(500 * 1024 ** 2)
    expect(loadConfig({ QUARRY_USER_QUOTA: 'Unlimited' }).config.userQuotaBytes).toBeUndefined()
  })

  test('ingest bounds: QUARRY_MAX_TAGS, QUARRY_INGEST_RATE (a size per second or unlimited), QUARRY_MIN_FREE_SPACE (a size, 0 for none)', () => {
    expect(loadConfig({}).config).toMatchObject({ maxTags: 65_536, ingestRateBytes: 64 * 1024 ** 2, minFreeSpaceBytes: 1024 ** 3 })
    const { config } = loadConfig({ QUARRY_MAX_TAGS: '1000', QUARRY_INGEST_RATE: '2MiB', QUARRY_MIN_FREE_SPACE: '500MiB' })
    expect(config).toMatchObject({ maxTags: 1000, ingestRateBytes: 2 * 1024 ** 2, minFreeSpaceBytes: 500 * 1024 ** 2 })
    expect(loadConfig({ QUARRY_INGEST_RATE: 'unlimited', QUARRY_MIN_FREE_SPACE: '0' }).config).toMatchObject({ ingestRateBytes: undefined, minFreeSpaceBytes: 0 })
  })

  test('timestamps from lines: QUARRY_TIMESTAMP_ZONE (UTC by default), QUARRY_TIMESTAMP_FORMAT (any by default), QUARRY_INGEST_MAX_LINE', () => {
    expect(loadConfig({}).config).toMatchObject({ timestampZone: 'UTC', timestampFormat: undefined, ingestMaxLineBytes: 1024 ** 2 })
    const { config, warnings } = loadConfig({ QUARRY_TIMESTAMP_ZONE: 'Europe/Paris', QUARRY_TIMESTAMP_FORMAT: 'nginxformat', QUARRY_INGEST_MAX_LINE: '64KiB' })
    expect(warnings).toEqual([])
    expect(config).toMatchObject({ timestampZone: 'Europe/Paris', timestampFormat: 'NGINX', ingestMaxLineBytes: 64 * 1024 })
    expect(loadConfig({ QUARRY_TIMESTAMP_ZONE: '-07:00' }).config.timestampZone).toBe('-07:00')
    expect(refusal({ QUARRY_TIMESTAMP_ZONE: 'Mars/Olympus' }, 'QUARRY_TIMESTAMP_ZONE')).toContain('Mars/Olympus')
    expect(refusal({ QUARRY_TIMESTAMP_ZONE: '+31:00' }, 'QUARRY_TIMESTAMP_ZONE')).toContain('+31:00')
    expect(refusal({ QUARRY_TIMESTAMP_FORMAT: 'Stardate' }, 'QUARRY_TIMESTAMP_FORMAT')).toContain('RFC3339')
    refusal({ QUARRY_INGEST_MAX_LINE: '0' }, 'QUARRY_INGEST_MAX_LINE')
  })

  test('QUARRY_MAX_SEARCHES_PER_USER is read', () => {
    expect(loadConfig({ QUARRY_MAX_SEARCHES_PER_USER: '5' }).config.maxSearchesPerUser).toBe(5)
  })

  test('QUARRY_WS_PER_USER is read, 16 by default', () => {
    expect(loadConfig({ QUARRY_WS_PER_USER: '3' }).config.wsPerUser).toBe(3)
    expect(loadConfig({}).config.wsPerUser).toBe(16)
  })

  test('notification bounds are read', () => {
    const { config } = loadConfig({ QUARRY_NOTIFICATIONS_PER_USER: '50', QUARRY_NOTIFICATION_LIFETIME: '36h' })
    expect(config.notificationsPerUser).toBe(50)
    expect(config.notificationLifetimeMs).toBe(36 * 3_600_000)
  })

  test('unknown QUARRY_ variables are reported, not fatal', () => {
    expect(loadConfig({ QUARRY_LISTN: '1.2.3.4:5' }).warnings).toEqual(['unknown configuration variable QUARRY_LISTN is ignored'])
  })

  test('units', () => {
    expect(parseDuration('X', '90')).toBe(90_000)
    expect(parseDuration('X', '250ms')).toBe(250)
    expect(parseDuration('X', '7d')).toBe(7 * 86_400_000)
    expect(parseBytes('X', '10MiB')).toBe(10 * 1024 * 1024)
    expect(parseBytes('X', '2g')).toBe(2 * 1024 ** 3)
    expect(parseListen('0.0.0.0:0')).toEqual({ host: '0.0.0.0', port: 0 })
  })
})

describe('S3 blob store configuration', () => {
  const full = {
    QUARRY_S3_ENDPOINT: 'https://minio.example.com:9000',
    QUARRY_S3_BUCKET: 'quarry-blobs',
    QUARRY_S3_ACCESS_KEY: 'access',
    QUARRY_S3_SECRET_KEY: 'secret',
    QUARRY_S3_REGION: 'eu-west-1',
  }

  test('unset: blobs stay on disk', () => {
    expect(loadConfig({}).config.s3).toBeUndefined()
  })

  test('all set: typed, and no warning', () => {
    const { config, warnings } = loadConfig(full)
    expect(config.s3).toEqual({
      endpoint: 'https://minio.example.com:9000',
      bucket: 'quarry-blobs',
      accessKey: 'access',
      secretKey: 'secret',
      region: 'eu-west-1',
    })
    expect(warnings).toEqual([])
  })

  test('the region defaults to us-east-1', () => {
    const { QUARRY_S3_REGION: _, ...rest } = full
    expect(loadConfig(rest).config.s3?.region).toBe('us-east-1')
  })

  test('an unknown QUARRY_S3_ variable is reported like any other', () => {
    expect(loadConfig({ ...full, QUARRY_S3_BUCKT: 'x' }).warnings).toEqual(['unknown configuration variable QUARRY_S3_BUCKT is ignored'])
  })

  test.each([
    [{ ...full, QUARRY_S3_ENDPOINT: undefined }, 'QUARRY_S3_ENDPOINT'],
    [{ ...full, QUARRY_S3_BUCKET: '' }, 'QUARRY_S3_BUCKET'],
    [{ ...full, QUARRY_S3_ACCESS_KEY: undefined }, 'QUARRY_S3_ACCESS_KEY'],
    [{ ...full, QUARRY_S3_SECRET_KEY: undefined }, 'QUARRY_S3_SECRET_KEY'],
    [{ QUARRY_S3_REGION: 'us-east-1' }, 'QUARRY_S3_ENDPOINT'],
    [{ QUARRY_S3_SECRET_KEY: 'secret' }, 'QUARRY_S3_ENDPOINT'],
    [{ ...full, QUARRY_S3_ENDPOINT: 'minio:9000' }, 'QUARRY_S3_ENDPOINT'],
    [{ ...full, QUARRY_S3_ENDPOINT: 'ftp://minio' }, 'QUARRY_S3_ENDPOINT'],
    [{ ...full, QUARRY_S3_ENDPOINT: 'http://minio:9000/bucket' }, 'QUARRY_S3_ENDPOINT'],
    [{ ...full, QUARRY_S3_BUCKET: 'Has_Upper' }, 'QUARRY_S3_BUCKET'],
    [{ ...full, QUARRY_S3_REGION: 'eu west' }, 'QUARRY_S3_REGION'],
  ])('%p is refused with one line naming %s', (env, name) => {
    const message = refusal(env, name)
    expect(message).not.toContain('secret') // never echo the secret key
  })
})

describe('PostgreSQL store configuration', () => {
  test('unset: SQLite in the data directory', () => {
    expect(loadConfig({}).config.databaseUrl).toBeUndefined()
    expect(loadConfig({ QUARRY_DATABASE_URL: '' }).config.databaseUrl).toBeUndefined()
  })

  test.each(['postgres://quarry:secret@db.example.com:5432/quarry', 'postgresql://db.example.com/quarry?sslmode=require'])('%s is taken as is', (url) => {
    const { config, warnings } = loadConfig({ QUARRY_DATABASE_URL: url })
    expect(config.databaseUrl).toBe(url)
    expect(warnings).toEqual([])
  })

  test.each(['db.example.com:5432/quarry', 'mysql://db.example.com/quarry', 'postgres://db.example.com', 'postgres://db.example.com/', 'postgres:///quarry', 'postgres://[bad/q'])(
    '%s is refused with one line naming the variable',
    (url) => {
      expect(() => loadConfig({ QUARRY_DATABASE_URL: url })).toThrow(ConfigError)
      try {
        loadConfig({ QUARRY_DATABASE_URL: url })
      } catch (e) {
        expect((e as Error).message).toStartWith('QUARRY_DATABASE_URL: ')
        expect((e as Error).message).not.toContain('\n')
      }
    },
  )
})

describe('operations: metrics token, trusted proxies, TLS', () => {
  test('unset: /metrics public, no proxy trusted, plain HTTP', () => {
    const { config, warnings } = loadConfig({})
    expect(config.metricsToken).toBeUndefined()
    expect(config.trustedProxies).toBeUndefined()
    expect(config.tls).toBeUndefined()
    expect(warnings).toEqual([])
  })

  test('set: read and typed, without warnings (QUARRY_CA is the CLI\'s)', () => {
    const { config, warnings } = loadConfig({
      QUARRY_METRICS_TOKEN: 'scrape-token-0123456789',
      QUARRY_TRUSTED_PROXIES: '10.0.0.0/8, 2001:db8::/32,192.168.1.7',
      QUARRY_TLS_CERT: '/etc/quarry/tls.crt',
      QUARRY_TLS_KEY: '/etc/quarry/tls.key',
      QUARRY_CA: '/etc/quarry/ca.pem',
    })
    expect(config.metricsToken).toBe('scrape-token-0123456789')
    expect(config.trustedProxies?.cidrs).toEqual(['10.0.0.0/8', '2001:db8::/32', '192.168.1.7/32'])
    expect(config.trustedProxies?.has('10.200.0.1')).toBe(true)
    expect(config.trustedProxies?.has('2001:db8:ffff::1')).toBe(true)
    expect(config.trustedProxies?.has('192.168.1.8')).toBe(false)
    expect(config.tls).toEqual({ certFile: '/etc/quarry/tls.crt', keyFile: '/etc/quarry/tls.key' })
    expect(warnings).toEqual([])
  })

  test.each([
    [{ QUARRY_METRICS_TOKEN: 'short' }, 'QUARRY_METRICS_TOKEN'],
    [{ QUARRY_METRICS_TOKEN: 'has a space in it 0123456789' }, 'QUARRY_METRICS_TOKEN'],
    [{ QUARRY_TRUSTED_PROXIES: '10.0.0.0/33' }, 'QUARRY_TRUSTED_PROXIES'],
    [{ QUARRY_TRUSTED_PROXIES: 'proxy.example.com' }, 'QUARRY_TRUSTED_PROXIES'],
    [{ QUARRY_TRUSTED_PROXIES: '10.0.0.0/8, fd00::/200' }, 'QUARRY_TRUSTED_PROXIES'],
    [{ QUARRY_TRUSTED_PROXIES: ',' }, 'QUARRY_TRUSTED_PROXIES'],
    [{ QUARRY_TLS_CERT: '/etc/quarry/tls.crt' }, 'QUARRY_TLS_KEY'],
    [{ QUARRY_TLS_KEY: '/etc/quarry/tls.key' }, 'QUARRY_TLS_CERT'],
  ] as [Record<string, string>, string][])('%p is refused with one line naming %s', (env, name) => {
    const message = refusal(env, name)
    if (env.QUARRY_METRICS_TOKEN) expect(message).not.toContain(env.QUARRY_METRICS_TOKEN) // never echo the token
  })
})

describe('cluster configuration: QUARRY_ADVERTISE and QUARRY_CLUSTER_SECRET', () => {
  const url = 'postgres://quarry:secret@db.example.com:5432/quarry'
  const secret = 'x'.repeat(32)

  test('unset: no advertised address, no secret; a single server needs neither', () => {
    const { config } = loadConfig({})
    expect(config.advertise).toBeUndefined()
    expect(config.clusterSecret).toBeUndefined()
    expect(clusterRefusal(config)).toBeUndefined()
    expect(clusterRefusal(loadConfig({ QUARRY_LISTEN: '0.0.0.0:8080' }).config)).toBeUndefined()
    expect(advertisedOrigin(config, 8080)).toBe('http://127.0.0.1:8080')
  })

  test.each([
    ['10.0.0.5:8080', 'http://10.0.0.5:8080'],
    ['quarry-2.internal:9000', 'http://quarry-2.internal:9000'],
    ['http://10.0.0.5:8080', 'http://10.0.0.5:8080'],
    ['https://quarry-2.internal:8443/', 'https://quarry-2.internal:8443'],
    ['[fd00::5]:8080', 'http://[fd00::5]:8080'],
  ])('QUARRY_ADVERTISE %s is the origin %s', (raw, origin) => {
    const { config, warnings } = loadConfig({ QUARRY_ADVERTISE: raw })
    expect(config.advertise).toBe(origin)
    expect(advertisedOrigin(config, 1234)).toBe(origin)
    expect(warnings).toEqual([])
  })

  test('host:port is https when the server serves TLS itself', () => {
    expect(loadConfig({ QUARRY_ADVERTISE: '10.0.0.5:8443', QUARRY_TLS_CERT: 'c.pem', QUARRY_TLS_KEY: 'k.pem' }).config.advertise).toBe('https://10.0.0.5:8443')
  })

  test.each(['10.0.0.5', 'http://10.0.0.5', 'ftp://10.0.0.5:21', 'http://u:p@10.0.0.5:8080', 'http://10.0.0.5:8080/quarry', 'http://10.0.0.5:8080/?a=1', '0.0.0.0:8080', '10.0.0.5:0', 'not an address:80'])(
    'QUARRY_ADVERTISE %s is refused with one line',
    (raw) => {
      refusal({ QUARRY_ADVERTISE: raw }, 'QUARRY_ADVERTISE')
    },
  )

  test('QUARRY_CLUSTER_SECRET: at least 32 bytes (counted in UTF-8), never echoed', () => {
    expect(loadConfig({ QUARRY_CLUSTER_SECRET: secret }).config.clusterSecret).toBe(secret)
    expect(loadConfig({ QUARRY_CLUSTER_SECRET: 'é'.repeat(16) }).config.clusterSecret).toBe('é'.repeat(16))
    const message = refusal({ QUARRY_CLUSTER_SECRET: 'y'.repeat(31) }, 'QUARRY_CLUSTER_SECRET')
    expect(message).not.toContain('y'.repeat(31))
  })

  test('a replica (QUARRY_DATABASE_URL) refuses to start without the secret, with one line naming it; one server alone on PostgreSQL needs none', () => {
    const message = clusterRefusal(loadConfig({ QUARRY_DATABASE_URL: url }).config)
    expect(message).toStartWith('QUARRY_CLUSTER_SECRET:')
    expect(message).not.toContain('\n')
    expect(clusterRefusal(loadConfig({ QUARRY_DATABASE_URL: url, QUARRY_SINGLE_SERVER: 'true', QUARRY_LISTEN: '0.0.0.0:80' }).config)).toBeUndefined()
  })

  test('a replica listening on a wildcard address needs QUARRY_ADVERTISE', () => {
    for (const listen of ['0.0.0.0:8080', '[::]:8080']) {
      const message = clusterRefusal(loadConfig({ QUARRY_DATABASE_URL: url, QUARRY_CLUSTER_SECRET: secret, QUARRY_LISTEN: listen }).config)
      expect(message).toStartWith('QUARRY_ADVERTISE:')
      expect(message).not.toContain('\n')
      const given = loadConfig({ QUARRY_DATABASE_URL: url, QUARRY_CLUSTER_SECRET: secret, QUARRY_LISTEN: listen, QUARRY_ADVERTISE: '10.0.0.5:8080' }).config
      expect(clusterRefusal(given)).toBeUndefined()
      expect(advertisedOrigin(given, 8080)).toBe('http://10.0.0.5:8080')
    }
  })

  test('a replica on a named address advertises it, with the port it got', () => {
    const { config } = loadConfig({ QUARRY_DATABASE_URL: url, QUARRY_CLUSTER_SECRET: secret, QUARRY_LISTEN: '10.0.0.7:0' })
    expect(clusterRefusal(config)).toBeUndefined()
    expect(advertisedOrigin(config, 41234)).toBe('http://10.0.0.7:41234')
    expect(advertisedOrigin(loadConfig({ QUARRY_LISTEN: '[fd00::7]:80' }).config, 80)).toBe('http://[fd00::7]:80')
  })
})

describe('cluster configuration (docs/cluster.md)', () => {
  const S3 = {
    QUARRY_S3_ENDPOINT: 'http://127.0.0.1:9000',
    QUARRY_S3_BUCKET: 'quarry',
    QUARRY_S3_ACCESS_KEY: 'access',
    QUARRY_S3_SECRET_KEY: 'secret',
  }
  const PG = { QUARRY_DATABASE_URL: 'postgres://quarry:pw@db.example.com:5432/quarry' }

  test('defaults: leases of 30 s, sweeps every minute, not a single server', () => {
    const { config } = loadConfig({})
    expect(config.leaseTtlMs).toBe(30_000)
    expect(config.sweepIntervalMs).toBe(60_000)
    expect(config.singleServer).toBe(false)
    expect([config.segmentBytes, config.compactIntervalMs]).toEqual([4 << 20, 10_000])
  })

  test('set: read and typed, without warnings', () => {
    const { config, warnings } = loadConfig({ QUARRY_LEASE_TTL: '2s', QUARRY_SWEEP_INTERVAL: '1500ms', QUARRY_SINGLE_SERVER: 'true' })
    expect([config.leaseTtlMs, config.sweepIntervalMs, config.singleServer]).toEqual([2000, 1500, true])
    expect(warnings).toEqual([])
  })

  test('blob timeout (10 s by default) and the CA of the peers: read and typed', () => {
    expect([loadConfig({}).config.blobTimeoutMs, loadConfig({}).config.peerCaFile]).toEqual([10_000, undefined])
    const { config, warnings } = loadConfig({ QUARRY_BLOB_TIMEOUT: '1500ms', QUARRY_PEER_CA: '/etc/quarry/peers.pem' })
    expect([config.blobTimeoutMs, config.peerCaFile]).toEqual([1500, '/etc/quarry/peers.pem'])
    expect(warnings).toEqual([])
  })

  test('segment size and compaction interval: read and typed', () => {
    const { config, warnings } = loadConfig({ QUARRY_SEGMENT_SIZE: '64KiB', QUARRY_COMPACT_INTERVAL: '250ms' })
    expect([config.segmentBytes, config.compactIntervalMs]).toEqual([65_536, 250])
    expect(warnings).toEqual([])
  })

  test.each([
    [{ QUARRY_LEASE_TTL: '500ms' }, 'QUARRY_LEASE_TTL'],
    [{ QUARRY_LEASE_TTL: '2h' }, 'QUARRY_LEASE_TTL'],
    [{ QUARRY_LEASE_TTL: 'soon' }, 'QUARRY_LEASE_TTL'],
    [{ QUARRY_SWEEP_INTERVAL: '10ms' }, 'QUARRY_SWEEP_INTERVAL'],
    [{ QUARRY_SWEEP_INTERVAL: '2d' }, 'QUARRY_SWEEP_INTERVAL'],
    [{ QUARRY_SEGMENT_SIZE: '512' }, 'QUARRY_SEGMENT_SIZE'],
    [{ QUARRY_SEGMENT_SIZE: '2GiB' }, 'QUARRY_SEGMENT_SIZE'],
    [{ QUARRY_SEGMENT_SIZE: 'big' }, 'QUARRY_SEGMENT_SIZE'],
    [{ QUARRY_COMPACT_INTERVAL: '10ms' }, 'QUARRY_COMPACT_INTERVAL'],
    [{ QUARRY_COMPACT_INTERVAL: '2d' }, 'QUARRY_COMPACT_INTERVAL'],
    [{ QUARRY_SINGLE_SERVER: 'maybe' }, 'QUARRY_SINGLE_SERVER'],
    [{ QUARRY_BLOB_TIMEOUT: '50ms' }, 'QUARRY_BLOB_TIMEOUT'],
    [{ QUARRY_BLOB_TIMEOUT: '1h' }, 'QUARRY_BLOB_TIMEOUT'],
    [{ QUARRY_BLOB_TIMEOUT: 'never' }, 'QUARRY_BLOB_TIMEOUT'],
  ] as [Record<string, string>, string][])('%p is refused with one line naming %s', (env, name) => {
    refusal(env, name)
  })

  /** The line with which a server refuses `env` (checkServerConfig), or undefined when it starts. */
  const serverRefusal = (env: Record<string, string>) => {
    try {
      checkServerConfig(loadConfig(env).config)
      return undefined
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError)
      return (e as Error).message
    }
  }

  test('PostgreSQL without the S3 blob store: a server refuses to start, with one line naming what to set', () => {
    const message = serverRefusal(PG)!
    expect(message).toStartWith('QUARRY_DATABASE_URL: PostgreSQL needs the S3 blob store')
    expect(message).not.toContain('\n')
    for (const name of ['QUARRY_S3_ENDPOINT', 'QUARRY_S3_BUCKET', 'QUARRY_S3_ACCESS_KEY', 'QUARRY_S3_SECRET_KEY', 'QUARRY_SINGLE_SERVER'])
      expect(message).toContain(name)
    expect(message).not.toContain('pw@') // never the password of the URL
  })

  test('complete: PostgreSQL with S3, one server alone on PostgreSQL, SQLite with disk or S3 blobs', () => {
    expect(serverRefusal({ ...PG, ...S3, QUARRY_CLUSTER_SECRET: 'x'.repeat(32) })).toBeUndefined()
    expect(serverRefusal({ ...PG, QUARRY_SINGLE_SERVER: 'true' })).toBeUndefined()
    // a replica also needs the cluster secret (and an address when it listens on every address)
    expect(serverRefusal({ ...PG, ...S3 })).toStartWith('QUARRY_CLUSTER_SECRET:')
    expect(serverRefusal({ ...PG, ...S3, QUARRY_CLUSTER_SECRET: 'x'.repeat(32), QUARRY_LISTEN: '0.0.0.0:8080' })).toStartWith('QUARRY_ADVERTISE:')
    expect(serverRefusal({})).toBeUndefined()
    expect(serverRefusal(S3)).toBeUndefined()
  })
})
