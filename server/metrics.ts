// The server's Prometheus metrics (prom-client), one registry per app. What runs per request is kept to a Map
// lookup, a counter increment and a histogram observation (the whoami hot path is measured, issue 17); what needs
// the store or the search manager (live sessions, searches by state) is computed only when /metrics is scraped.
// Labels are bounded: route templates (never raw paths), methods, statuses, repository operations.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import type { BlobStore } from './blob'
import { BlobNotFoundError, BlobRangeError, BlobTooLargeError } from './blob'
import type { Store } from './store'

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

/** One (method, route, status) series: its request count, duration sum and per-bucket counts (not cumulative). */
interface RouteSeries {
  labels: { method: string; route: string; status: string }
  count: number
  sum: number
  buckets: Float64Array
}

/**
 * A metric the prom-client registry renders (it calls get() at scrape time, escapes the labels and writes the
 * text format), fed by plain arithmetic: prom-client's own Counter.inc and Histogram.observe hash their labels
 * on every call, about 0.8 µs per request for the two (measured), which is more than this whole bookkeeping.
 */
class RequestMetric {
  readonly aggregator = 'sum'
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'histogram',
    private readonly series: Map<string, RouteSeries>,
  ) {}
  get() {
    const values: { labels: Record<string, string | number>; value: number; metricName?: string }[] = []
    for (const s of this.series.values()) {
      if (this.type === 'counter') {
        values.push({ labels: s.labels, value: s.count })
        continue
      }
      let cumulative = 0
      REQUEST_BUCKETS.forEach((le, i) => {
        cumulative += s.buckets[i]!
        values.push({ labels: { ...s.labels, le }, value: cumulative, metricName: `${this.name}_bucket` })
      })
      values.push({ labels: { ...s.labels, le: '+Inf' }, value: s.count, metricName: `${this.name}_bucket` })
      values.push({ labels: s.labels, value: s.sum, metricName: `${this.name}_sum` })
      values.push({ labels: s.labels, value: s.count, metricName: `${this.name}_count` })
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator }
  }
}

export interface MetricsSources {
  /** Sessions neither ended nor expired, now. */
  liveSessions?: () => Promise<number>
  /** The searches the server holds, by state. */
  searchStates?: () => { state: string; running: boolean }[]
}

export class Metrics {
  readonly registry = new Registry()
  /** Requests being handled now (received, answer not yet complete). */
  inFlight = 0
  private readonly series = new Map<string, RouteSeries>()
  private readonly queries: Histogram<'op'>
  private readonly queryChildren = new Map<string, { observe(v: number): void }>()
  private queryTick = 0
  readonly blobBytes: Counter<'direction'>
  readonly blobErrors: Counter<'op'>

  constructor(sources: MetricsSources = {}) {
    const registers = [this.registry]
    collectDefaultMetrics({ register: this.registry })
    this.registry.registerMetric(
      new RequestMetric('quarry_http_requests_total', 'HTTP requests answered, by method, route template and status.', 'counter', this.series) as never,
    )
    this.registry.registerMetric(
      new RequestMetric(
        'quarry_http_request_duration_seconds',
        'Time from receiving a request to its answer being complete, by method, route template and status.',
        'histogram',
        this.series,
      ) as never,
    )
    const self = this
    new Gauge({
      name: 'quarry_http_requests_in_flight',
      help: 'Requests received whose answer is not complete yet.',
      registers,
      collect() {
        this.set(self.inFlight)
      },
    })
    new Gauge({
      name: 'quarry_sessions_live',
      help: 'Login sessions that have neither ended nor expired.',
      registers,
      async collect() {
        if (sources.liveSessions) this.set(await sources.liveSessions())
      },
    })
    new Gauge({
      name: 'quarry_searches',
      help: 'Searches the server holds, by state (active, dormant, backgrounded, saving, saved) and whether they still run.',
      labelNames: ['state', 'running'],
      registers,
      collect() {
        this.reset()
        for (const s of sources.searchStates?.() ?? []) this.inc({ state: s.state, running: String(s.running) })
      },
    })
    this.queries = new Histogram({
      name: 'quarry_store_query_duration_seconds',
      help: `Store (repository) call latency by operation, sampled: one call in ${QUERY_SAMPLE_EVERY} is timed.`,
      labelNames: ['op'],
      buckets: QUERY_BUCKETS,
      registers,
    })
    this.blobBytes = new Counter({
      name: 'quarry_blob_bytes_total',
      help: 'Bytes written to the blob store (direction="in") and served from it whole (direction="out", downloads).',
      labelNames: ['direction'],
      registers,
    })
    this.blobErrors = new Counter({
      name: 'quarry_blob_errors_total',
      help: 'Blob store operations that failed for a reason other than a missing blob, a bad range or a size limit.',
      labelNames: ['op'],
      registers,
    })
    this.blobBytes.inc({ direction: 'in' }, 0)
    this.blobBytes.inc({ direction: 'out' }, 0)
  }

  /** Counts one answered request; `seconds` from its arrival. */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`
    let s = this.series.get(key)
    if (!s) {
      s = { labels: { method, route, status: String(status) }, count: 0, sum: 0, buckets: new Float64Array(REQUEST_BUCKETS.length) }
      this.series.set(key, s)
    }
    s.count++
    s.sum += seconds
    let i = 0
    while (i < REQUEST_BUCKETS.length && seconds > REQUEST_BUCKETS[i]!) i++
    if (i < REQUEST_BUCKETS.length) s.buckets[i]!++
  }

  /** The store with every repository method timed (sampled, see QUERY_SAMPLE_EVERY); `this` of each stays the repository. */
  instrumentStore<S extends Store>(store: S): S {
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
    let child = this.queryChildren.get(op)
    if (!child) this.queryChildren.set(op, (child = this.queries.labels({ op })))
    child.observe(seconds)
  }

  /** The blob store with the bytes it takes in and serves, and its failures, counted. */
  instrumentBlobs(blobs: BlobStore): BlobStore {
    const bytes = this.blobBytes
    const errors = this.blobErrors
    const failed = (op: string) => (e: unknown) => {
      if (!(e instanceof BlobNotFoundError || e instanceof BlobRangeError || e instanceof BlobTooLargeError)) errors.inc({ op })
      throw e
    }
    return {
      kind: blobs.kind,
      put: (key, stream, opts) =>
        blobs.put(key, stream, opts).then((r) => {
          bytes.inc({ direction: 'in' }, r.size)
          return r
        }, failed('put')),
      get: (key, range) => blobs.get(key, range).catch(failed('get')),
      body: (key) =>
        blobs.body(key).then((b) => {
          if (b instanceof Blob) bytes.inc({ direction: 'out' }, b.size)
          return b
        }, failed('body')),
      ...(blobs.map
        ? {
            map: (key: string) =>
              blobs.map!(key).then((b) => {
                bytes.inc({ direction: 'out' }, b.byteLength)
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
