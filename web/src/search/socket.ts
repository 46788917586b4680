// The console's one search WebSocket (/api/ws/search), shared by every search of the tab (a dashboard's tiles
// included), so that a page never holds more than one of the caller's QUARRY_WS_PER_USER sockets.
//
// Guarantees:
// - Authenticated as the clients do: the session's JWT as the socket's subprotocol. A socket belongs to one JWT: a new
//   session (or none) means a new socket, and the old one is closed.
// - Each request is matched to its answer: the server answers the messages of a socket one at a time, in order, so
//   the oldest waiting request of the answer's `type` is the one answered; an answer without a type (a message the
//   server could not read at all) fails the oldest waiting request.
// - Nothing waits for good: when the socket closes, every waiting request fails with the reason, and users of the
//   socket are told (`onClose`); the next request opens a new socket.
// - The socket closes itself once no search uses it and nothing waits, after IDLE_CLOSE_MS.
import { session } from '../session'

export type Msg = Record<string, unknown>

/** A socket unused for this long (no search open on it, no request waiting) is closed. */
const IDLE_CLOSE_MS = 15_000

/** A failure on the socket: the server's own words (its `Error`), or why the socket ended. */
export class SocketError extends Error {
  override name = 'SocketError'
}

interface Waiting {
  type: string
  resolve: (m: Msg) => void
  reject: (e: Error) => void
}

const isObject = (v: unknown): v is Msg => typeof v === 'object' && v !== null && !Array.isArray(v)

export class SearchSocket {
  private readonly ws: WebSocket
  private readonly opened: Promise<void>
  private readonly waiting: Waiting[] = []
  private readonly closeListeners = new Set<(why: string) => void>()
  private users = 0
  private idleTimer: ReturnType<typeof setTimeout> | undefined
  closed = false

  private constructor(readonly jwt: string) {
    const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api/ws/search`
    this.ws = new WebSocket(url, jwt)
    this.opened = new Promise<void>((resolve, reject) => {
      this.ws.onopen = () => resolve()
      this.ws.onerror = () => reject(new SocketError('the search connection could not be opened'))
    })
    this.opened.catch(() => undefined)
    this.ws.onmessage = (ev) => this.received(ev.data)
    this.ws.onclose = (ev) => this.ended(ev.reason || (ev.code === 1006 ? 'the search connection was lost' : `the search connection closed (${ev.code})`))
    // the opening message of the clients: answered ACK
    void this.send({ Subs: ['PONG', 'parse', 'search', 'attach'] }, 'ACK').catch(() => undefined)
  }

  private static current: SearchSocket | undefined

  /** The tab's socket for the current session (opened when there is none, or when it ended or the session changed). */
  static get(): SearchSocket {
    const jwt = session.jwt()
    if (!jwt) throw new SocketError('not signed in')
    const c = SearchSocket.current
    if (c && !c.closed && c.jwt === jwt) return c
    if (c && !c.closed) c.close()
    return (SearchSocket.current = new SearchSocket(jwt))
  }

  /**
   * Sends a message and resolves with the answer of type `answerType` (the message's own type by default). An
   * answer carrying `Error` rejects with it, unless `keepErrors` (the parse answer, the launch answer) asks for it.
   */
  async send(message: Msg, answerType = String(message.type), keepErrors = false): Promise<Msg> {
    if (this.closed) throw new SocketError('the search connection closed')
    await this.opened
    if (this.closed) throw new SocketError('the search connection closed')
    this.touch()
    return new Promise<Msg>((resolve, reject) => {
      this.waiting.push({
        type: answerType,
        resolve: (m) => {
          const data = isObject(m.data) ? m.data : m
          if (!keepErrors && typeof data.Error === 'string' && data.Error) reject(new SocketError(data.Error))
          else resolve(data)
        },
        reject,
      })
      this.ws.send(JSON.stringify(message))
    })
  }

  /** Sends a message that the server does not answer (the launch's acceptance). */
  async post(message: Msg): Promise<void> {
    if (this.closed) throw new SocketError('the search connection closed')
    await this.opened
    this.ws.send(JSON.stringify(message))
  }

  /** A search starts using the socket; the returned function ends that use. `onClose` hears why the socket ended. */
  use(onClose: (why: string) => void): () => void {
    this.users++
    this.closeListeners.add(onClose)
    this.touch()
    let done = false
    return () => {
      if (done) return
      done = true
      this.users--
      this.closeListeners.delete(onClose)
      this.touch()
    }
  }

  close(): void {
    if (this.closed) return
    this.ws.close(1000)
    this.ended('the search connection closed')
  }

  private touch(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer)
    this.idleTimer = undefined
    if (this.users === 0 && this.waiting.length === 0 && !this.closed) this.idleTimer = setTimeout(() => this.users === 0 && this.waiting.length === 0 && this.close(), IDLE_CLOSE_MS)
  }

  private received(raw: unknown): void {
    let m: unknown
    try {
      m = JSON.parse(String(raw))
    } catch {
      return
    }
    if (!isObject(m)) return
    const type = m.Resp === 'ACK' ? 'ACK' : typeof m.type === 'string' ? m.type : undefined
    const at = type === undefined ? (typeof m.Error === 'string' ? 0 : -1) : this.waiting.findIndex((w) => w.type === type)
    if (at < 0) return
    const [w] = this.waiting.splice(at, 1)
    w!.resolve(m)
    if (this.waiting.length === 0) this.touch()
  }

  private ended(why: string): void {
    const wasClosed = this.closed
    this.closed = true
    if (this.idleTimer) clearTimeout(this.idleTimer)
    for (const w of this.waiting.splice(0)) w.reject(new SocketError(why))
    if (!wasClosed || this.closeListeners.size > 0) for (const l of [...this.closeListeners]) l(why)
    this.closeListeners.clear()
    if (SearchSocket.current === this) SearchSocket.current = undefined
  }
}
