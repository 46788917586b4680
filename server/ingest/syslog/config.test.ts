// QUARRY_SYSLOG_*: listeners off unless set, tags per listener, bounds with defaults, and one clear line for each
// bad value (ConfigError), TLS without the server's certificate included.
import { describe, expect, test } from 'bun:test'
import { ConfigError, loadConfig } from '../../runtime/config'

const syslog = (env: Record<string, string>) => loadConfig(env).config.syslog
const refused = (env: Record<string, string>) => {
  try {
    loadConfig(env)
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError)
    return (e as Error).message
  }
  throw new Error('accepted')
}

describe('syslog configuration', () => {
  test('no listener unless configured; the defaults of the bounds', () => {
    const c = syslog({})
    expect(c.listeners).toEqual([])
    expect(c).toMatchObject({ maxMessageBytes: 65536, maxConnections: 1000, frameTimeoutMs: 30_000, udpQueueBytes: 16 * 1024 * 1024 })
    expect(loadConfig({ QUARRY_SYSLOG_TCP: '0.0.0.0:514' }).warnings).toEqual([])
  })

  test('each listener with its address and tag: QUARRY_SYSLOG_TAG, or its own', () => {
    const c = syslog({
      QUARRY_SYSLOG_TCP: '0.0.0.0:6514',
      QUARRY_SYSLOG_UDP: '[::1]:0',
      QUARRY_SYSLOG_TLS: '127.0.0.1:6515',
      QUARRY_SYSLOG_TAG: 'hosts',
      QUARRY_SYSLOG_UDP_TAG: 'net-gear',
      QUARRY_TLS_CERT: '/c.pem',
      QUARRY_TLS_KEY: '/k.pem',
    })
    expect(c.listeners).toEqual([
      { transport: 'tcp', host: '0.0.0.0', port: 6514, tag: 'hosts' },
      { transport: 'udp', host: '::1', port: 0, tag: 'net-gear' },
      { transport: 'tls', host: '127.0.0.1', port: 6515, tag: 'hosts' },
    ])
  })

  test('bad values stop the start with one line naming the variable', () => {
    expect(refused({ QUARRY_SYSLOG_TLS: '0.0.0.0:6514' })).toContain('QUARRY_TLS_CERT')
    expect(refused({ QUARRY_SYSLOG_TCP: '514' })).toStartWith('QUARRY_SYSLOG_TCP: "514" must be host:port')
    expect(refused({ QUARRY_SYSLOG_UDP: 'h:70000' })).toStartWith('QUARRY_SYSLOG_UDP:')
    expect(refused({ QUARRY_SYSLOG_TAG: 'bad tag' })).toStartWith('QUARRY_SYSLOG_TAG:')
    expect(refused({ QUARRY_SYSLOG_TCP: 'h:1', QUARRY_SYSLOG_TCP_TAG: 'x/y' })).toStartWith('QUARRY_SYSLOG_TCP_TAG:')
    expect(refused({ QUARRY_SYSLOG_MAX_MESSAGE: '100' })).toStartWith('QUARRY_SYSLOG_MAX_MESSAGE:')
    expect(refused({ QUARRY_SYSLOG_MAX_MESSAGE: '1GiB' })).toStartWith('QUARRY_SYSLOG_MAX_MESSAGE:')
    expect(refused({ QUARRY_SYSLOG_MAX_CONNECTIONS: '0' })).toStartWith('QUARRY_SYSLOG_MAX_CONNECTIONS:')
    expect(refused({ QUARRY_SYSLOG_FRAME_TIMEOUT: 'soon' })).toStartWith('QUARRY_SYSLOG_FRAME_TIMEOUT:')
    expect(refused({ QUARRY_SYSLOG_UDP_QUEUE: '-1' })).toStartWith('QUARRY_SYSLOG_UDP_QUEUE:')
    expect(refused({ QUARRY_TIMESTAMP_ZONE: 'Mars/Olympus' })).toStartWith('QUARRY_TIMESTAMP_ZONE:')
    expect(refused({ QUARRY_TIMESTAMP_ZONE: '+25:00' })).toStartWith('QUARRY_TIMESTAMP_ZONE:')
  })
})
