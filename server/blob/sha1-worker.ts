// The worker thread of server/blob/sha1.ts: keeps one SHA-1 state per hash id, hashes each batch it is sent and
// transfers the batch back (so the main thread reuses it), answering the digest with the final batch. Messages of one
// id arrive in the order they were sent, so the batches are hashed in stream order.
import type { FromHashWorker, ToHashWorker } from './sha1'

declare const self: Worker

const states = new Map<number, Bun.CryptoHasher>()

self.onmessage = (event: MessageEvent<ToHashWorker>) => {
  const m = event.data
  if (m.abort) {
    states.delete(m.id)
    return
  }
  let state = states.get(m.id)
  if (!state) {
    state = new Bun.CryptoHasher('sha1')
    states.set(m.id, state)
  }
  if (m.len > 0) state.update(new Uint8Array(m.buf, 0, m.len))
  let digest: string | undefined
  if (m.final) {
    digest = state.digest('base64')
    states.delete(m.id)
  }
  const reply: FromHashWorker = { id: m.id, buf: m.buf, digest }
  self.postMessage(reply, [m.buf])
}
