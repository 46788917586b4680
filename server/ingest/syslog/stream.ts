// A syslog listener over TCP (RFC 6587) or TLS (RFC 5425): each connection has its own deframer and batcher, so a
// slow or stuck sender holds only its own buffers (at most a partial frame and a batch) and delays no other.
// Connections past QUARRY_SYSLOG_MAX_CONNECTIONS are closed at once; a connection holding part of a frame for
// QUARRY_SYSLOG_FRAME_TIMEOUT is closed; a connection idle between whole messages is kept (rsyslog and syslog-ng
// learn of a close only by losing the next message they send on it).
import type { Socket, TCPSocketListener } from 'bun'
import type { Logger } from '../../runtime/log'
import { Batcher, type SyslogSink } from './batch'
import { StreamDeframer } from './framing'
import type { SyslogConfig, SyslogListenerConfig } from './config'

export interface RunningListener {
  transport: SyslogListenerConfig['transport']
  host: string
  /** The bound port (the one chosen when the configuration said 0). */
  port: number
  tag: string
  /** Bytes read and not yet stored, all connections together. */
  held(): number
  /** Stops accepting and reading, stores what was read within `graceMs`, drops the rest (logged), closes. */
  stop(graceMs: number): Promise<void>
}

export interface ListenerDeps {
  sink: SyslogSink
  log: Logger
  /** Milliseconds since the epoch: the time of receipt. */
  clock: () => number
  /** The certificate and key of a TLS listener (PEM), with the TLS 1.2 ciphers the HTTPS port offers. */
  tls?: { cert: string; key: string; ciphers?: string }
}

interface Connection {
  deframer: StreamDeframer
  batcher: Batcher
  src: string
  /** A TLS connection whose handshake is not done: it counts toward the bound and the frame timeout like a partial frame. */
  handshaking: boolean
  /** When the partial frame now held began to be held (receipt time); undefined when none is. */
  partialSince: number | undefined
}

/** The sender's address as SRC: an IPv4 address mapped into IPv6 (`::ffff:10.0.0.1`) is written as IPv4. */
export function senderAddress(address: string | undefined): string {
  if (!address) return ''
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address
}

/** How often connections are checked for the frame timeout: a tenth of it, at least every 10 ms and at most every second. */
const sweepEvery = (timeoutMs: number) => Math.min(1000, Math.max(10, Math.floor(timeoutMs / 10)))

export function listenStream(listener: SyslogListenerConfig, config: SyslogConfig, deps: ListenerDeps): RunningListener {
  const { sink, log, clock } = deps
  const label = `syslog-${listener.transport}`
  const frameSource = { listener: label, protocol: 'frame' }
  const connections = new Set<Socket<Connection | undefined>>()
  /**
   * The batchers of closed connections still storing what they read (a connection reads on while a batch is stored,
   * so it may close with batches left): a stop waits for them as for open ones.
   */
  const closing = new Set<Batcher>()
  let stopping = false

  const server: TCPSocketListener<Connection | undefined> = Bun.listen<Connection | undefined>({
    hostname: listener.host,
    port: listener.port,
    exclusive: true,
    ...(listener.transport === 'tls' ? { tls: deps.tls } : {}),
    socket: {
      open(socket) {
        if (stopping || connections.size >= config.maxConnections) {
          if (!stopping) sink.refused(frameSource, 'busy')
          socket.data = undefined
          socket.end()
          return
        }
        const batcher: Batcher = new Batcher({
          sink,
          listener: label,
          tag: listener.tag,
          zone: config.zone,
          log,
          pause: () => socket.pause(),
          resume: () => {
            // The time the connection was paused by the store is not the sender's: its partial frame's clock restarts.
            const c = socket.data
            if (c?.partialSince !== undefined) c.partialSince = clock()
            if (!stopping) socket.resume()
          },
        })
        const tls = listener.transport === 'tls'
        socket.data = {
          deframer: new StreamDeframer(config.maxMessageBytes),
          batcher,
          src: senderAddress(socket.remoteAddress),
          handshaking: tls,
          partialSince: tls ? clock() : undefined,
        }
        connections.add(socket)
      },
      // With this handler `open` runs at the connect, before the handshake: a connection stalled in its handshake is
      // bounded (QUARRY_SYSLOG_MAX_CONNECTIONS) and timed out (QUARRY_SYSLOG_FRAME_TIMEOUT) like any other.
      ...(listener.transport === 'tls'
        ? {
            handshake(socket: Socket<Connection | undefined>, success: boolean) {
              const c = socket.data
              if (!c) return
              if (!success) return void socket.end()
              c.handshaking = false
              if (!c.deframer.partial) c.partialSince = undefined
            },
          }
        : {}),
      data(socket, chunk) {
        const c = socket.data
        if (!c) return
        const now = clock()
        let whole = 0
        c.deframer.push(
          chunk,
          (m) => {
            whole++
            c.batcher.add(m, c.src, now)
          },
          (reason) => sink.refused(frameSource, reason),
        )
        if (!c.deframer.partial && !c.handshaking) c.partialSince = undefined
        else if (whole > 0 || c.partialSince === undefined) c.partialSince = now
      },
      close(socket) {
        connections.delete(socket)
        const c = socket.data
        if (!c) return
        // A frame cut off by the close is not a message, nor is a handshake that never finished: counted, not stored.
        if (c.deframer.partial || c.handshaking) sink.refused(frameSource, 'invalid')
        const batcher = c.batcher
        closing.add(batcher)
        void batcher.flush().finally(() => closing.delete(batcher))
      },
      error(socket, error) {
        log.debug('syslog connection failed', { listener: label, src: socket.data?.src, error: error.message })
      },
    },
  })

  const sweep = setInterval(() => {
    const now = clock()
    for (const socket of connections) {
      const c = socket.data
      if (c?.partialSince !== undefined && !c.batcher.paused && now - c.partialSince >= config.frameTimeoutMs) {
        log.debug('syslog connection closed: a frame was not completed in time', { listener: label, src: c.src, timeoutMs: config.frameTimeoutMs })
        c.partialSince = undefined
        socket.end()
      }
    }
  }, sweepEvery(config.frameTimeoutMs))
  sweep.unref()

  return {
    transport: listener.transport,
    host: listener.host,
    port: server.port,
    tag: listener.tag,
    held: () => [...connections].reduce((n, s) => n + (s.data?.batcher.held ?? 0), 0) + [...closing].reduce((n, b) => n + b.held, 0),
    async stop(graceMs: number) {
      stopping = true
      clearInterval(sweep)
      server.stop(false)
      const open = [...connections]
      for (const socket of open) socket.pause()
      const batchers = [...closing]
      for (const s of open) if (s.data) batchers.push(s.data.batcher)
      const stored = Promise.all(batchers.map((b) => b.flush()))
      await Promise.race([stored, Bun.sleep(graceMs)])
      // What is still held (not stored within the grace, or read after the pause) is dropped: the store closes next.
      let dropped = 0
      for (const b of batchers) dropped += b.abandon()
      if (dropped > 0) log.warn('syslog messages dropped at shutdown: not stored within the grace', { listener: label, dropped, graceMs })
      server.stop(true)
    },
  }
}
