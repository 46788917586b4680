// The one way entries get stored, whatever brought them (the JSON and lines routes, syslog listeners, the shippers'
// HTTP protocols): a batch is checked against the owner's ingest rate, the free-space floor, the owner's storage quota
// and the store's number of distinct tags, then stored whole, durably, before store() resolves, or not at all.
// Every outcome is counted per listener and protocol for /metrics (entries, bytes, refusals by reason).
//
// Back-pressure: the bytes of the batches being stored at once are bounded (QUARRY_INGEST_MAX_PENDING). A batch that
// would pass the bound is refused at once with reason 'busy' (503 with Retry-After over HTTP); a listener that can
// slow its sender instead (TCP) awaits its previous batch before reading more, so it never reaches the bound alone.
import type { Config } from '../runtime/config'
import type { FreeSpaceFloor } from '../runtime/disk-space'
import { ApiError, Errors } from '../http/errors'
import { QuotaExceeded, type Quotas, quotaRefusal } from '../store/quota'
import type { UserRow } from '../../plugins/users/repo'
import { type EntriesRepo, type Ingested, type NewEntry, TagLimitExceeded, entryBytes } from '../search/entries'
import type { TagDirectory } from '../search/tags'
import { IngestRate } from './rate'

/** Where a batch came from, for the metrics: the listener (`http`, `syslog-tcp`...) and the protocol (`json`, `otlp`...). */
export interface IngestSource {
  listener: string
  protocol: string
}

/** Why a batch (or a message) was refused: the metrics' `reason` label. */
export type RefusalReason = 'rate' | 'busy' | 'quota' | 'tags' | 'space' | 'invalid' | 'too-large' | 'auth'

/** A refusal of the sink: the catalogue's error for HTTP, with the reason and, where waiting helps, when to retry. */
export class IngestRefused extends Error {
  override name = 'IngestRefused'
  constructor(
    readonly reason: RefusalReason,
    readonly error: ApiError,
    /** Milliseconds after which the same batch may be admitted (rate and busy refusals). */
    readonly retryAfterMs?: number,
  ) {
    super(error.message)
  }
}

/** The owner a batch counts for (its quota and rate); none for listeners without a user (syslog). */
export interface IngestOwner {
  uid: number
  user: UserRow
}

export interface IngestCounts {
  entries: number
  bytes: number
  refusals: Map<RefusalReason, number>
}

export interface IngestSinkDeps {
  config: Pick<Config, 'maxTags' | 'ingestRateBytes' | 'ingestMaxPendingBytes'>
  entries: EntriesRepo
  quotas: Quotas
  tags: TagDirectory
  space: FreeSpaceFloor
}

export class IngestSink {
  private readonly rate: IngestRate | undefined
  private readonly maxPending: number
  private pending = 0
  /** Counts per `listener protocol`, for /metrics. */
  readonly counts = new Map<string, IngestCounts & IngestSource>()

  constructor(private readonly deps: IngestSinkDeps) {
    this.rate = deps.config.ingestRateBytes === undefined ? undefined : new IngestRate(deps.config.ingestRateBytes)
    this.maxPending = deps.config.ingestMaxPendingBytes
  }

  private countsOf(source: IngestSource): IngestCounts & IngestSource {
    const key = `${source.listener} ${source.protocol}`
    let c = this.counts.get(key)
    if (!c) this.counts.set(key, (c = { ...source, entries: 0, bytes: 0, refusals: new Map() }))
    return c
  }

  /** Counts a refusal made before the sink saw the batch (a bad frame, a bad credential, an oversize message). */
  refused(source: IngestSource, reason: RefusalReason, count = 1): void {
    const c = this.countsOf(source)
    c.refusals.set(reason, (c.refusals.get(reason) ?? 0) + count)
  }

  private refuse(source: IngestSource, e: IngestRefused): never {
    this.refused(source, e.reason)
    throw e
  }

  /**
   * Stores `batch` whole for `owner`, durably, before resolving; throws IngestRefused (and stores nothing) when a
   * bound refuses it. Other errors (the store failing) are thrown as they are, also with nothing stored.
   */
  async store(batch: NewEntry[], owner: IngestOwner | undefined, source: IngestSource): Promise<Ingested> {
    let cost = 0
    let bytes = 0
    for (const e of batch) {
      cost += entryBytes(e)
      bytes += e.data.byteLength
    }
    if (this.pending > 0 && this.pending + cost > this.maxPending)
      this.refuse(source, new IngestRefused('busy', Errors.serviceUnavailable('ingest is busy: too many bytes are being stored at once (QUARRY_INGEST_MAX_PENDING); retry in 1 s'), 1000))
    const wait = owner && this.rate ? this.rate.take(owner.uid, cost) : 0
    if (wait > 0) {
      const seconds = Math.ceil(wait / 1000)
      this.refuse(
        source,
        new IngestRefused('rate', Errors.tooManyRequests(`ingest rate exceeded: each user may ingest ${this.deps.config.ingestRateBytes} bytes per second (QUARRY_INGEST_RATE); retry in ${seconds} s`), wait),
      )
    }
    this.pending += cost
    try {
      try {
        await this.deps.space.check(cost)
      } catch (e) {
        if (e instanceof ApiError) this.refuse(source, new IngestRefused('space', e))
        throw e
      }
      const quota = owner ? await this.deps.quotas.limitFor(owner.user) : undefined
      const stored = await this.deps.entries.ingest(batch, { owner: owner?.uid, quota, maxTags: this.deps.config.maxTags })
      this.deps.tags.stored(stored.tags, stored.created)
      const c = this.countsOf(source)
      c.entries += batch.length
      c.bytes += bytes
      return stored
    } catch (e) {
      if (owner) this.rate?.refund(owner.uid, cost)
      if (e instanceof QuotaExceeded) this.refuse(source, new IngestRefused('quota', quotaRefusal(e)))
      if (e instanceof TagLimitExceeded) this.refuse(source, new IngestRefused('tags', Errors.tooManyTags(e.limit, e.known, e.adding)))
      throw e
    } finally {
      this.pending -= cost
    }
  }
}
