// The program of the matching worker threads (match.ts starts them and owns the protocol's guarantees): it compiles
// regular expressions, matches filter stages, and runs the stateless head of a query over batches of entries.
//
// It is started from its bundled source text (match-worker-source.ts), so that it may import the engine and re2js
// and still need no file beside the single executable or the server bundle. It must not import match.ts (whose
// bundle embeds this one).
import type { AutoExtractorDefinition, RunEnv } from '../../engine/module'
import { HeadStages } from '../../engine/pipeline'
import { compileQuery } from '../../engine/query'
import { re2 } from '../../engine/regex'
import { TransferWriter, writeEntryOut } from '../../engine/transfer'
import type { Entry } from '../../engine/entry'

export type FilterStage = { op: 'grep'; text: string } | { op: 'regex'; pattern: string }

/** What a search's head needs of its RunEnv, as it crosses to a worker (resources in shared memory: not copied). */
export interface WireEnv {
  resources: [string, Uint8Array][]
  extractors: [string, AutoExtractorDefinition][]
  maxTracked: number
  start: number
  end: number
  renderer: string
}

/**
 * Entries of a batch: entry i is data[offsets[i], offsets[i+1]), packed into one buffer that is transferred, not
 * copied (Bun's structured clone of 1024 small arrays took 70 ms, the packing 1 ms).
 */
export interface PackedEntries {
  data: Uint8Array
  offsets: Uint32Array
}

/** The first `n` modules of `query` (a normal form), all stateless, over entries with their TS, TAG and SRC. */
export interface HeadBatch extends PackedEntries {
  query: string
  n: number
  env: WireEnv
  /** The values the rest of the pipeline reads (Pipeline.headKeeps); absent: all. */
  keep?: string[]
  ts: Float64Array
  /** TAG and SRC of entry i: names[tags[i]] and names[srcs[i]]. */
  names: string[]
  tags: Uint32Array
  srcs: Uint32Array
}

/**
 * A batch to match against filter `stages`, or to put through a query's head (each compiled once per `key`); or a
 * pattern to compile only.
 */
export type ToMatchWorker =
  | ({ id: number; key: string; stages: FilterStage[] } & PackedEntries)
  | { id: number; key: string; head: HeadBatch }
  | { id: number; compile: string }

/**
 * For filter stages: for each entry, how many of the stages it passed in order (stages.length: all of them). For a
 * head: the entries that came out of it (transfer.ts writeEntryOut, in order). For a pattern: its program size, or
 * why it does not compile.
 */
export interface FromMatchWorker {
  /** 0: the worker has started (sent once, before any answer). */
  id: number
  passed?: Uint16Array
  out?: Uint8Array
  /** For each entry of a head batch, the deepest module of the head it reached (HeadStages.reached). */
  reached?: Uint16Array
  size?: number
  error?: string
  /** How long the work took on the worker, in ms (its own clock: the JS thread's may have been held meanwhile). */
  ms?: number
}

/** Compiled stage lists and heads a worker keeps (an LRU: the key is user input). */
export const CACHE_SIZE = 32

type Test = (d: Buffer) => boolean

/** Filter stages as tests of an entry's bytes. */
function compileFilters(stages: FilterStage[]): Test[] {
  return stages.map((st): Test => {
    if (st.op === 'grep') {
      const needle = Buffer.from(st.text)
      return (d) => d.includes(needle)
    }
    const re = re2().compile(st.pattern)
    return (d) => re.test(d)
  })
}

/** A head's stages, with the sink its outputs go to for the batch at hand. */
interface CompiledHead {
  stages: HeadStages
  emit: (e: Entry) => void
  keep: ReadonlySet<string> | undefined
}

function envOf(w: WireEnv): RunEnv {
  return { ...w, resources: new Map(w.resources), extractors: new Map(w.extractors) }
}

function compileHead(h: HeadBatch): CompiledHead {
  const head: CompiledHead = { stages: undefined as unknown as HeadStages, emit: () => undefined, keep: h.keep && new Set(h.keep) }
  head.stages = new HeadStages(compileQuery(h.query), envOf(h.env), h.n, (e) => head.emit(e))
  return head
}

/** Puts every entry of a batch through the head: the entries that come out, encoded, and how far each went. */
function runHead(head: CompiledHead, h: HeadBatch): { out: Uint8Array; reached: Uint16Array } {
  const w = new TransferWriter(Math.max(1024, h.offsets.length * 16))
  const count = h.offsets.length - 1
  const reached = new Uint16Array(count)
  for (let i = 0; i < count; i++) {
    const from = {
      ts: h.ts[i]!,
      tag: h.names[h.tags[i]!]!,
      src: h.names[h.srcs[i]!]!,
      data: new Uint8Array(h.data.buffer, h.data.byteOffset + h.offsets[i]!, h.offsets[i + 1]! - h.offsets[i]!),
    }
    head.emit = (e) => writeEntryOut(w, i, e, from, head.keep)
    head.stages.push({ ...from, values: new Map() })
    reached[i] = head.stages.reached
  }
  return { out: w.finish(), reached }
}

function cached<T>(cache: Map<string, unknown>, key: string, make: () => T): T {
  let v = cache.get(key) as T | undefined
  if (v !== undefined) cache.delete(key)
  else v = make()
  cache.set(key, v)
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!)
  return v
}

/** The worker's message loop. */
export function matchWorkerMain(): void {
  const scope = globalThis as unknown as Worker
  const cache = new Map<string, unknown>()
  scope.onmessage = (event: MessageEvent<ToMatchWorker>) => {
    const m = event.data
    const started = performance.now()
    try {
      if ('compile' in m) {
        let size: number
        try {
          size = re2().compile(m.compile).programSize()
        } catch (e) {
          scope.postMessage({ id: m.id, error: e instanceof Error ? e.message : String(e), ms: performance.now() - started } satisfies FromMatchWorker)
          return
        }
        scope.postMessage({ id: m.id, size, ms: performance.now() - started } satisfies FromMatchWorker)
        return
      }
      if ('head' in m) {
        const head = cached(cache, m.key, () => compileHead(m.head))
        const { out, reached } = runHead(head, m.head)
        scope.postMessage({ id: m.id, out, reached, ms: performance.now() - started } satisfies FromMatchWorker, [out.buffer as ArrayBuffer, reached.buffer as ArrayBuffer])
        return
      }
      const steps = cached(cache, m.key, () => compileFilters(m.stages))
      const passed = new Uint16Array(m.offsets.length - 1)
      for (let i = 0; i < passed.length; i++) {
        const d = Buffer.from(m.data.buffer, m.data.byteOffset + m.offsets[i]!, m.offsets[i + 1]! - m.offsets[i]!)
        let n = 0
        while (n < steps.length && steps[n]!(d)) n++
        passed[i] = n
      }
      scope.postMessage({ id: m.id, passed, ms: performance.now() - started } satisfies FromMatchWorker, [passed.buffer])
    } catch (e) {
      scope.postMessage({ id: m.id, error: e instanceof Error ? e.message : String(e) } satisfies FromMatchWorker)
    }
  }
  // Ready once warm: what the first batch would load on first use (Buffer, the encoder) is loaded before the pool
  // counts a batch's budget, which starts with its dispatch to a ready worker.
  compileFilters([{ op: 'grep', text: 'x' }])[0]!(Buffer.from('x'))
  new TransferWriter(16).values(new Map([['x', 'x']]))
  scope.postMessage({ id: 0 } satisfies FromMatchWorker)
}

if (!Bun.isMainThread) matchWorkerMain()
