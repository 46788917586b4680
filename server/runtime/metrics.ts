// The server's Prometheus metrics, one set per app. What runs per request is kept to a Map lookup and plain
// arithmetic (the whoami hot path is measured, bench/README.md); what needs the store or the search manager (live
// sessions, searches by state) is computed only when /metrics is scraped. Labels are bounded: route templates (never
// raw paths), methods, statuses, repository operations.
// prom-client (its registry, the text format and the default process metrics) is not loaded at start: importing it
// and starting its collectors cost about 30 ms of a ~200 ms cold start (bench/README.md). Every Quarry metric is
// counted here in plain fields from the first request on; the registry is made on the first scrape, or by warmUp()
// which the server calls shortly after it listens, so the default collectors (event loop lag, GC) run from then on.
import type { Registry } from 'prom-client'
import type { BlobStore } from '../blob'
import { BlobNotFoundError, BlobRangeError, BlobTooLargeError } from '../blob'

/** Seconds; from a cached whoami (~0.1 ms) to a slow upload or export. */
const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
const QUERY_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1]
/**
 * One repository call in this many is timed. Timing every call would put a promise callback on each of the
 * several repository calls of every request; sampled, the histogram's shape (and so its quantiles) is the same
 * while its _count is that of the sampled calls (about 1/16 of all of them).
 */
export const QUERY_SAMPLE_EVERY = 16
/** The route label of requests that matched no route (404s of made-up paths): one value, whatever the path. */
export const UNMATCHED_ROUTE = 'unmatched'
/** The text format's content type (prom-client's Registry.PROMETHEUS_CONTENT_TYPE). */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

type Labels = Record<string, string | number>
/** One sample as prom-client's registry renders it. */
interface Sample {
  labels: Labels
  value: number
  metricName?: string
}

/** One labelled histogram series: its count, sum and per-bucket counts (not cumulative). */
class HistogramSeries {
  count = 0
  sum = 0
  readonly buckets: Float64Array
  constructor(
    readonly labels: Labels,
    private readonly bounds: readonly number[],
  ) {
    this.buckets = new Float64Array(bounds.length)
  }

  observe(seconds: number): void {
    this.count++
    this.sum += seconds
    let i = 0
    while (i < this.bounds.length && seconds > this.bounds[i]!) i++
    if (i < this.bounds.length) this.buckets[i]!++
  }

  /** The text format's samples: cumulative buckets ending in +Inf, then _sum and _count. */
  samples(name: string): Sample[] {
    const out: Sample[] = []
    let cumulative = 0
    this.bounds.forEach((le, i) => {
      cumulative += this.buckets[i]!
      out.push({ labels: { ...this.labels, le }, value: cumulative, metricName: `${name}_bucket` })
    })
    out.push({ labels: { ...this.labels, le: '+Inf' }, value: this.count, metricName: `${name}_bucket` })
    out.push({ labels: this.labels, value: this.sum, metricName: `${name}_sum` })
    out.push({ labels: this.labels, value: this.count, metricName: `${name}_count` })
    return out
  }
}

/**
 * A metric family the prom-client registry renders (it calls get() at scrape time, escapes the labels and writes
 * the text format), fed by plain fields: prom-client's own Counter.inc and Histogram.observe hash their labels on
 * every call, about 0.8 µs per request for the two (measured), which is more than this whole bookkeeping, and they
 * would need prom-client loaded at start.
 */
class Family {
  readonly aggregator = 'sum'
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'gauge' | 'histogram',
    private readonly values: () => Sample[] | Promise<Sample[]>,
  ) {}
  async get() {
    return { name: this.name, help: this.help, type: this.type, values: await this.values(), aggregator: this.aggregator }
  }
}

export interface MetricsSources {
  /** Sessions neither ended nor expired, now. */
  liveSessions?: () => Promise<number>
  /** The searches the server holds, by state. */
  searchStates?: () => { state: string; running: boolean }[]
  /** What ingest stored and refused, per listener and protocol (server/ingest/sink.ts). */
  ingest?: () => Iterable<{ listener: string; protocol: string; entries: number; bytes: number; refusals: Map<string, number> }>
}

