// Splunk HTTP Event Collector bodies made into entries.
// /event: JSON event objects one after another (not an array), each `{time, host, source, sourcetype, index, event,
// fields}`; one entry per event: data = `event` (a string as is, any other value as its JSON), time = `time` (epoch
// seconds, fractional), else receipt; tag = `sourcetype`, else `index`, else the configured default, made a valid tag.
// The sourcetype wins because it names the kind of data, which is what a tag is; the index is where Splunk keeps it,
// often one `main` for everything. `host` is the entry's SRC when it is an IP address, else the sender's address.
// `source` and `fields` are not kept (an entry has no place for them beside its data).
// Like Splunk, the events are read in order and the first bad one ends the request: the events before it are
// stored, it and those after it are not, and the answer names its number (`invalid-event-number`, from 0).
// /raw: one entry per line (LF or CRLF; empty lines skipped), its time found in the line by `timeOf`, else receipt.
import type { NewEntry } from '../search/entries'
import { nodeNet } from '../runtime/lazy-builtins'
import { tagOf, textOf } from './elastic-hec-body'

/** The HEC answer body: `{"text", "code"}`, and the number of the bad event for code 6, 12 and 13. */
export interface HecAnswer {
  text: string
  code: number
  'invalid-event-number'?: number
}

/** The codes and texts Splunk documents (Splunk Enterprise "Troubleshoot HTTP Event Collector"). */
export const HEC = {
  success: { text: 'Success', code: 0 },
  tokenRequired: { text: 'Token is required', code: 2 },
  invalidToken: { text: 'Invalid token', code: 4 },
  noData: { text: 'No data', code: 5 },
  invalidFormat: { text: 'Invalid data format', code: 6 },
  internal: { text: 'Internal server error', code: 8 },
  busy: { text: 'Server is busy', code: 9 },
  eventRequired: { text: 'Event field is required', code: 12 },
  eventBlank: { text: 'Event field cannot be blank', code: 13 },
  healthy: { text: 'HEC is healthy', code: 17 },
} as const

/** A request refused whole: nothing of it is stored. */
export class HecRefused extends Error {
  override name = 'HecRefused'
  constructor(
    readonly status: number,
    readonly answer: HecAnswer,
  ) {
    super(answer.text)
  }
}

export interface HecOptions {
  /** The request's `?sourcetype=`, `?index=`, `?host=`: what an event (or every raw line) names none of. */
  sourcetype?: string
  index?: string
  host?: string
  /** QUARRY_HEC_DEFAULT_TAG. */
  defaultTag: string
  /** Time of receipt. */
  now: number
  /** The sender's address: the SRC of entries whose host is no IP address. */
  src: string
  /** QUARRY_HEC_MAX_EVENTS. */
  maxEvents: number
}

export interface ParsedEvents {
  /** The events before the first bad one (all of them when none is bad). */
  entries: NewEntry[]
  /** The first bad event: its number and the answer naming it. */
  bad?: HecAnswer
}

const encoder = new TextEncoder()

/** The size of the buffers an Utf8Arena writes into. */
const ARENA_CHUNK = 1 << 20

/**
 * The UTF-8 bytes of a request's events, written one after the other into shared buffers: a view each, where
 * TextEncoder.encode made a buffer per event (the HEC route's largest cost, with the garbage it left). The buffers
 * are held by the views, so for as long as the request's entries; a buffer's unused tail is at most one event's
 * worst case (3 bytes per UTF-16 unit).
 */
class Utf8Arena {
  private buf = new Uint8Array(0)
  private used = 0

  bytes(text: string): Uint8Array {
    const most = 3 * text.length
    if (this.used + most > this.buf.byteLength) {
      this.buf = new Uint8Array(Math.max(ARENA_CHUNK, most))
      this.used = 0
    }
    const { written } = encoder.encodeInto(text, this.buf.subarray(this.used))
    const out = this.buf.subarray(this.used, this.used + written)
    this.used += written
    return out
  }
}

const tooMany = (max: number) =>
  new HecRefused(413, { text: `Too many events: a request may hold at most ${max} (QUARRY_HEC_MAX_EVENTS)`, code: HEC.invalidFormat.code })

export function parseHecEvents(body: Uint8Array, opts: HecOptions): ParsedEvents {
  const bounds = eventBounds(body)
  if (bounds.length === 0 && bounds.bad === undefined) throw new HecRefused(400, HEC.noData)
  const good = bounds.bad === undefined ? bounds.length : bounds.bad
  if (good > opts.maxEvents) throw tooMany(opts.maxEvents)
  const entries: NewEntry[] = []
  const text = textOf(body)
  const arena = new Utf8Arena()
  for (let i = 0; i < bounds.length; i++) {
    const start = bounds.starts[i]!
    const end = bounds.ends[i]!
    let event: unknown
    try {
      const json = text(start, end)
      if (json === undefined) throw new SyntaxError('not UTF-8')
      event = JSON.parse(json)
    } catch {
      return { entries, bad: { ...HEC.invalidFormat, 'invalid-event-number': i } }
    }
    const made = entryOf(event as Record<string, unknown>, opts, arena)
    if ('code' in made) return { entries, bad: { ...made, 'invalid-event-number': i } }
    entries.push(made)
  }
  if (bounds.bad !== undefined) return { entries, bad: { ...HEC.invalidFormat, 'invalid-event-number': bounds.bad } }
  return { entries }
}

