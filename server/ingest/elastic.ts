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
}

export function parseBulk(body: Uint8Array, opts: BulkOptions): ParsedBulk {
  const entries: NewEntry[] = []
  const items: BulkItem[] = []
  const itemOf: number[] = []
  const text = textOf(body)
  let pos = 0
  let lineNo = 0
  /** The next line that holds anything but blanks, without its line end; undefined at the end of the body. */
  const nextLine = (): Uint8Array | undefined => {
    while (pos < body.length) {
      let end = body.indexOf(10, pos)
      if (end === -1) end = body.length
      let stop = end
      if (stop > pos && body[stop - 1] === 13) stop--
      const line = body.subarray(pos, stop)
      pos = end + 1
      lineNo++
      if (!isBlank(line)) return line
    }
    return undefined
  }
  // Shippers repeat one action line for every document: it is parsed once while it stays the same.
  let lastAction: string | undefined
  let lastParsed: ReturnType<typeof actionOf> | undefined
  for (let line = nextLine(); line !== undefined; line = nextLine()) {
    const actionLine = lineNo
    const actionText = text(line)
    const { action, meta } = actionText !== undefined && actionText === lastAction ? lastParsed! : (lastParsed = actionOf(actionText, actionLine))
    lastAction = actionText
    const id = typeof meta._id === 'string' && meta._id !== '' ? meta._id : newId()
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
    const doc = nextLine()
    if (doc === undefined)
      throw new BulkRefused(400, 'illegal_argument_exception', `the ${action} action on line ${actionLine} has no document line after it`)
    if (action === 'update') {
      item.status = 400
      item.error = { type: 'action_request_validation_exception', reason: 'update is not supported: entries are never changed once stored' }
      continue
    }
    const tag = tagOf(index)
    if (tag === undefined) {
      item.status = 400
      item.error = { type: 'action_request_validation_exception', reason: 'index is missing: name it in the action (_index) or the path (/{index}/_bulk)' }
      continue
    }
    const ts = documentTime(text(doc))
    if (typeof ts === 'string') {
      item.status = 400
      item.error = { type: 'document_parsing_exception', reason: `[${lineNo}] ${ts}` }
      continue
    }
    itemOf.push(items.length - 1)
    entries.push({ ts: ts ?? opts.now, tag, src: opts.src, data: doc })
  }
  return { entries, items, itemOf }
}

function isBlank(line: Uint8Array): boolean {
  for (const b of line) if (b !== 32 && b !== 9 && b !== 13) return false
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

/** RFC 3339 as shippers write @timestamp: read by Date.parse, which is far cheaper than DATE's groups. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/

const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate()

/** An ISO 8601 date or date-time (zone-less means UTC, as Elasticsearch reads it), or digits as epoch milliseconds. */
function dateOf(s: string): number | undefined {
  if (RFC3339.test(s)) {
    // Date.parse rolls 02-30 over into March and takes 24:00: those are refused, as Elasticsearch does
    const month = Number(s.slice(5, 7))
    const day = Number(s.slice(8, 10))
    if (month < 1 || month > 12 || day < 1 || Number(s.slice(11, 13)) > 23 || (day > 28 && day > daysIn(Number(s.slice(0, 4)), month))) return undefined
    const ms = Date.parse(s)
    return Number.isNaN(ms) ? undefined : ms
  }
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
