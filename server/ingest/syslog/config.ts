// The syslog listeners' configuration (QUARRY_SYSLOG_*), read by server/runtime/config.ts: each listener is off unless
// its address is set; TLS needs the server's certificate (QUARRY_TLS_CERT and QUARRY_TLS_KEY). Every bound has a
// variable and a default (docs/security.md).
import { TAG_NAME } from '../../../engine/parse'
import { ConfigError } from '../../runtime/config'
import { type Zone, parseZone } from './zone'

export type SyslogTransport = 'tcp' | 'udp' | 'tls'

export interface SyslogListenerConfig {
  transport: SyslogTransport
  host: string
  /** 0: a free port, chosen when the listener starts (and logged). */
  port: number
  /** The tag every entry of this listener is stored under. */
  tag: string
}

export interface SyslogConfig {
  listeners: SyslogListenerConfig[]
  /** Longest message kept (bytes, without the framing); a longer one is dropped whole and counted ('too-large'). */
  maxMessageBytes: number
  /** Open connections per TCP or TLS listener; one past it is closed at once (counted 'busy'). */
  maxConnections: number
  /** A connection that holds part of a frame this long without completing it is closed (its part counted 'invalid'). */
  frameTimeoutMs: number
  /** Bytes of UDP messages waiting to be stored, per listener; datagrams past it are dropped (counted 'busy'). */
  udpQueueBytes: number
  /** The zone of RFC 3164 timestamps, which carry none (QUARRY_TIMESTAMP_ZONE; UTC by default). */
  zone: Zone
}

interface Parsers {
  bytes(name: string, raw: string): number
  duration(name: string, raw: string): number
  count(name: string, raw: string, min: number, max: number): number
}

function parseAddress(name: string, raw: string): { host: string; port: number } {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):(\d{1,5})$/.exec(raw.trim())
  const port = Number(m?.[2])
  if (!m || port > 65535) throw new ConfigError(`${name}: "${raw}" must be host:port (example: 0.0.0.0:514)`)
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port }
}

function parseTag(name: string, raw: string): string {
  if (!TAG_NAME.test(raw)) throw new ConfigError(`${name}: "${raw}" must be 1 to 128 letters, digits, '.', '_' or '-'`)
  return raw
}

export function parseSyslogConfig(get: (name: string) => string | undefined, tls: boolean, p: Parsers): SyslogConfig {
  const defaultTag = parseTag('QUARRY_SYSLOG_TAG', get('QUARRY_SYSLOG_TAG') ?? 'syslog')
  const listeners: SyslogListenerConfig[] = []
  for (const transport of ['tcp', 'udp', 'tls'] as const) {
    const name = `QUARRY_SYSLOG_${transport.toUpperCase()}`
    const raw = get(name)
    if (raw === undefined) continue
    if (transport === 'tls' && !tls)
      throw new ConfigError(`${name}: needs the server's certificate: set QUARRY_TLS_CERT and QUARRY_TLS_KEY (RFC 5425 syslog over TLS)`)
    const tagName = `${name}_TAG`
    const tagRaw = get(tagName)
    listeners.push({ transport, ...parseAddress(name, raw), tag: tagRaw === undefined ? defaultTag : parseTag(tagName, tagRaw) })
  }
  // 64 KiB, syslog-ng's log-msg-size default: rsyslog's 8 KiB default (RFC 5425's minimum) cuts stack traces and
  // JSON payloads that senders commonly send; a connection holds at most one message of it plus a batch.
  const maxMessageBytes = p.bytes('QUARRY_SYSLOG_MAX_MESSAGE', get('QUARRY_SYSLOG_MAX_MESSAGE') ?? '64KiB')
  if (maxMessageBytes < 480 || maxMessageBytes > 16 * 1024 ** 2)
    throw new ConfigError('QUARRY_SYSLOG_MAX_MESSAGE: must be from 480 bytes (RFC 5424\'s minimum) to 16MiB')
  return {
    listeners,
    maxMessageBytes,
    // 1000: every host of a large site with a connection of its own, while the buffers they may hold together stay
    // bounded (each at most two batches and one message).
    maxConnections: p.count('QUARRY_SYSLOG_MAX_CONNECTIONS', get('QUARRY_SYSLOG_MAX_CONNECTIONS') ?? '1000', 1, 1_000_000),
    // 30 s: a live sender completes a frame within a round trip; a connection idle between whole messages is kept
    // (closing it would lose the next message of rsyslog and syslog-ng, which learn of a close only when they send).
    frameTimeoutMs: p.duration('QUARRY_SYSLOG_FRAME_TIMEOUT', get('QUARRY_SYSLOG_FRAME_TIMEOUT') ?? '30s'),
    // 16 MiB: about half a second of a fast sender's 200-byte messages at 100,000 per second, while a store is slow.
    udpQueueBytes: p.bytes('QUARRY_SYSLOG_UDP_QUEUE', get('QUARRY_SYSLOG_UDP_QUEUE') ?? '16MiB'),
    zone: parseZone('QUARRY_TIMESTAMP_ZONE', get('QUARRY_TIMESTAMP_ZONE') ?? 'UTC'),
  }
}
