// The Elasticsearch bulk format (NDJSON: an action line, then for `index` and `create` the document's line) made into
// entries, one per document: data = the document's line as sent, tag = its index (the action's `_index`, else the
// path's) made a valid tag, time = its `@timestamp`, else the time of receipt.
// What Elasticsearch refuses whole (a line that is not an action, an action without its document) is refused whole
// here too; a bad document, a missing index, and the actions that change stored documents (`update`, `delete`: entries
// are never changed in place) are answered per item with 400, and the rest stored.
import type { NewEntry } from '../search/entries'
import { tagOf, textOf } from './elastic-hec-body'

export type BulkAction = 'index' | 'create' | 'update' | 'delete'

/** An Elasticsearch error object, as the bulk answer's items and the error answers carry it. */
export interface EsError {
  type: string
  reason: string
}

/** One item of the bulk answer, in the order of the request's actions. */
export interface BulkItem {
  action: BulkAction
  index: string
  id: string
  status: number
  error?: EsError
}

export interface ParsedBulk {
  /** The good documents' entries, in request order. */
  entries: NewEntry[]
  items: BulkItem[]
  /** For each entry, its item (entries[i] is items[itemOf[i]]). */
  itemOf: number[]
}

/** A request Elasticsearch would refuse whole: nothing of it is stored. */
export class BulkRefused extends Error {
  override name = 'BulkRefused'
  constructor(
    readonly status: 400 | 413,
    readonly type: string,
    message: string,
  ) {
    super(message)
  }
}

const ACTIONS = new Set<string>(['index', 'create', 'update', 'delete'])

export interface BulkOptions {
  /** The `{index}` of `/{index}/_bulk`: the index of actions that name none. */
  pathIndex?: string
  /** Time of receipt, for documents without `@timestamp`. */
  now: number
  /** The entries' SRC. */
  src: string
  /** QUARRY_ES_MAX_DOCS. */
  maxDocs: number
  /** Whether the answer shows the documents' ids (`filter_path` may leave them out): false leaves `id` empty. */
  ids?: boolean
}

export function parseBulk(body: Uint8Array, opts: BulkOptions): ParsedBulk {
  const entries: NewEntry[] = []
  const items: BulkItem[] = []
  const itemOf: number[] = []
  const text = textOf(body)
  let pos = 0
  let lineNo = 0
  /** Where the line nextLine found is in the body (without its line end). */
  let from = 0
  let to = 0
  /**
   * Finds the next line that holds anything but blanks (its place in `from` and `to`); false at the end of the body.
   * No view is made of a line: only a stored document's data needs one.
   */
  const nextLine = (): boolean => {
    while (pos < body.length) {
      let end = body.indexOf(10, pos)
      if (end === -1) end = body.length
      let stop = end
      if (stop > pos && body[stop - 1] === 13) stop--
      from = pos
      to = stop
      pos = end + 1
      lineNo++
      if (!isBlank(body, from, to)) return true
    }
    return false
  }
  // Shippers repeat one action line for every document: it is parsed once while its bytes stay the same.
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength)
  let lastFrom = 0
  let lastTo = -1
  let lastParsed: ReturnType<typeof actionOf> | undefined
  let lastIndex: string | undefined
  let lastTag: string | undefined
  while (nextLine()) {
    const actionLine = lineNo
    const same = lastParsed !== undefined && to - from === lastTo - lastFrom && bytes.compare(bytes, lastFrom, lastTo, from, to) === 0
    const { action, meta } = same ? lastParsed! : (lastParsed = actionOf(text(from, to), actionLine))
    lastFrom = from
    lastTo = to
    const id = opts.ids === false ? '' : typeof meta._id === 'string' && meta._id !== '' ? meta._id : newId()
    const index = typeof meta._index === 'string' && meta._index !== '' ? meta._index : (opts.pathIndex ?? '')
    const item: BulkItem = { action, index, id, status: 201 }
    items.push(item)
    if (items.length > opts.maxDocs)
      throw new BulkRefused(413, 'illegal_argument_exception', `the bulk request holds more than ${opts.maxDocs} actions (QUARRY_ES_MAX_DOCS); send smaller batches`)
    if (action === 'delete') {
      item.status = 400
      item.error = { type: 'action_request_validation_exception', reason: 'delete is not supported: entries are never removed one by one' }
      continue
    }
    if (!nextLine())
      throw new BulkRefused(400, 'illegal_argument_exception', `the ${action} action on line ${actionLine} has no document line after it`)
    if (action === 'update') {
      item.status = 400
      item.error = { type: 'action_request_validation_exception', reason: 'update is not supported: entries are never changed once stored' }
      continue
    }
    // Shippers send one index for a whole batch: its tag is made once while it stays the same.
    if (index !== lastIndex) {
      lastIndex = index
      lastTag = tagOf(index)
    }
    const tag = lastTag
    if (tag === undefined) {
      item.status = 400
      item.error = { type: 'action_request_validation_exception', reason: 'index is missing: name it in the action (_index) or the path (/{index}/_bulk)' }
      continue
    }
    const ts = documentTime(text(from, to))
    if (typeof ts === 'string') {
      item.status = 400
      item.error = { type: 'document_parsing_exception', reason: `[${lineNo}] ${ts}` }
      continue
    }
    itemOf.push(items.length - 1)
    entries.push({ ts: ts ?? opts.now, tag, src: opts.src, data: body.subarray(from, to) })
  }
  return { entries, items, itemOf }
}

/** Whether `body[from, to)` holds only blanks. */
function isBlank(body: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const b = body[i]
    if (b !== 32 && b !== 9 && b !== 13) return false
  }
  return true
}

