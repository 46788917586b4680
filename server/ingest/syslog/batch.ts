// The messages of one connection (or of one UDP listener) on their way to the store: collected into batches (at most
// BATCH_ENTRIES messages or BATCH_BYTES bytes, or what came within LINGER_MS) and stored through the ingest sink one
// batch at a time, a batch per format so that the metrics count each format (protocol label) apart.
//
// Back-pressure: while a batch is being stored the next one fills (reading and parsing go on beside the store); once
// that one is full too the owner is paused (a TCP connection stops reading, so its sender is slowed by TCP itself) and
// resumed when it is taken to be stored. A connection so holds at most two batches (and a message past the second). The sink's 'busy' and 'space' refusals are
// waited out and the batch retried (the sender stays paused meanwhile): syslog has no acknowledgement, so a batch
// given up is lost to the sender too. A batch the sink refuses for good (the store's number of tags) is dropped and
// counted by the sink under that reason; a failing store is retried a few times, then its batch is dropped and logged.
import { IngestRefused, type IngestSource, type RefusalReason } from '../sink'
import type { NewEntry } from '../../search/entries'
import type { Logger } from '../../runtime/log'
import { type SyslogFormat, readMessage } from './message'
import type { Zone } from './zone'

export const BATCH_ENTRIES = 2048
/** With QUARRY_SYSLOG_MAX_CONNECTIONS connections, each holds at most this and one message (docs/security.md). */
export const BATCH_BYTES = 256 * 1024
/**
 * The most messages stored in one call. A batch outgrows BATCH_ENTRIES and BATCH_BYTES by the rest of the chunk that
 * filled it (the pause takes effect after the chunk), and a UDP listener's queue may hold many batches: what is taken
 * is stored in even parts of at most this, never as a full part and a small rest. Such a rest (under the store's
 * SEALED_INGEST_BYTES) went through the row path: half of a fast sender's batches did, at half the speed
 * (bench/README.md, "syslog").
 */
export const STORE_MAX_ENTRIES = 4 * BATCH_ENTRIES
/** Messages that arrive within this of the first one waiting share its batch: a few ms, unnoticed by a search. */
export const LINGER_MS = 5
/** Attempts at a batch the store fails with an error of its own (not a refusal), a second apart, then more. */
const STORE_ATTEMPTS = 5

/** What a batcher needs of server/ingest/sink.ts's IngestSink. */
export interface SyslogSink {
  store(batch: NewEntry[], owner: undefined, source: IngestSource): Promise<unknown>
  refused(source: IngestSource, reason: RefusalReason, count?: number): void
}

export interface BatcherOptions {
  sink: SyslogSink
  /** The metrics' listener label: `syslog-tcp`, `syslog-udp`, `syslog-tls`. */
  listener: string
  tag: string
  zone: Zone
  log: Logger
  /** Called when a batch starts being stored and when everything read is stored (a TCP connection's pause, resume). */
  pause?: () => void
  resume?: () => void
}

export class Batcher {
  private pending = new Map<SyslogFormat, NewEntry[]>()
  private count = 0
  private bytes = 0
  private storingBytes = 0
  private running: Promise<void> | undefined
  private timer: ReturnType<typeof setTimeout> | undefined
  private abandoned = false
  private isPaused = false
  private wake: (() => void) | undefined

  constructor(private readonly o: BatcherOptions) {}

  /** Whether a batch is being stored (the next one filling meanwhile). */
  get storing(): boolean {
    return this.running !== undefined
  }

  /** Bytes read and not yet stored (waiting, or in the batch being stored). */
  get held(): number {
    return this.bytes + this.storingBytes
  }

  /** Adds a message received at `receivedAt` from `src`; `m` must stay unchanged until it is stored. */
  add(m: Uint8Array, src: string, receivedAt: number): void {
    if (this.abandoned) return
    const { format, ts } = readMessage(m, receivedAt, this.o.zone)
    let list = this.pending.get(format)
    if (!list) this.pending.set(format, (list = []))
    list.push({ ts, tag: this.o.tag, src, data: m })
    this.count++
    this.bytes += m.byteLength
    if (this.count >= BATCH_ENTRIES || this.bytes >= BATCH_BYTES) {
      // A batch is full while the one before it is stored: no more is read until that store ends.
      if (this.running) this.setPaused(true)
      else void this.flush()
    } else if (!this.timer && !this.running) this.timer = setTimeout(() => void this.flush(), LINGER_MS)
  }

  /** Whether the owner is paused: a full batch waits for the one being stored. */
  get paused(): boolean {
    return this.isPaused
  }

  private setPaused(paused: boolean): void {
    if (paused === this.isPaused) return
    this.isPaused = paused
    if (paused) this.o.pause?.()
    else this.o.resume?.()
  }

  /** Stores everything held, batch after batch; resolves once nothing is left (or it was abandoned). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    if (this.count === 0 && !this.running) return Promise.resolve()
    return (this.running ??= this.drain().finally(() => {
      this.running = undefined
      if (!this.abandoned) this.setPaused(false)
    }))
  }

  /** Gives up what is held (at shutdown, past its grace): answers the number of messages dropped. */
  abandon(): number {
    this.abandoned = true
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    this.wake?.()
    const dropped = this.count
    this.pending.clear()
    this.count = 0
    this.bytes = 0
    return dropped
  }

  private async drain(): Promise<void> {
    while (this.count > 0 && !this.abandoned) {
      const batches = this.pending
      this.pending = new Map()
      this.storingBytes = this.bytes
      this.count = 0
      this.bytes = 0
      // The full batch that paused the owner is taken: the next one may fill while this one is stored.
      this.setPaused(false)
      // A UDP listener's queue may have grown past one batch while the last one was stored.
      for (const [format, batch] of batches) {
        const parts = Math.ceil(batch.length / STORE_MAX_ENTRIES)
        const size = Math.ceil(batch.length / parts)
        for (let k = 0; k < batch.length; k += size) await this.store(parts === 1 ? batch : batch.slice(k, k + size), format)
      }
      this.storingBytes = 0
    }
  }

  private async store(batch: NewEntry[], format: SyslogFormat): Promise<void> {
    const source = { listener: this.o.listener, protocol: format }
    for (let attempt = 1; !this.abandoned; attempt++) {
      let waitMs: number
      try {
        await this.o.sink.store(batch, undefined, source)
        return
      } catch (e) {
        if (e instanceof IngestRefused) {
          if (e.reason !== 'busy' && e.reason !== 'space') {
            this.o.log.warn('syslog messages refused by the store', { listener: this.o.listener, reason: e.reason, messages: batch.length, error: e.message })
            return
          }
          waitMs = e.retryAfterMs ?? 1000
        } else {
          const error = e instanceof Error ? e.message : String(e)
          if (attempt >= STORE_ATTEMPTS) {
            this.o.log.error('syslog messages lost: the store failed', { listener: this.o.listener, messages: batch.length, attempts: attempt, error })
            return
          }
          this.o.log.warn('syslog messages not stored yet: the store failed; retrying', { listener: this.o.listener, messages: batch.length, error })
          waitMs = 1000 * attempt
        }
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, waitMs)
        this.wake = () => (clearTimeout(t), resolve())
      })
      this.wake = undefined
    }
  }
}
