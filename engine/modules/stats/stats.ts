// stats (gravwell/wiki search/stats/stats.md): aggregates of values, by keys, over the whole range or per time window.
//   stats [-b] [-maxtracked n] <op>[(<value>[, q])] [as <name>] [by <value>...] ... [over <duration>]
// Operations (aggregates.ts): count, sum, total, mean, min, max, stddev, variance, unique_count, first, last, and
// percentiles: pNN for NN above 0 and below 100 with up to three decimals (`p95`, `p99.9`), median (p50),
// percentile(<value>, q) with q a percentage from 0 to 100 (0: the min, 100: the max).
// An operation without a value reads DATA (`stats sum` is `stats sum(DATA)`), except count, which then counts entries.
// Each result is set as a value named after its operation (`sum`, `p95`, `percentile`) unless `as` renames it; two
// results of one stats must have different names.
//
// Keys, as the wiki says: a `by` list applies to the operation it follows; if the only `by` of the module follows the
// last operation, it applies to every operation (`stats count sum(x) by host`). Operations with the same keys (same
// names, same order) form one group: each group emits one entry per distinct combination of its keys, with the key
// values and the group's results (`stats sum(len) by IP sum(len) as total` emits an entry per IP with `sum`, and one
// entry with `total`). An unquoted word that reads as an operation ends a by list; a quoted one is a value name.
//
// Entries that lack a key's value are left out of that group; entries that lack an operation's value are left out
// of that operation (count(x) counts the entries that have x; the numeric ones also skip values that read as no
// number: value.ts toNumber).
//
// Modes (search/search.md "Temporal vs Non-temporal"):
// - temporal, when `over` is given or the query's renderer is `chart`: windows are aligned on the epoch
//   (start = floor(ts / span) * span); a window's entries are emitted, in window order, once an entry of a later
//   window arrives (at most FLUSH_SLICE of them per entry that comes after, the rest at the end) and at the end (by
//   slices of FLUSH_SLICE), each with TS = the window's start: no window of many keys holds the event loop. Without `over`, the chart window is the smallest of 1s, 2s, 5s, 10s,
//   15s, 30s, 1m, 2m, 5m, 10m, 15m, 30m, 1h, 2h, 3h, 6h, 12h, 1d (then whole days) that is at least 1 s and at least
//   a 10,000th of the search's range, so a chart has at most about 10,000 windows whatever its range. Windows without
//   entries emit nothing, and a key emits nothing in a window where it has no entry (a `total` then resumes from
//   the running total it had). `over` takes whole milliseconds from 1 ms to 366 days.
// - condensed otherwise: one entry per key at the end over the whole range, TS = the search's end (as `count` has
//   always answered). A group without keys emits its entry even when nothing came (count 0, sum 0).
// Each emitted entry carries Entry.condensed: its window (start, span; span 0 when condensed), the group's key names
// and the aggregate behind each result, so renderers re-bucket by merging (aggregates.ts).
//
// DATA of an emitted entry (the wiki's -b): without -b, the results as text (one result: its text; several:
// `name=value` separated by blanks), so the text renderer shows them; with -b, the body of an entry of the key: the
// one that set the extreme of the group's first min or max, else of its first `first`, else the latest entry. TAG
// and SRC are those of the key's latest entry.
//
// Memory: -maxtracked (default RunEnv.maxTracked, at most MAX_TRACKED_LIMIT) bounds, per operation, the keys held at
// once (in temporal mode: per window, and the running totals of `total` over the whole search) plus, for
// unique_count, the distinct values held. Passing it ends the search with a SearchLimitError naming -maxtracked.
// Windows that ended are held until passed on: each later entry passes on FLUSH_SLICE of their keys and adds at
// most one per group, so they shrink as entries come.
import type { Aggregate, Condensed } from '../../aggregate'
import { type Entry, valueOf } from '../../entry'
import { SearchLimitError } from '../../errors'
import { type Token, quote } from '../../lex'
import { type CompiledModule, type ModuleDef, type RunEnv, type Sink, type Stage, FLUSH_SLICE, argError, flagsText, readFlags } from '../../module'
import type { ModuleCall } from '../../parse'
import { type Value, parseDuration, valueText } from '../../value'
import { UniqueCountAggregate, aggregateKinds, createAggregate, distinctKey, improved, percentileOf, setPrior, totalCarry, zeroWhenEmpty } from './aggregates'

