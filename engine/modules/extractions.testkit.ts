// What the tests of the extraction and processing modules share: running a query's modules over entries, and
// reading the error a query is refused with.
import type { Entry } from '../entry'
import type { RunEnv } from '../module'
import { compileQueryNow } from '../query'
import { runStages } from '../testing'
import type { Value } from '../value'

export { refusedAt } from '../testing'

export const T0 = Date.parse('2026-01-01T00:00:00Z')

export function env(resources: Record<string, string> = {}): RunEnv {
  const bytes = new Map(Object.entries(resources).map(([k, v]) => [k, new TextEncoder().encode(v)]))
  return { resources: bytes, extractors: new Map(), maxTracked: 1000, start: T0, end: T0 + 86_400_000, renderer: 'text' }
}

export function entry(data: string | Uint8Array, values: Record<string, Value> = {}, ts = T0): Entry {
  return { ts, tag: 'x', src: '192.0.2.1', data: typeof data === 'string' ? new TextEncoder().encode(data) : data, values: new Map(Object.entries(values)) }
}

/** The entries that leave the query's modules (the renderer left out), for entries made of `inputs`. */
export function run(query: string, inputs: (string | Entry)[], resources: Record<string, string> = {}): Entry[] {
  return runStages(query, inputs.map((d) => (typeof d === 'string' ? entry(d) : d)), env(resources))
}

/** The values of the entries that leave the query, as plain objects. */
export function values(query: string, inputs: (string | Entry)[], resources: Record<string, string> = {}): Record<string, Value>[] {
  return run(query, inputs, resources).map((e) => Object.fromEntries(e.values))
}

/** The normal form of a query. */
export const normal = (q: string) => compileQueryNow(q).text

