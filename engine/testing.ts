// Helpers for the engine's tests: run a query over entries in memory, the way a search runs it (runQuery: the whole
// pipeline and its renderer; runStages: the modules alone), and read the error a query is refused with.
import { expect } from 'bun:test'
import type { Entry } from './entry'
import { QueryError } from './errors'
import { type RunEnv, flushAll } from './module'
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

/**
 * The entries that leave the query's modules (the renderer left out): each stage sees what the one before passed
 * on, in order, then is flushed to its end, the first stage first (as Pipeline runs them).
 */
export function runStages(query: string, entries: readonly Entry[], env: RunEnv = testEnv()): Entry[] {
  let current = [...entries]
  for (const m of compileQueryNow(query).modules) {
    const stage = m.stage(env)
    const next: Entry[] = []
    const out = (x: Entry) => next.push(x)
    for (const e of current) stage.push(e, out)
    flushAll(stage, out)
    current = next
  }
  return current
}

/** Expects the query to be refused at `position` (in the module of index `moduleIndex`, 0 unless given); answers the reason. */
export function refusedAt(query: string, position: number, moduleIndex = 0): string {
  let error: unknown
  try {
    compileQueryNow(query)
  } catch (e) {
    error = e
  }
  expect(error).toBeInstanceOf(QueryError)
  expect({ query, position: (error as QueryError).position, moduleIndex: (error as QueryError).moduleIndex }).toEqual({ query, position, moduleIndex })
  return (error as QueryError).reason
}
