// A syslog listener over UDP (RFC 5426): one datagram, one message, from any sender. UDP cannot slow a sender: the
// messages waiting to be stored are bounded (QUARRY_SYSLOG_UDP_QUEUE) and datagrams past the bound are dropped and
// counted (reason 'busy'); so are those the kernel drops when its receive buffer fills, which Quarry cannot count.
import type { Logger } from '../../runtime/log'
import { Batcher } from './batch'
import type { SyslogConfig, SyslogListenerConfig } from './config'
import { datagramMessage } from './framing'
import { type ListenerDeps, type RunningListener, senderAddress } from './stream'

export async function listenDatagram(listener: SyslogListenerConfig, config: SyslogConfig, deps: ListenerDeps): Promise<RunningListener> {
  const { sink, clock } = deps
  const log: Logger = deps.log
  const label = 'syslog-udp'
  const frameSource = { listener: label, protocol: 'frame' }
  const batcher = new Batcher({ sink, listener: label, tag: listener.tag, zone: config.zone, log })
  let stopping = false
  const socket = await Bun.udpSocket({
    hostname: listener.host,
    port: listener.port,
    socket: {
      data(_socket, datagram, _port, address) {
        if (stopping) return
        const m = datagramMessage(datagram)
        if (!m) return
        if (m.byteLength > config.maxMessageBytes) return sink.refused(frameSource, 'too-large')
        if (batcher.held + m.byteLength > config.udpQueueBytes) return sink.refused(frameSource, 'busy')
        // A copy: the message is kept until stored, past this call.
        batcher.add(Buffer.from(m), senderAddress(address), clock())
      },
      error(_socket, error) {
        log.debug('syslog datagram failed', { listener: label, error: error.message })
      },
    },
  })
  return {
    transport: 'udp',
    host: listener.host,
    port: socket.port,
    tag: listener.tag,
    held: () => batcher.held,
    async stop(graceMs: number) {
      stopping = true
      socket.close()
      await Promise.race([batcher.flush(), Bun.sleep(graceMs)])
      const dropped = batcher.abandon()
      if (dropped > 0) log.warn('syslog messages dropped at shutdown: not stored within the grace', { listener: label, dropped, graceMs })
    },
  }
}
