// The ingest rate of each user (QUARRY_INGEST_RATE): a token bucket of bytes per user that refills at the rate and
// holds at most one second's worth. A batch is admitted whenever its user's bucket is not in debt, and takes its
// bytes (the bucket may go below zero: a batch is never refused for its size alone, which the body limit bounds);
// while in debt the user's batches are refused with the time until it is paid off (429 with Retry-After). Over any
// span a user ingests at most the rate times the span, plus one second's worth and one batch.
// The buckets are per process: in a cluster each replica allows the rate, so a user spreading batches over n
// replicas gets up to n times it (documented in docs/security.md).

/** Buckets kept before full ones (users idle for a second or more) are dropped. */
const SWEEP_AT = 10_000

interface Bucket {
  tokens: number
  at: number
}

export class IngestRate {
  private readonly buckets = new Map<number, Bucket>()

  constructor(
    /** Bytes per second. */
    private readonly rate: number,
    /** Monotonic milliseconds: real time, whatever clock the records use. */
    private readonly now: () => number = () => performance.now(),
  ) {}

  private bucket(uid: number, now: number): Bucket {
    const b = this.buckets.get(uid)
    if (!b) return { tokens: this.rate, at: now }
    return { tokens: Math.min(this.rate, b.tokens + ((now - b.at) * this.rate) / 1000), at: now }
  }

  /** Takes `bytes` for `uid`: answers 0 when admitted, else the milliseconds until the user may send again. */
  take(uid: number, bytes: number): number {
    const now = this.now()
    const b = this.bucket(uid, now)
    if (b.tokens < 0) {
      this.buckets.set(uid, b)
      return Math.ceil((-b.tokens * 1000) / this.rate)
    }
    b.tokens -= bytes
    this.buckets.set(uid, b)
    if (this.buckets.size > SWEEP_AT) for (const k of this.buckets.keys()) if (this.bucket(k, now).tokens >= this.rate && k !== uid) this.buckets.delete(k)
    return 0
  }

  /** Gives back what a refused batch took (it stored nothing). */
  refund(uid: number, bytes: number): void {
    const b = this.buckets.get(uid)
    if (b) b.tokens += bytes
  }
}
