// Raw WebSocket clients over TCP for the tests of the server's sockets: ones that never read what they are sent.
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
