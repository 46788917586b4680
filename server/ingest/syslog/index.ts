// The syslog listeners of the configuration (QUARRY_SYSLOG_TCP, _UDP, _TLS), started by server/main.ts once the HTTP
// server listens and stopped at shutdown before the store closes. Each logs one line at start naming its address,
// transport and tag ('syslog listening', with the port it got when the configuration said 0).
import type { SyslogConfig } from './config'
import { listenDatagram } from './datagram'
import { type ListenerDeps, type RunningListener, listenStream } from './stream'

export type { SyslogConfig } from './config'
export type { RunningListener } from './stream'

export interface SyslogListeners {
  listeners: RunningListener[]
  /** Stops every listener (see RunningListener.stop), together. */
  stop(graceMs: number): Promise<void>
}

export class SyslogListenError extends Error {}

const hostPort = (host: string, port: number) => `${host.includes(':') ? `[${host}]` : host}:${port}`

/** Starts every configured listener; throws SyslogListenError naming the one that could not listen (the others are stopped). */
export async function startSyslog(config: SyslogConfig, deps: ListenerDeps): Promise<SyslogListeners> {
  const listeners: RunningListener[] = []
  for (const l of config.listeners) {
    try {
      listeners.push(l.transport === 'udp' ? await listenDatagram(l, config, deps) : listenStream(l, config, deps))
    } catch (e) {
      await Promise.all(listeners.map((r) => r.stop(0)))
      const inUse = (e as { code?: string }).code === 'EADDRINUSE' || /in use/i.test(String((e as Error).message))
      throw new SyslogListenError(
        `cannot listen for syslog over ${l.transport.toUpperCase()} on ${hostPort(l.host, l.port)}: ${inUse ? 'address in use' : e instanceof Error ? e.message : e}`,
      )
    }
  }
  for (const r of listeners)
    deps.log.info('syslog listening', { transport: r.transport, address: hostPort(r.host, r.port), port: r.port, tag: r.tag })
  return {
    listeners,
    stop: async (graceMs) => void (await Promise.all(listeners.map((r) => r.stop(graceMs)))),
  }
}
