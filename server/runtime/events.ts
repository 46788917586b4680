// Events every replica must act on at once: sessions and API tokens that ended, a session replaced by a refresh, a
// token's new expiry, new ingest tags. The store already refuses an ended session or token on every replica at the next request
// (each request reads its row; nothing about them is cached); these events reach what a replica holds open for
// them: its WebSockets, and the searches they are attached to.
// On PostgreSQL they travel as NOTIFY on one channel, sent after the change committed; every replica LISTENs and
// hands on the events of the others (its own it has handled already). With SQLite there is one process: nothing to send.
// A replica whose listening connection drops misses what is sent meanwhile (Bun reconnects it): its sockets then end at
// their next message or stats tick instead, as they do when they outlive the session's expiry.
import type { PgPool } from '../store/pg'
import type { Logger } from './log'

export type ClusterEvent =
  | { kind: 'sessions-ended'; ids: string[] }
  | { kind: 'tokens-ended'; ids: string[] }
  | { kind: 'session-replaced'; from: string; to: string }
  | { kind: 'token-expiry'; id: string; expires: number }
  /** A batch created ingest tags numbered `from` and above (server/search/tags.ts). */
  | { kind: 'tags-created'; from: number }

export interface ClusterEvents {
  /** Tells the other replicas (not this one). */
  publish(event: ClusterEvent): void
  /** `handler` gets the events the other replicas publish. */
  subscribe(handler: (event: ClusterEvent) => void): void
  close(): Promise<void>
}

/** One process: there is nobody to tell. */
export const localEvents = (): ClusterEvents => ({ publish() {}, subscribe() {}, close: async () => {} })

const CHANNEL = 'quarry_events'
/** PostgreSQL's payload limit is 8000 bytes; id lists are split below it (ids are short: UUIDs, token ids). */
const MAX_PAYLOAD = 7000

/** Listens on the store's pool (one dedicated connection) and publishes through it. Resolves once listening. */
export async function pgEvents(sql: PgPool, replica: string, log: Logger): Promise<ClusterEvents> {
  const handlers: ((event: ClusterEvent) => void)[] = []
  const subscription = await sql.listen(CHANNEL, (payload) => {
    let message: { from?: string; event?: ClusterEvent }
    try {
      message = JSON.parse(payload)
    } catch {
      return log.warn('an unreadable cluster event was ignored', { bytes: payload.length })
    }
    if (message.from === replica || !message.event) return
    for (const h of handlers) {
      try {
        h(message.event)
      } catch (e) {
        log.error('a cluster event handler failed', { kind: message.event.kind, error: e instanceof Error ? e.message : String(e) })
      }
    }
  })
  const send = (event: ClusterEvent) =>
    notify(sql, replica, event).catch((e: unknown) =>
      log.warn('a cluster event could not be sent', { kind: event.kind, error: e instanceof Error ? e.message : String(e) }),
    )
  return {
    publish(event) {
      for (const part of payloadSized(event)) void send(part)
    },
    subscribe(handler) {
      handlers.push(handler)
    },
    close: () => subscription.unlisten(),
  }
}

const notify = (sql: PgPool, from: string, event: ClusterEvent) => sql.notify(CHANNEL, JSON.stringify({ from, event }))

/** The event as one or more events whose payloads stay under PostgreSQL's limit, whatever the number of ids. */
export function payloadSized(event: ClusterEvent): ClusterEvent[] {
  if (event.kind !== 'sessions-ended' && event.kind !== 'tokens-ended') return [event]
  const parts: ClusterEvent[] = []
  let chunk: string[] = []
  let size = 0
  for (const id of event.ids) {
    if (size + id.length + 3 > MAX_PAYLOAD && chunk.length > 0) {
      parts.push({ kind: event.kind, ids: chunk })
      chunk = []
      size = 0
    }
    chunk.push(id)
    size += id.length + 3
  }
  if (chunk.length > 0) parts.push({ kind: event.kind, ids: chunk })
  return parts
}

/**
 * Tells every replica on this database, from a process that is not one (`quarry admin` on a server's host): resolves
 * once PostgreSQL took every part, and rejects when it did not.
 */
export async function publishToReplicas(sql: PgPool, from: string, event: ClusterEvent): Promise<void> {
  for (const part of payloadSized(event)) await notify(sql, from, part)
}