export class Metrics {
  /** Requests being handled now (received, answer not yet complete). */
  inFlight = 0
  private readonly series = new Map<string, HistogramSeries>()
  private readonly queries = new Map<string, HistogramSeries>()
  private queryTick = 0
  private readonly blobBytes = { in: 0, out: 0 }
  private readonly blobErrors = new Map<string, number>()
  private readonly families: Family[]
  private registryMade: Promise<Registry> | undefined

  constructor(sources: MetricsSources = {}) {
    const byRoute = (name: string) => [...this.series.values()].flatMap((s) => s.samples(name))
    this.families = [
      new Family('quarry_http_requests_total', 'HTTP requests answered, by method, route template and status.', 'counter', () =>
        [...this.series.values()].map((s) => ({ labels: s.labels, value: s.count })),
      ),
      new Family(
        'quarry_http_request_duration_seconds',
        'Time from receiving a request to its answer being complete, by method, route template and status.',
        'histogram',
        () => byRoute('quarry_http_request_duration_seconds'),
      ),
      new Family('quarry_http_requests_in_flight', 'Requests received whose answer is not complete yet.', 'gauge', () => [{ labels: {}, value: this.inFlight }]),
      new Family('quarry_sessions_live', 'Login sessions that have neither ended nor expired.', 'gauge', async () => [
        { labels: {}, value: sources.liveSessions ? await sources.liveSessions() : 0 },
      ]),
      new Family(
        'quarry_searches',
        'Searches the server holds, by state (active, dormant, backgrounded, saving, saved) and whether they still run.',
        'gauge',
        () => {
          const counts = new Map<string, Sample>()
          for (const s of sources.searchStates?.() ?? []) {
            const key = `${s.state} ${s.running}`
            const sample = counts.get(key) ?? { labels: { state: s.state, running: String(s.running) }, value: 0 }
            sample.value++
            counts.set(key, sample)
          }
          return [...counts.values()]
        },
      ),
      new Family('quarry_ingest_entries_total', 'Entries stored by ingest, by listener and protocol.', 'counter', () =>
        [...(sources.ingest?.() ?? [])].map((c) => ({ labels: { listener: c.listener, protocol: c.protocol }, value: c.entries })),
      ),
      new Family('quarry_ingest_bytes_total', 'Bytes of entry data stored by ingest, by listener and protocol.', 'counter', () =>
        [...(sources.ingest?.() ?? [])].map((c) => ({ labels: { listener: c.listener, protocol: c.protocol }, value: c.bytes })),
      ),
      new Family('quarry_ingest_refusals_total', 'Ingest batches or messages refused, by listener, protocol and reason.', 'counter', () =>
        [...(sources.ingest?.() ?? [])].flatMap((c) =>
          [...c.refusals].map(([reason, value]) => ({ labels: { listener: c.listener, protocol: c.protocol, reason }, value })),
        ),
      ),
      new Family(
        'quarry_store_query_duration_seconds',
        `Store (repository) call latency by operation, sampled: one call in ${QUERY_SAMPLE_EVERY} is timed.`,
        'histogram',
        () => [...this.queries.values()].flatMap((s) => s.samples('quarry_store_query_duration_seconds')),
      ),
      new Family(
        'quarry_blob_bytes_total',
        'Bytes written to the blob store (direction="in") and served from it whole (direction="out", downloads).',
        'counter',
        () => [
          { labels: { direction: 'in' }, value: this.blobBytes.in },
          { labels: { direction: 'out' }, value: this.blobBytes.out },
        ],
      ),
      new Family(
        'quarry_blob_errors_total',
        'Blob store operations that failed for a reason other than a missing blob, a bad range or a size limit.',
        'counter',
        () => [...this.blobErrors].map(([op, value]) => ({ labels: { op }, value })),
      ),
    ]
  }

  /**
   * The registry: prom-client loaded, its default process metrics collecting, and every family above in it. Made
   * once, on the first call.
   */
  registry(): Promise<Registry> {
    return (this.registryMade ??= import('prom-client').then(({ Registry, collectDefaultMetrics }) => {
      const registry = new Registry()
      collectDefaultMetrics({ register: registry })
      for (const f of this.families) registry.registerMetric(f as never)
      return registry
    }))
  }