export const MAX_TRACKED_LIMIT = 10_000_000
/** The longest `over` window: 366 days. */
const MAX_SPAN_MS = 366 * 86_400_000

/** One operation as read from the query. */
export interface StatsOp {
  /** The op (`count`, `p95`, `percentile`...). */
  op: string
  /** The value it reads; undefined: `count` of entries. */
  source: string | undefined
  /** Whether the value was written (the normal form writes `sum` for `sum` and `sum(x)` for `sum(x)`). */
  sourceWritten: boolean
  /** percentile's percentage. */
  arg?: number
  /** The value its result is set as. */
  as: string
  /** Its keys, once the by rule is applied. */
  by: string[]
  /** The by list as written after it (undefined: none). */
  writtenBy?: string[]
  token: Token
}

export interface StatsSpec {
  ops: StatsOp[]
  /** The window in ms when `over` is given, and its text as written. */
  over?: { ms: number; text: string }
  keepBody: boolean
  maxTracked?: number
}

const OP_WORD = /^([A-Za-z_][A-Za-z0-9_.]*)(\(.*)?$/

/** Whether a word reads as an operation (it ends a by list). */
export function isOperation(t: Token): boolean {
  if (t.kind !== 'word') return false
  const m = OP_WORD.exec(t.text)
  return !!m && (aggregateKinds.has(m[1]!) || percentileOf(m[1]!) !== null)
}

/**
 * Reads one operation at tokens[i]: `op`, `op(value)`, `percentile(value, q)`, the parentheses possibly spread over
 * several tokens (`sum("a b")`, `percentile(x, 95)`). Answers the op and the index after it.
 */
function readOperation(call: ModuleCall, tokens: Token[], i: number): { op: StatsOp; next: number } {
  const t = tokens[i]!
  const m = t.kind === 'word' ? OP_WORD.exec(t.text) : null
  if (!m) throw argError(call, `expected an operation (count, sum(x), mean(x)...), found ${JSON.stringify(t.text)}`, t)
  const name = m[1]!
  const q = percentileOf(name)
  if (!aggregateKinds.has(name) && q === null)
    throw argError(call, `unknown operation ${JSON.stringify(name)}: expected count, sum, total, mean, min, max, stddev, variance, unique_count, first, last, pNN, median or percentile`, t)
  const args: string[] = []
  let next = i + 1
  if (m[2] !== undefined) {
    // The text after "(": words split at commas; quoted strings whole. Ends at a word ending in ")".
    let closed = false
    const take = (word: string) => {
      let w = word
      if (w.endsWith(')')) {
        w = w.slice(0, -1)
        closed = true
      }
      if (w.includes('(') || w.includes(')')) throw argError(call, 'unbalanced parentheses in an operation', t)
      for (const part of w.split(',')) if (part.trim() !== '') args.push(part.trim())
    }
    take(m[2].slice(1))
    while (!closed) {
      const u = tokens[next]
      if (!u) throw argError(call, `${name}( needs its closing )`, call.end)
      next++
      if (u.kind === 'string') args.push(u.text)
      else take(u.text)
    }
  }
  let arg: number | undefined
  if (name === 'percentile') {
    if (args.length !== 2) throw argError(call, 'percentile takes a value and a percentage: percentile(x, 95)', t)
    const p = Number(args[1])
    if (!/^\d+(\.\d+)?$/.test(args[1]!) || !(p >= 0 && p <= 100)) throw argError(call, 'the percentage of percentile is a number from 0 to 100', t)
    arg = p
    args.pop()
  }
  if (args.length > 1) throw argError(call, `${name} takes one value`, t)
  const written = args[0]
  const source = written ?? (name === 'count' ? undefined : 'DATA')
  return { op: { op: name, source, sourceWritten: written !== undefined, arg, as: name, by: [], token: t }, next }
}

/**
 * Reads the operations, their `as` and `by`, and `over` from the tokens after the flags, and applies the wiki's
 * single-by rule.
 */
export function readOperations(call: ModuleCall, tokens: Token[]): Omit<StatsSpec, 'keepBody' | 'maxTracked'> {
  const ops: StatsOp[] = []
  let over: StatsSpec['over']
  let i = 0
  while (i < tokens.length) {
    const t = tokens[i]!
    const word = t.kind === 'word' ? t.text : undefined
    const last = ops.at(-1)
    if (word === 'by') {
      if (!last) throw argError(call, '"by" must follow an operation', t)
      if (last.writtenBy) throw argError(call, 'an operation takes one "by" list', t)
      const names: string[] = []
      i++
      while (i < tokens.length) {
        const u = tokens[i]!
        if (u.kind === 'word' && (u.text === 'over' || u.text === 'as' || u.text === 'by' || isOperation(u))) break
        names.push(...byNames(u))
        i++
      }
      if (names.length === 0) throw argError(call, '"by" needs at least one value name', tokens[i] ?? call.end)
      if (new Set(names).size !== names.length) throw argError(call, 'a "by" list names a value twice', t)
      last.writtenBy = names
    } else if (word === 'as') {
      const name = tokens[i + 1]
      if (!last) throw argError(call, '"as" must follow an operation', t)
      if (!name) throw argError(call, '"as" needs a name', call.end)
      if (last.as !== last.op) throw argError(call, 'an operation takes one "as"', t)
      last.as = name.text
      i += 2
    } else if (word === 'over') {
      if (tokens[i + 2]) throw argError(call, '"over" must be the last argument', tokens[i + 2])
      over = readOver(call, tokens[i + 1])
      i += 2
    } else {
      const { op, next } = readOperation(call, tokens, i)
      ops.push(op)
      i = next
    }
  }
  if (ops.length === 0) throw argError(call, 'stats needs an operation (count, sum(x), mean(x) by y...)', call.end)
  const withBy = ops.filter((o) => o.writtenBy)
  const shared = withBy.length === 1 && withBy[0] === ops.at(-1)
  const names = new Set<string>()
  for (const o of ops) {
    o.by = (shared ? withBy[0]!.writtenBy : o.writtenBy) ?? []
    if (names.has(o.as)) throw argError(call, `two results named ${JSON.stringify(o.as)}: name one with "as"`, o.token)
    if (o.by.includes(o.as)) throw argError(call, `the result ${JSON.stringify(o.as)} has the name of one of its keys: name it with "as"`, o.token)
    names.add(o.as)
  }
  return { ops, over }
}

/**
 * The value names of one token of a `by` list: the platform writes them apart or joined by commas
 * (`count by Appname,Severity`, as in the wiki's syslog and stackgraph pages); a quoted name is taken whole.
 */
export function byNames(t: Token): string[] {
  return t.kind === 'word' ? t.text.split(',').filter((n) => n !== '') : [t.text]
}

/** A value name in a by list, quoted where it would read as a keyword or an operation. */
export function quoteName(name: string): string {
  const t: Token = { kind: 'word', text: name, pos: 0, end: 0 }
  return name === 'by' || name === 'as' || name === 'over' || isOperation(t) ? `"${name}"` : quote(name)
}

/** The normal form of the operations: as written, single blanks, names quoted where they must be. */
export function operationsText(spec: Omit<StatsSpec, 'keepBody' | 'maxTracked'>): string[] {
  const parts: string[] = []
  for (const o of spec.ops) {
    const args = o.sourceWritten ? [quote(o.source!), ...(o.arg !== undefined ? [String(o.arg)] : [])] : []
    parts.push(args.length ? `${o.op}(${args.join(',')})` : o.op)
    if (o.as !== o.op) parts.push('as', quote(o.as))
    if (o.writtenBy) parts.push('by', ...o.writtenBy.map(quoteName))
  }
  if (spec.over) parts.push('over', spec.over.text)
  return parts
}

/** Reads the duration after `over`. */
export function readOver(call: ModuleCall, d: Token | undefined): { ms: number; text: string } {
  if (!d) throw argError(call, '"over" needs a duration (over 5m)', call.end)
  const ns = parseDuration(d.text)
  if (ns === null || ns % 1_000_000 !== 0 || ns < 1_000_000 || ns > MAX_SPAN_MS * 1_000_000)
    throw argError(call, '"over" needs a duration of whole milliseconds from 1ms to 366d (over 5m, over 1h30m)', d)
  return { ms: ns / 1_000_000, text: d.text }
}

/** Reads `-maxtracked n`. */
export function readMaxTracked(call: ModuleCall, t: Token | true | undefined): number | undefined {
  if (t === undefined || t === true) return undefined
  if (!/^\d+$/.test(t.text) || Number(t.text) < 1 || Number(t.text) > MAX_TRACKED_LIMIT)
    throw argError(call, `-maxtracked needs a whole number from 1 to ${MAX_TRACKED_LIMIT}`, t)
  return Number(t.text)
}

const NICE_SPANS_MS = [1, 2, 5, 10, 15, 30].map((s) => s * 1000).concat([1, 2, 5, 10, 15, 30].map((m) => m * 60_000), [1, 2, 3, 6, 12, 24].map((h) => h * 3_600_000))

/** The window of a chart without `over` (see the header). */
export function chartWindowMs(start: number, end: number): number {
  const range = end - start
  const least = Number.isFinite(range) && range > 0 && start > 0 ? Math.max(1000, range / 10_000) : 1000
  for (const s of NICE_SPANS_MS) if (s >= least) return s
  return Math.ceil(least / 86_400_000) * 86_400_000
}

/** The compiled module of a stats call or of a shorthand (`count by x`), named and written as the caller says. */
export function compileStats(name: string, text: string, spec: StatsSpec): CompiledModule {
  const produces = [...new Set(spec.ops.flatMap((o) => [...o.by, o.as]))]
  const consumes = [...new Set(spec.ops.flatMap((o) => [...(o.sourceWritten ? [o.source!] : []), ...o.by]))]
  return {
    name,
    kind: 'condensing',
    text,
    consumes,
    produces,
    stateless: false,
    // its entries carry the by values and the results only (see statsStage's emit)
    replacesValues: true,
    // the finest zoom of its results (MinZoomWindow)
    windowMs: spec.over?.ms,
    stage: (env) => statsStage(name, spec, env),
  }
}

/** The aggregates of one key in the current window. */
interface Cell {
  by: Value[]
  aggs: Aggregate[]
  tag: string
  src: string
  body: Uint8Array
  /** -b: the body is chosen by an extreme or a first, and is set. */
  bodyFixed: boolean
}

interface Group {
  by: string[]
  ops: StatsOp[]
  cells: Map<string, Cell>
  /** Distinct values held by each unique_count op of the group, over its cells. */
  distinct: number[]
  /** For groups with `total` ops: the running totals carried from window to window, by key. */
  carry: Map<string, number[]> | null
  /** -b: the index of the op whose extreme (min, max) or first value chooses the body; -1: the latest entry. */
  bodyOp: number
  /** The by values of the entry at hand (copied when they make a new cell). */
  scratch: Value[]
  /**
   * For a group by one value: the cell of a string value, by the string itself. Its key (distinctKey: `=` and the
   * string, or past 64 characters a SHA-256 of it) would be built and hashed again per entry; the string an extraction
   * made (often the very same string: TextInterner) finds its cell without that. Emptied with `cells`; a string maps
   * to the cell of its key, always.
   */
  byText: Map<string, Cell>
}


/** A cell's body without -b: none is ever read. */
const NO_BODY = new Uint8Array(0)

/**
 * A copy of an entry's bytes, for a body a cell keeps (-b). An entry's data is a view of a larger buffer (a mapped
 * segment, a batch from a worker): keeping the view would keep that whole buffer alive for as long as the cell.
 */
const ownBytes = (data: Uint8Array) => data.slice()


function statsStage(module: string, spec: StatsSpec, env: RunEnv): Stage {
  const maxTracked = spec.maxTracked ?? env.maxTracked
  const temporal = spec.over !== undefined || env.renderer === 'chart'
  const span = spec.over?.ms ?? (temporal ? chartWindowMs(env.start, env.end) : 0)
  const groups: Group[] = []
  for (const o of spec.ops) {
    const key = JSON.stringify(o.by)
    let g = groups.find((x) => JSON.stringify(x.by) === key)
    if (!g) {
      g = { by: o.by, ops: [], cells: new Map(), distinct: [], carry: null, bodyOp: -1, scratch: new Array<Value>(o.by.length), byText: new Map() }
      groups.push(g)
    }
    g.ops.push(o)
  }
  for (const g of groups) {
    g.distinct = g.ops.map(() => 0)
    if (temporal && g.ops.some((o) => o.op === 'total')) g.carry = new Map()
    g.bodyOp = g.ops.findIndex((o) => o.op === 'min' || o.op === 'max')
    if (g.bodyOp < 0) g.bodyOp = g.ops.findIndex((o) => o.op === 'first')
  }
  const describe = (g: Group, i: number) => {
    const o = g.ops[i]!
    return `${o.op}${o.sourceWritten ? `(${o.source})` : ''}${g.by.length ? ` by ${g.by.join(' ')}` : ''}`
  }
  const limitError = (g: Group, i: number) =>
    new SearchLimitError(
      `${module}: ${describe(g, i)} tracks more than ${maxTracked} distinct ${g.ops[i]!.op === 'unique_count' ? 'keys and values' : 'keys'}: the search was stopped; raise -maxtracked (now ${maxTracked}) or use fewer by values`,
    )

  let windowStart: number | undefined
  let seen = false
  /**
   * Windows that ended and are not yet passed on whole, oldest first: each window's cells by group, and the
   * emission of its rows (one row per step). Pushes and the flush advance them (passOn).
   */
  const closed: { cells: Map<string, Cell>[]; rows: Generator<void> }[] = []

  /** A key's running totals when a new window starts: from the newest closed window that has the key, else carry. */
  const carriedTotals = (g: Group, gi: number, key: string): number[] | undefined => {
    for (let w = closed.length - 1; w >= 0; w--) {
      const cell = closed[w]!.cells[gi]!.get(key)
      if (cell) return g.ops.map((o, i) => (o.op === 'total' ? totalCarry(cell.aggs[i]!) : 0))
    }
    return g.carry!.get(key)
  }

  const newCell = (g: Group, gi: number, key: string, by: Value[], e: Entry): Cell => {
    if (g.cells.size + 1 > maxTracked) throw limitError(g, 0)
    const cell: Cell = {
      by,
      aggs: g.ops.map((o) => createAggregate(o.op, o.arg)!),
      tag: e.tag,
      src: e.src,
      body: spec.keepBody ? ownBytes(e.data) : NO_BODY,
      bodyFixed: false,
    }
    if (g.carry) {
      const carried = carriedTotals(g, gi, key)
      if (carried) g.ops.forEach((o, i) => o.op === 'total' && setPrior(cell.aggs[i]!, carried[i]!))
      else if (g.carry.size + 1 > maxTracked) throw limitError(g, g.ops.findIndex((o) => o.op === 'total'))
    }
    g.cells.set(key, cell)
    return cell
  }

  // A key is the group's by values as unique_count tells values apart (their text, long ones by hash: aggregates.ts
  // distinctKey), each length-prefixed so that no two lists of values share one; a single value is its own key (the
  // common `by x`: no string built per entry).
  const add = (g: Group, gi: number, e: Entry) => {
    let key = ''
    const by = g.scratch
    let cell: Cell | undefined
    if (g.by.length === 1) {
      const v = valueOf(e, g.by[0]!)
      if (v === undefined) return
      by[0] = v
      if (typeof v === 'string') {
        cell = g.byText.get(v)
        if (cell === undefined) {
          key = distinctKey(v)
          cell = g.cells.get(key) ?? newCell(g, gi, key, [...by], e)
          g.byText.set(v, cell)
        }
      } else key = distinctKey(v)
    } else
      for (let k = 0; k < g.by.length; k++) {
        const v = valueOf(e, g.by[k]!)
        if (v === undefined) return
        by[k] = v
        const text = distinctKey(v)
        key += `${text.length}:${text}`
      }
    cell ??= g.cells.get(key) ?? newCell(g, gi, key, [...by], e)
    cell.tag = e.tag
    cell.src = e.src
    for (let i = 0; i < g.ops.length; i++) {
      const o = g.ops[i]!
      const a = cell.aggs[i]!
      if (o.source === undefined) {
        a.add(undefined, e.ts)
        continue
      }
      const v = valueOf(e, o.source)
      if (v === undefined) continue
      if (a instanceof UniqueCountAggregate) {
        const before = a.seen.size
        a.add(v, e.ts)
        g.distinct[i]! += a.seen.size - before
        if (g.cells.size + g.distinct[i]! > maxTracked) throw limitError(g, i)
      } else a.add(v, e.ts)
      if (spec.keepBody && i === g.bodyOp && (o.op === 'first' ? a.n === 1 : improved(a))) {
        cell.body = ownBytes(e.data)
        cell.bodyFixed = true
      }
    }
    if (spec.keepBody && !cell.bodyFixed && g.bodyOp < 0) cell.body = ownBytes(e.data)
  }

  /** Passes on the rows of one window's cells (by group), yielding after each one. */
  function* rowsOf(cells: Map<string, Cell>[], out: Sink, ts: number, start: number, spanMs: number): Generator<void> {
    for (let gi = 0; gi < groups.length; gi++) {
      const g = groups[gi]!
      for (const [key, cell] of cells[gi]!) {
        const values = new Map<string, Value>()
        g.by.forEach((name, i) => values.set(name, cell.by[i]!))
        const aggregates = new Map<string, Aggregate>()
        const texts: string[] = []
        g.ops.forEach((o, i) => {
          const a = cell.aggs[i]!
          aggregates.set(o.as, a)
          if (a.n === 0 && !zeroWhenEmpty(o.op)) return
          const r = a.result()
          values.set(o.as, r)
          texts.push(g.ops.length === 1 ? valueText(r) : `${o.as}=${valueText(r)}`)
        })
        if (g.carry) g.carry.set(key, g.ops.map((o, i) => (o.op === 'total' ? totalCarry(cell.aggs[i]!) : 0)))
        const condensed: Condensed = { start, span: spanMs, by: g.by, aggregates }
        out({ ts, tag: cell.tag, src: cell.src, data: spec.keepBody ? cell.body : Buffer.from(texts.join(' ')), values, condensed })
        yield
      }
    }
  }

  /** Ends the current window: its cells wait in `closed` to be passed on, and the next window starts empty. */
  const close = (out: Sink, ts: number, start: number, spanMs: number) => {
    const cells = groups.map((g) => {
      const held = g.cells
      g.cells = new Map()
      g.byText = new Map()
      g.distinct = g.ops.map(() => 0)
      return held
    })
    closed.push({ cells, rows: rowsOf(cells, out, ts, start, spanMs) })
  }

  /** Passes on up to `budget` rows of the closed windows, oldest first. */
  const passOn = (budget: number) => {
    while (budget > 0 && closed.length > 0) {
      if (closed[0]!.rows.next().done) closed.shift()
      else budget--
    }
  }

  /** The flush: the windows still held, FLUSH_SLICE rows per step (Stage.flush). */
  function* passingOnAll(): Generator<void> {
    while (closed.length > 0) {
      passOn(FLUSH_SLICE)
      yield
    }
  }

  return {
    push(e, out) {
      if (temporal) {
        const ws = Math.floor(e.ts / span) * span
        // Entries come in time order; one from an earlier window (never expected) joins the current one.
        if (windowStart === undefined) windowStart = ws
        else if (ws > windowStart) {
          close(out, windowStart, windowStart, span)
          windowStart = ws
        }
        // At most a slice of the closed windows per entry: a window of a million keys never holds one push.
        passOn(FLUSH_SLICE)
      }
      seen = true
      for (let gi = 0; gi < groups.length; gi++) add(groups[gi]!, gi, e)
    },
    flush(out) {
      if (temporal) {
        if (seen && windowStart !== undefined) close(out, windowStart, windowStart, span)
      } else {
        for (const g of groups)
          if (g.by.length === 0 && g.cells.size === 0)
            g.cells.set('', { by: [], aggs: g.ops.map((o) => createAggregate(o.op, o.arg)!), tag: '', src: '', body: new Uint8Array(0), bodyFixed: false })
        close(out, env.end || Date.now(), env.start, 0)
      }
      return passingOnAll()
    },
  }
}

export const stats: ModuleDef = {
  name: 'stats',
  kind: 'condensing',
  info: 'Aggregates values: count, sum, total, mean, min, max, stddev, variance, unique_count, first, last and percentiles (p50, p95, p99, percentile(x, q)), each with "as", "by" keys and an optional time window (over 5m). Temporal with "over" or when charted, else one result per key over the whole range; -maxtracked bounds the keys held, -b keeps an entry\'s body.',
  examples: ['stats count by host', 'stats mean(ms) p95(ms) by path over 5m', 'stats sum(bytes) as total_bytes unique_count(user)', 'stats percentile(latency, 99.9) as p999 by service'],
  compile(call) {
    const { flags, rest } = readFlags(call, { bool: ['b'], withValue: ['maxtracked'] })
    const maxTracked = readMaxTracked(call, flags.get('maxtracked'))
    const read = readOperations(call, rest)
    const spec: StatsSpec = { ...read, keepBody: flags.has('b'), maxTracked }
    const text = ['stats', ...flagsText(flags, quote), ...operationsText(read)].join(' ')
    return compileStats('stats', text, spec)
  },
}
