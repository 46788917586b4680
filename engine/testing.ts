// Helpers for the engine's tests: run a query over entries in memory, the way a search runs it.
import type { Entry } from './entry'
import type { RunEnv } from './module'
import { Pipeline } from './pipeline'
import { compileQueryNow } from './query'

export interface TestEntry {
  ts?: number
  tag?: string
  src?: string
  data: string | Uint8Array
}

export function testEnv(over: Partial<RunEnv> = {}): RunEnv {
  return { resources: new Map(), extractors: new Map(), maxTracked: 1_000_000, start: 0, end: 0, renderer: 'text', ...over }
}

/** The entries as the pipeline gets them (in the given order, which tests keep in time order). */
export function entriesOf(list: readonly TestEntry[]): Entry[] {
  return list.map((e, i) => ({
    ts: e.ts ?? 1_700_000_000_000 + i,
    tag: e.tag ?? 'test',
    src: e.src ?? '',
    data: typeof e.data === 'string' ? Buffer.from(e.data) : e.data,
    values: new Map(),
  }))
}

/** The entries that leave the last module (before the renderer), in order, and the renderer's records. */
export function runQuery(query: string, list: readonly TestEntry[], env: Partial<RunEnv> = {}): { out: Entry[]; records: string[] } {
  const q = compileQueryNow(query)
  const records: string[] = []
  const out: Entry[] = []
  const pipeline = new Pipeline(q, testEnv({ renderer: q.renderer.name, ...env }), (r) => records.push(r), (e) => out.push(e))
  for (const e of entriesOf(list)) {
    pipeline.push(e)
    if (pipeline.done()) break
  }
  pipeline.flush()
  return { out, records }
}
