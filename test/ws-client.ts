// WebSocket clients for the tests of the server's sockets: raw ones over TCP that never read what they are sent,
// and openSocket, a client that keeps what it received for the tests to wait on.
import { expect } from 'bun:test'
import { connect as tcpConnect } from 'node:net'

/** A raw WebSocket client that sends requests and never reads a byte of the answers. */
export async function nonReadingClient(port: number, jwt: string, path = '/api/ws/search') {
  const sock = tcpConnect(port, '127.0.0.1')
  await new Promise<void>((resolve) => sock.once('connect', () => resolve()))
  sock.on('error', () => undefined)
  // The handshake is read, as any client does before it sends frames (the upgrade is answered only once the
  // caller is authenticated, which takes a store round trip); from then on nothing more is read.
  const upgraded = new Promise<string>((resolve) => {
    let head = ''
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1')
      if (!head.includes('\r\n\r\n')) return
      sock.off('data', onData)
      sock.pause()
      resolve(head)
    }
    sock.on('data', onData)
  })
  sock.write(
    `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n` +
      `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nAuthorization: Bearer ${jwt}\r\n\r\n`,
  )
  expect(await upgraded).toStartWith('HTTP/1.1 101')
  const send = (message: unknown) => sock.write(frame(JSON.stringify(message)))
  return { sock, send }
}

/** One masked text frame of a client (payloads under 64 KiB). */
export function frame(text: string): Buffer {
  const payload = Buffer.from(text)
  const mask = Buffer.from([1, 2, 3, 4])
  const head = payload.length < 126 ? Buffer.from([0x81, 0x80 | payload.length]) : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 255])
  return Buffer.concat([head, mask, Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!))])
}

/** A WebSocket client of the tests: what it received, and the next message a test waits for. */
export interface SocketClient {
  ws: WebSocket
  received: any[]
  send(message: unknown): void
  /** The next message (from now or already received and not yet taken) that `match` accepts. */
  next(match: (m: any) => boolean, timeoutMs?: number): Promise<any>
  closed: Promise<{ code: number; reason: string }>
}

/** Opens a socket as the TypeScript client does (`new WebSocket(url, jwt)`), or with headers. */
export async function openSocket(url: string, auth: { protocol?: string; headers?: Record<string, string> }): Promise<SocketClient> {
  const ws = auth.headers
    ? new WebSocket(url, { headers: auth.headers, protocols: auth.protocol ? [auth.protocol] : [] } as unknown as string[])
    : new WebSocket(url, auth.protocol)
  const received: any[] = []
  const taken = new Set<number>()
  const waiters: (() => void)[] = []
  ws.onmessage = (e) => {
    received.push(JSON.parse(String(e.data)))
    for (const w of waiters.splice(0)) w()
  }
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.addEventListener('close', (e) => {
      resolve({ code: e.code, reason: e.reason })
      for (const w of waiters.splice(0)) w()
    })
  })
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve()
    ws.onerror = (e) => reject(new Error(`socket failed: ${(e as ErrorEvent).message}`))
  })
  return {
    ws,
    received,
    closed,
    send: (m) => ws.send(typeof m === 'string' ? m : JSON.stringify(m)),
    async next(match, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const i = received.findIndex((m, k) => !taken.has(k) && match(m))
        if (i >= 0) {
          taken.add(i)
          return received[i]
        }
        if (Date.now() > deadline) throw new Error(`no matching message; received: ${JSON.stringify(received).slice(0, 2000)}`)
        await Promise.race([new Promise<void>((r) => waiters.push(r)), Bun.sleep(50)])
      }
    },
  }
}
