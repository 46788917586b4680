// Loki's push API (POST /loki/api/v1/push) into entries: JSON
//   {"streams": [{"stream": {labels}, "values": [["<ns>", "<line>", {structured metadata}?], ...]}]}
// or protobuf (logproto.PushRequest, labels as the text `{a="b", c="d"}`), snappy-compressed as Promtail and Alloy
// send it. Each line is one entry: its data the line as Loki would store it, its time the entry's timestamp (the
// time of receipt when it has none), its tag the value of the label QUARRY_LOKI_TAG_LABEL made a valid tag, else
// QUARRY_LOKI_DEFAULT_TAG. Other labels and structured metadata are not stored: an entry has no place for them but
// its data, and the data is the line, which the line-reading modules (regex, syslog, json...) read as sent.
// An entry that cannot be stored (a timestamp that is no time, a line that is no string, a stream whose labels do
// not parse) is rejected alone; the others are stored, and the answer says what was rejected, as Loki does.
import { type Int64, type PbPushRequest, countNested, protobufMessages } from './protobuf'
import type { NewEntry } from '../search/entries'
import { MAX_JSON_DEPTH, jsonShapeProblem } from '../http/json-shape'
import { TooManyRecords, UndecodableRequest, sanitizeTag } from './otlp'

export interface LokiOptions {
  /** The label whose value names the tag (QUARRY_LOKI_TAG_LABEL). */
  tagLabel: string
  /** The tag of streams without that label (QUARRY_LOKI_DEFAULT_TAG). */
  defaultTag: string
  /** Most entries one request may hold (QUARRY_INGEST_MAX_RECORDS). */
  maxRecords: number
}

export interface DecodedPush {
  entries: NewEntry[]
  rejected: number
  problems: string[]
}

class EntryProblem extends Error {}

/** The latest time an entry may carry: the end of year 9999, as RFC 3339 times everywhere else in the API. */
const MAX_MS = 253402300799999

/**
 * A Prometheus label set as Loki writes it, `{name="value", ...}` (values in Go's quoting: \\, \", \n, \t, \r and
 * \xNN, \uNNNN escapes; an empty set `{}`), as name to value; throws EntryProblem when it is not one.
 */
export function parseLabels(text: string): Map<string, string> {
  const labels = new Map<string, string>()
  let i = 0
  const n = text.length
  const fail = (why: string): never => {
    throw new EntryProblem(`labels ${JSON.stringify(text.slice(0, 200))} do not parse: ${why} at ${i}`)
  }
  const space = () => {
    while (i < n && (text[i] === ' ' || text[i] === '\t')) i++
  }
  space()
  if (text[i] !== '{') fail("no '{'")
  i++
  space()
  while (text[i] !== '}') {
    const start = i
    while (i < n && /[A-Za-z0-9_.]/.test(text[i]!)) i++
    if (i === start || /[0-9]/.test(text[start]!)) fail('no label name')
    const name = text.slice(start, i)
    space()
    if (text[i] !== '=') fail("no '='")
    i++
    space()
    if (text[i] !== '"') fail('no quoted value')
    i++
    let value = ''
    for (;;) {
      if (i >= n) fail('an unterminated value')
      const c = text[i]!
      if (c === '"') break
      if (c === '\\') {
        const e = text[i + 1]
        const simple: Record<string, string> = { '\\': '\\', '"': '"', n: '\n', t: '\t', r: '\r', "'": "'" }
        if (e !== undefined && simple[e] !== undefined) {
          value += simple[e]
          i += 2
          continue
        }
        const hex = e === 'x' ? 2 : e === 'u' ? 4 : e === 'U' ? 8 : 0
        const digits = text.slice(i + 2, i + 2 + hex)
        if (hex === 0 || digits.length !== hex || !/^[0-9a-fA-F]+$/.test(digits)) fail('a bad escape')
        const code = Number.parseInt(digits, 16)
        if (code > 0x10ffff) fail('a bad escape')
        value += String.fromCodePoint(code)
        i += 2 + hex
        continue
      }
      value += c
      i++
    }
    i++
    labels.set(name, value)
    space()
    if (text[i] === ',') {
      i++
      space()
    } else if (text[i] !== '}') fail("no ',' or '}'")
  }
  i++
  space()
  if (i !== n) fail('text after the labels')
  return labels
}

function tagOf(labels: Map<string, string> | Record<string, unknown>, opts: LokiOptions): string {
  const v = labels instanceof Map ? labels.get(opts.tagLabel) : labels[opts.tagLabel]
  return (typeof v === 'string' ? sanitizeTag(v) : undefined) ?? opts.defaultTag
}

class Collector {
  readonly entries: NewEntry[] = []
  rejected = 0
  readonly problems: string[] = []
  reject(where: string, e: unknown, count = 1) {
    if (!(e instanceof EntryProblem)) throw e
    this.rejected += count
    if (this.problems.length < 3) this.problems.push(`${where}: ${e.message}`)
  }
}