function entryOf(e: Record<string, unknown>, opts: HecOptions, arena: Utf8Arena): NewEntry | HecAnswer {
  const event = e.event
  if (event === undefined || event === null) return HEC.eventRequired
  if (event === '' || (typeof event === 'string' && event.trim() === '')) return HEC.eventBlank
  let ts = opts.now
  if (e.time !== undefined && e.time !== null) {
    const seconds = typeof e.time === 'number' ? e.time : typeof e.time === 'string' && /^\d+(\.\d+)?$/.test(e.time) ? Number(e.time) : Number.NaN
    const ms = Math.round(seconds * 1000)
    if (!Number.isSafeInteger(ms) || ms < 0) return HEC.invalidFormat
    ts = ms
  }
  const tag = tagFor(str(e.sourcetype) ?? opts.sourcetype, str(e.index) ?? opts.index, opts.defaultTag)
  const data = arena.bytes(typeof event === 'string' ? event : JSON.stringify(event))
  return { ts, tag, src: srcOf(str(e.host) ?? opts.host, opts.src), data }
}

export interface RawOptions extends HecOptions {
  /** The time in a line (server/ingest/timestamps.ts); undefined: none found, the time of receipt is used. */
  timeOf: (line: Uint8Array, receivedAt: number) => number | undefined
}

/** /raw: one entry per non-empty line, all with the request's tag and SRC. */
export function parseHecRaw(body: Uint8Array, opts: RawOptions): NewEntry[] {
  const tag = tagFor(opts.sourcetype, opts.index, opts.defaultTag)
  const src = srcOf(opts.host, opts.src)
  const entries: NewEntry[] = []
  let pos = 0
  while (pos < body.length) {
    let end = body.indexOf(10, pos)
    if (end === -1) end = body.length
    let stop = end
    if (stop > pos && body[stop - 1] === 13) stop--
    if (stop > pos) {
      if (entries.length === opts.maxEvents) throw tooMany(opts.maxEvents)
      const data = body.subarray(pos, stop)
      entries.push({ ts: opts.timeOf(data, opts.now) ?? opts.now, tag, src, data })
    }
    pos = end + 1
  }
  if (entries.length === 0) throw new HecRefused(400, HEC.noData)
  return entries
}

const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined)

/** The tags of the last few names, so a batch whose events name the same sourcetype makes its tag once. */
const tagCache = new Map<string, string | undefined>()

function cachedTag(name: string): string | undefined {
  if (tagCache.has(name)) return tagCache.get(name)
  if (tagCache.size >= 256) tagCache.clear()
  const tag = tagOf(name)
  tagCache.set(name, tag)
  return tag
}

function tagFor(sourcetype: string | undefined, index: string | undefined, defaultTag: string): string {
  return (sourcetype && cachedTag(sourcetype)) || (index && cachedTag(index)) || defaultTag
}

function srcOf(host: string | undefined, sender: string): string {
  return host !== undefined && nodeNet().isIP(host) !== 0 ? host : sender
}

interface Bounds {
  starts: number[]
  ends: number[]
  length: number
  /** The number of the first value that is no JSON object (or is cut off): the events end before it. */
  bad?: number
}

/**
 * Where each top-level JSON object of the body starts and ends, in one pass that follows strings and nesting and
 * parses nothing; a value that does not start with `{`, or a body that ends inside one, ends the list there.
 */
function eventBounds(b: Uint8Array): Bounds {
  const starts: number[] = []
  const ends: number[] = []
  let i = 0
  const n = b.length
  for (;;) {
    while (i < n && (b[i] === 32 || b[i] === 10 || b[i] === 13 || b[i] === 9)) i++
    if (i === n) return { starts, ends, length: starts.length }
    if (b[i] !== 123) return { starts, ends, length: starts.length, bad: starts.length }
    const start = i
    let depth = 0
    let inString = false
    for (; i < n; i++) {
      const c = b[i]!
      if (inString) {
        // to the next quote at once (event text is most of a body); it ends the string unless escaped by an odd run
        // of backslashes
        const quote = b.indexOf(34, i)
        if (quote === -1) {
          i = n
          break
        }
        let slashes = 0
        while (b[quote - 1 - slashes] === 92) slashes++
        i = quote
        if (slashes % 2 === 0) inString = false
      } else if (c === 34) inString = true
      else if (c === 123 || c === 91) depth++
      else if (c === 125 || c === 93) {
        if (--depth === 0) break
      }
    }
    if (i >= n) return { starts, ends, length: starts.length, bad: starts.length }
    i++
    starts.push(start)
    ends.push(i)
  }
}