  /** Makes the registry now if it is not made yet (the server does this shortly after it listens). */
  warmUp(): Promise<void> {
    return this.registry().then(() => undefined)
  }

  /** The text format of every metric, now. */
  async text(): Promise<string> {
    return (await this.registry()).metrics()
  }

  /** Counts one answered request; `seconds` from its arrival. */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`
    let s = this.series.get(key)
    if (!s) this.series.set(key, (s = new HistogramSeries({ method, route, status: String(status) }, REQUEST_BUCKETS)))
    s.observe(seconds)
  }

  /** The store with every repository method timed (sampled, see QUERY_SAMPLE_EVERY); `this` of each stays the repository. */
  instrumentStore<S extends object>(store: S): S {
    const wrapped: Record<string, unknown> = Object.create(store)
    for (const [area, repo] of Object.entries(store)) {
      if (repo === null || typeof repo !== 'object') continue
      const proxy: Record<string, unknown> = Object.create(repo)
      for (let proto = Object.getPrototypeOf(repo); proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto))
        for (const name of Object.getOwnPropertyNames(proto)) {
          const fn = (repo as Record<string, unknown>)[name]
          if (name === 'constructor' || typeof fn !== 'function' || Object.hasOwn(proxy, name)) continue
          proxy[name] = this.timed(`${area}.${name}`, repo as Record<string, (...a: unknown[]) => unknown>, name)
        }
      wrapped[area] = proxy
    }
    return wrapped as S
  }

  /** Looked up on each call, so a method replaced on the repository later (tests' fault injection) is the one run. */
  private timed(op: string, target: Record<string, (...a: unknown[]) => unknown>, name: string) {
    const self = this
    return (...args: unknown[]) => {
      if (++self.queryTick % QUERY_SAMPLE_EVERY !== 0) return target[name]!(...args)
      const t0 = performance.now()
      const result = target[name]!(...args)
      const done = () => self.observeQuery(op, (performance.now() - t0) / 1000)
      if (result instanceof Promise) result.then(done, done)
      else done()
      return result
    }
  }

  private observeQuery(op: string, seconds: number) {
    let s = this.queries.get(op)
    if (!s) this.queries.set(op, (s = new HistogramSeries({ op }, QUERY_BUCKETS)))
    s.observe(seconds)
  }

  /** The blob store with the bytes it takes in and serves, and its failures, counted. */
  instrumentBlobs(blobs: BlobStore): BlobStore {
    const bytes = this.blobBytes
    const errors = this.blobErrors
    const failed = (op: string) => (e: unknown) => {
      if (!(e instanceof BlobNotFoundError || e instanceof BlobRangeError || e instanceof BlobTooLargeError)) errors.set(op, (errors.get(op) ?? 0) + 1)
      throw e
    }
    return {
      kind: blobs.kind,
      put: (key, stream, opts) =>
        blobs.put(key, stream, opts).then((r) => {
          bytes.in += r.size
          return r
        }, failed('put')),
      putBytes: (key, data) =>
        blobs.putBytes(key, data).then(() => {
          bytes.in += data.byteLength
        }, failed('put')),
      get: (key, range) => blobs.get(key, range).catch(failed('get')),
      body: (key) =>
        blobs.body(key).then((b) => {
          if (b instanceof Blob) bytes.out += b.size
          return b
        }, failed('body')),
      ...(blobs.map
        ? {
            map: (key: string) =>
              blobs.map!(key).then((b) => {
                bytes.out += b.byteLength
                return b
              }, failed('map')),
          }
        : {}),
      stat: (key) => blobs.stat(key).catch(failed('stat')),
      delete: (key) => blobs.delete(key).catch(failed('delete')),
      copy: (from, to) => blobs.copy(from, to).catch(failed('copy')),
      list: () => blobs.list(),
      sweepPartial: (graceMs) => blobs.sweepPartial(graceMs).catch(failed('sweepPartial')),
    }
  }
}