function pbTimeToMs(t: { seconds?: Int64 | number; nanos?: number } | null | undefined): number {
  if (!t) return 0
  const s = t.seconds ?? 0
  const seconds = typeof s === 'number' ? s : (s.high | 0) * 4294967296 + (s.low >>> 0)
  const nanos = t.nanos ?? 0
  if (!Number.isSafeInteger(seconds) || seconds < 0 || nanos < 0 || nanos > 999_999_999) throw new EntryProblem('the timestamp is not a time')
  const ms = seconds * 1000 + Math.floor(nanos / 1e6)
  if (ms > MAX_MS) throw new EntryProblem('the timestamp is past the year 9999')
  return ms
}

function decodeProtobuf(body: Uint8Array, opts: LokiOptions, now: number): DecodedPush {
  let request: PbPushRequest
  try {
    // streams (1) > entries (2)
    if (countNested(body, [1, 2], opts.maxRecords) > opts.maxRecords) throw new TooManyRecords(opts.maxRecords, 'entries')
    request = protobufMessages().PushRequest.decode(body) as unknown as PbPushRequest
  } catch (e) {
    if (e instanceof TooManyRecords) throw e
    throw new UndecodableRequest(`the body is no protobuf PushRequest: ${(e as Error).message}`)
  }
  const out = new Collector()
  ;(request.streams ?? []).forEach((stream, s) => {
    const entries = stream.entries ?? []
    let tag: string
    try {
      tag = tagOf(parseLabels(stream.labels ?? ''), opts)
    } catch (e) {
      out.reject(`streams[${s}]`, e, entries.length)
      return
    }
    entries.forEach((entry, i) => {
      try {
        const ts = pbTimeToMs(entry.timestamp) || now
        out.entries.push({ ts, tag, src: '', data: Buffer.from(entry.line ?? '') })
      } catch (e) {
        out.reject(`streams[${s}].entries[${i}]`, e)
      }
    })
  })
  return out
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Milliseconds of a JSON nanosecond timestamp (a decimal string, as Loki's clients send it, or an integer). */
function jsonNanosToMs(v: unknown): number {
  let ms: number
  if (typeof v === 'string' && /^\d{1,19}$/.test(v)) ms = v.length <= 6 ? 0 : Number(v.slice(0, -6))
  else if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) ms = Math.floor(v / 1e6)
  else throw new EntryProblem('the timestamp is not nanoseconds since the epoch (a decimal string)')
  if (ms > MAX_MS) throw new EntryProblem('the timestamp is past the year 9999')
  return ms
}

function decodeJson(body: Uint8Array, opts: LokiOptions, now: number): DecodedPush {
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body)
  } catch {
    throw new UndecodableRequest('the body is not UTF-8 text')
  }
  // [ts, line, metadata] per entry, and a few per stream: 8 values per entry leaves room for small metadata.
  const shape = jsonShapeProblem(text, MAX_JSON_DEPTH, opts.maxRecords * 8)
  if (shape?.problem === 'values') throw new TooManyRecords(opts.maxRecords, `entries (or ${opts.maxRecords * 8} JSON values)`)
  if (shape?.problem === 'depth') throw new UndecodableRequest(`the body is nested more than ${MAX_JSON_DEPTH} levels deep`)
  let request: unknown
  try {
    request = JSON.parse(text)
  } catch (e) {
    throw new UndecodableRequest(`the body is not JSON: ${(e as Error).message}`)
  }
  if (!isObject(request) || !Array.isArray(request.streams)) throw new UndecodableRequest('the body is not a push request: {"streams": [...]}')
  let count = 0
  for (const stream of request.streams) if (isObject(stream) && Array.isArray(stream.values)) count += stream.values.length
  if (count > opts.maxRecords) throw new TooManyRecords(opts.maxRecords, 'entries')
  const out = new Collector()
  request.streams.forEach((stream, s) => {
    let tag: string
    let values: unknown[]
    try {
      if (!isObject(stream)) throw new EntryProblem('is not an object')
      const labels = stream.stream ?? {}
      if (!isObject(labels) || Object.values(labels).some((v) => typeof v !== 'string')) throw new EntryProblem('stream is not an object of string labels')
      if (!Array.isArray(stream.values)) throw new EntryProblem('values is not an array')
      tag = tagOf(labels, opts)
      values = stream.values
    } catch (e) {
      out.reject(`streams[${s}]`, e, isObject(stream) && Array.isArray(stream.values) ? Math.max(stream.values.length, 1) : 1)
      return
    }
    values.forEach((value, i) => {
      try {
        if (!Array.isArray(value) || value.length < 2 || value.length > 3) throw new EntryProblem('is not ["<ns>", "<line>"] or ["<ns>", "<line>", {metadata}]')
        if (typeof value[1] !== 'string') throw new EntryProblem('the line is not a string')
        if (value.length === 3 && !isObject(value[2])) throw new EntryProblem('the structured metadata is not an object')
        const ts = jsonNanosToMs(value[0]) || now
        out.entries.push({ ts, tag, src: '', data: Buffer.from(value[1]) })
      } catch (e) {
        out.reject(`streams[${s}].values[${i}]`, e)
      }
    })
  })
  return out
}

/** The push request's entries (src left empty, for the caller to set), and what was rejected and why. */
export function decodeLokiPush(body: Uint8Array, encoding: 'protobuf' | 'json', opts: LokiOptions, now: number): DecodedPush {
  return encoding === 'protobuf' ? decodeProtobuf(body, opts, now) : decodeJson(body, opts, now)
}