function actionOf(line: string | undefined, lineNo: number): { action: BulkAction; meta: Record<string, unknown> } {
  let value: unknown
  try {
    if (line === undefined) throw new SyntaxError('not UTF-8')
    value = JSON.parse(line)
  } catch {
    throw new BulkRefused(400, 'x_content_parse_exception', `line ${lineNo} is not a JSON action: expected {"index": {...}}, {"create": {...}}, {"update": {...}} or {"delete": {...}}`)
  }
  const keys = value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.keys(value) : []
  const action = keys[0]
  const meta = action === undefined ? undefined : (value as Record<string, unknown>)[action]
  if (keys.length !== 1 || !ACTIONS.has(action!) || meta === null || typeof meta !== 'object' || Array.isArray(meta))
    throw new BulkRefused(400, 'illegal_argument_exception', `malformed action/metadata line [${lineNo}]: expected one of index, create, update, delete with an object of metadata`)
  return { action: action as BulkAction, meta: meta as Record<string, unknown> }
}

let idCounter = 0
const idPrefix = Buffer.from(crypto.getRandomValues(new Uint8Array(9))).toString('base64url')

/** A new document id, unique within this process's run (ids are answered, not stored). */
function newId(): string {
  return `${idPrefix}${(idCounter++).toString(36)}`
}

/**
 * The document's `@timestamp` in epoch ms; undefined when it has none; a string saying what is wrong when the line is
 * no JSON object or its `@timestamp` is neither a date (strict_date_optional_time) nor epoch milliseconds.
 */
export function documentTime(doc: string | undefined): number | undefined | string {
  let value: unknown
  try {
    if (doc === undefined) throw new SyntaxError('not UTF-8')
    value = JSON.parse(doc)
  } catch {
    return 'failed to parse: the document is not valid JSON (UTF-8)'
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'failed to parse: the document is not a JSON object'
  const t = (value as Record<string, unknown>)['@timestamp']
  if (t === undefined || t === null) return undefined
  const ms = typeof t === 'number' ? (Number.isFinite(t) ? Math.trunc(t) : undefined) : typeof t === 'string' ? dateOf(t) : undefined
  return ms === undefined || !Number.isSafeInteger(ms) ? `failed to parse field [@timestamp]: ${JSON.stringify(t).slice(0, 100)} is not a date or epoch milliseconds` : ms
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/i

/** RFC 3339 as shippers write @timestamp: read by rfc3339 below, far cheaper than DATE's groups (and Date.parse). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/

/** Days in `month` (1-12) of `year`; setUTCFullYear, as Date.UTC reads the years 0-99 as 1900-1999 (0000 is leap). */
function daysIn(year: number, month: number): number {
  const d = new Date(0)
  d.setUTCFullYear(year, month, 0)
  return d.getUTCDate()
}

/**
 * A string RFC3339 matched, in epoch ms (the fraction truncated to the millisecond, as Date.parse reads it), or
 * undefined for a field out of range: 02-30 and 24:00 too (Date.parse would roll them over), as Elasticsearch
 * refuses them. Read from the characters: Date.parse cost a sixth of the bulk route's samples.
 */
export function rfc3339(s: string): number | undefined {
  const two = (i: number) => (s.charCodeAt(i) - 48) * 10 + s.charCodeAt(i + 1) - 48
  const year = two(0) * 100 + two(2)
  const month = two(5)
  const day = two(8)
  const hour = two(11)
  const minute = two(14)
  const second = two(17)
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59 || (day > 28 && day > daysIn(year, month))) return undefined
  let i = 19
  let ms = 0
  if (s.charCodeAt(i) === 46) {
    let digits = 0
    for (i++; i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57; i++) if (digits++ < 3) ms = ms * 10 + s.charCodeAt(i) - 48
    for (; digits < 3; digits++) ms *= 10
  }
  let offset = 0
  if (s.charCodeAt(i) !== 90) {
    const hours = two(i + 1)
    const minutes = two(i + 4)
    if (hours > 23 || minutes > 59) return undefined
    offset = (s.charCodeAt(i) === 45 ? -1 : 1) * (hours * 60 + minutes) * 60_000
  }
  if (year >= 100) return Date.UTC(year, month - 1, day, hour, minute, second, ms) - offset
  // Date.UTC reads the years 0-99 as 1900-1999
  const d = new Date(0)
  d.setUTCFullYear(year, month - 1, day)
  return d.getTime() + ((hour * 60 + minute) * 60 + second) * 1000 + ms - offset
}

/** An ISO 8601 date or date-time (zone-less means UTC, as Elasticsearch reads it), or digits as epoch milliseconds. */
function dateOf(s: string): number | undefined {
  if (RFC3339.test(s)) return rfc3339(s)
  if (/^-?\d{1,16}$/.test(s)) return Number(s)
  const m = DATE.exec(s)
  if (!m) return undefined
  const [, y, mo, d, h = '0', mi = '0', sec = '0', frac = '', zone = 'Z'] = m
  const month = Number(mo) - 1
  const day = Number(d)
  if (month > 11 || day < 1 || day > 31 || Number(h) > 23 || Number(mi) > 59 || Number(sec) > 60) return undefined
  const utc = Date.UTC(Number(y), month, day, Number(h), Number(mi), Number(sec), Number(frac.padEnd(3, '0').slice(0, 3)))
  if (new Date(Date.UTC(Number(y), month, day)).getUTCDate() !== day) return undefined
  if (zone.toUpperCase() === 'Z') return utc
  const sign = zone[0] === '-' ? -1 : 1
  const digits = zone.slice(1).replace(':', '')
  const offset = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || '0')
  return utc - sign * offset * 60_000
}
