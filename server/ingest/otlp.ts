// OTLP/HTTP logs (opentelemetry-proto's ExportLogsServiceRequest, protobuf or the OTLP JSON mapping) into entries:
// each log record one entry whose data is a JSON document the `json` module reads:
//   {"body": "text" or any value, "severityText", "severityNumber", "attributes": {...}, "resource": {...},
//    "scope": "name", "scopeVersion", "traceId": "hex", "spanId": "hex", "eventName"}
// (members without a value left out; attribute values as JSON: int64 as a number when exact, else its decimal text;
// bytes as base64). The time is timeUnixNano, else observedTimeUnixNano, else the time of receipt; the tag is the
// resource attribute QUARRY_OTLP_TAG_ATTRIBUTE made a valid tag, else QUARRY_OTLP_DEFAULT_TAG.
// A record that cannot be made an entry (an id of the wrong length, a time that is no integer, a value nested past
// MAX_VALUE_DEPTH) is rejected alone and counted, as OTLP's partial success reports it; a body that is no request
// at all is refused whole (UndecodableRequest).
import { type Int64, type PbAnyValue, type PbExportLogsRequest, type PbKeyValue, type PbLogRecord, countNested, protobufMessages } from './protobuf'
import type { NewEntry } from '../search/entries'
import { MAX_JSON_DEPTH, jsonShapeProblem } from '../http/json-shape'

export type OtlpEncoding = 'protobuf' | 'json'

export interface OtlpOptions {
  /** The resource attribute whose value names the tag (QUARRY_OTLP_TAG_ATTRIBUTE). */
  tagAttribute: string
  /** The tag of records whose resource lacks it (QUARRY_OTLP_DEFAULT_TAG). */
  defaultTag: string
  /** Most log records one request may hold (QUARRY_INGEST_MAX_RECORDS). */
  maxRecords: number
}

/** The body is no export request of the encoding: refused whole (400 with a google.rpc.Status). */
export class UndecodableRequest extends Error {
  override name = 'UndecodableRequest'
}

/** The request holds more records than the bound: refused whole, before anything is built for them. */
export class TooManyRecords extends Error {
  override name = 'TooManyRecords'
  constructor(readonly limit: number, what: string) {
    super(`the request holds more than ${limit} ${what} (QUARRY_INGEST_MAX_RECORDS); send smaller batches`)
  }
}

export interface DecodedLogs {
  entries: NewEntry[]
  /** Records left out, each for the reason of `problems` (the first few, for the answer's error_message). */
  rejected: number
  problems: string[]
}

/** Nesting levels of an AnyValue (arrays and key-value lists) a record's body or attributes may have. */
export const MAX_VALUE_DEPTH = 32

/** Values (of the JSON text) a JSON request may hold per record of the bound: bounds what JSON.parse builds. */
const JSON_VALUES_PER_RECORD = 32

const TAG_CHARS = /[^A-Za-z0-9._-]/g

/** `value` as a valid tag (letters, digits, '.', '_', '-'; at most 128), or undefined when nothing is left of it. */
export function sanitizeTag(value: string): string | undefined {
  const tag = value.replace(TAG_CHARS, '_').slice(0, 128)
  return tag === '' || /^_+$/.test(tag) ? undefined : tag
}

/** Why one record cannot be an entry: it is rejected alone (partial success), the others stored. */
class RecordProblem extends Error {}

// Protobuf: 64-bit integers come as protobufjs Longs (low and high 32 bits) or plain numbers.
const TWO_32 = 4294967296

/** Milliseconds of an unsigned nanosecond count given as its 32-bit halves, exactly (no rounding of 2^64 into a double). */
function nanosToMs(low: number, high: number): number {
  // value = high * 2^32 + low, and 2^32 = 4294 * 10^6 + 967296: each part below stays an exact double.
  const rest = (high >>> 0) * 967296 + (low >>> 0)
  return (high >>> 0) * 4294 + (rest - (rest % 1e6)) / 1e6
}

function pbNanosToMs(v: Int64 | number | undefined): number {
  if (v === undefined) return 0
  if (typeof v === 'number') return Math.floor(v / 1e6)
  return nanosToMs(v.low, v.high)
}

function int64Value(v: Int64 | number): number | string {
  if (typeof v === 'number') return v
  const high = v.high | 0
  const low = v.low >>> 0
  // A number from -2^53 up to 2^53 (excluded), where every integer is exact; past that, its decimal text (the json
  // module would round it).
  if (v.unsigned ? v.high >>> 0 < 0x200000 : high >= -0x200000 && high < 0x200000) return (v.unsigned ? v.high >>> 0 : high) * TWO_32 + low
  const big = v.unsigned ? (BigInt(v.high >>> 0) << 32n) | BigInt(low) : BigInt.asIntN(64, (BigInt(v.high >>> 0) << 32n) | BigInt(low))
  return big.toString()
}

function pbAnyValue(v: PbAnyValue | null | undefined, depth: number): unknown {
  if (!v) return null
  if (depth > MAX_VALUE_DEPTH) throw new RecordProblem(`a value is nested more than ${MAX_VALUE_DEPTH} levels deep`)
  switch (v.value) {
    case 'stringValue':
      return v.stringValue
    case 'boolValue':
      return v.boolValue
    case 'intValue':
      return int64Value(v.intValue!)
    case 'doubleValue':
      return Number.isFinite(v.doubleValue) ? v.doubleValue : String(v.doubleValue)
    case 'bytesValue':
      return Buffer.from(v.bytesValue!).toString('base64')
    case 'arrayValue':
      return (v.arrayValue?.values ?? []).map((x) => pbAnyValue(x, depth + 1))
    case 'kvlistValue':
      return pbAttributes(v.kvlistValue?.values, depth + 1)
    default:
      return null
  }
}

function pbAttributes(list: PbKeyValue[] | undefined, depth: number): Record<string, unknown> | undefined {
  if (!list || list.length === 0) return undefined
  const out: Record<string, unknown> = {}
  for (const kv of list) out[kv.key ?? ''] = pbAnyValue(kv.value, depth)
  return out
}

function hexId(bytes: Uint8Array | undefined, size: number, name: string): string | undefined {
  // an absent field reads as protobufjs's default, an empty buffer (or array)
  if (!bytes || bytes.length === 0) return undefined
  if (bytes.length !== size) throw new RecordProblem(`${name} is ${bytes.length} bytes, not ${size}`)
  return Buffer.from(bytes).toString('hex')
}

/** The entry's document, members in a fixed order, those without a value left out. */
function documentOf(fields: {
  body: unknown
  severityText: string | undefined
  severityNumber: number | undefined
  attributes: Record<string, unknown> | undefined
  resource: Record<string, unknown> | undefined
  scope: string | undefined
  scopeVersion: string | undefined
  traceId: string | undefined
  spanId: string | undefined
  eventName: string | undefined
}): Uint8Array {
  const doc: Record<string, unknown> = {}
  if (fields.body !== undefined && fields.body !== null) doc.body = fields.body
  if (fields.severityText) doc.severityText = fields.severityText
  if (fields.severityNumber) doc.severityNumber = fields.severityNumber
  if (fields.attributes) doc.attributes = fields.attributes
  if (fields.resource) doc.resource = fields.resource
  if (fields.scope) doc.scope = fields.scope
  if (fields.scopeVersion) doc.scopeVersion = fields.scopeVersion
  if (fields.traceId) doc.traceId = fields.traceId
  if (fields.spanId) doc.spanId = fields.spanId
  if (fields.eventName) doc.eventName = fields.eventName
  return Buffer.from(JSON.stringify(doc))
}

function tagOf(resource: Record<string, unknown> | undefined, opts: OtlpOptions): string {
  const v = resource?.[opts.tagAttribute]
  const text = typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined
  return (text !== undefined ? sanitizeTag(text) : undefined) ?? opts.defaultTag
}

class Collector {
  readonly entries: NewEntry[] = []
  rejected = 0
  readonly problems: string[] = []
  reject(where: string, e: unknown) {
    if (!(e instanceof RecordProblem)) throw e
    this.rejected++
    if (this.problems.length < 3) this.problems.push(`${where}: ${e.message}`)
  }
}

function decodeProtobuf(body: Uint8Array, opts: OtlpOptions, now: number): DecodedLogs {
  let request: PbExportLogsRequest
  try {
    // resource_logs (1) > scope_logs (2) > log_records (2)
    if (countNested(body, [1, 2, 2], opts.maxRecords) > opts.maxRecords) throw new TooManyRecords(opts.maxRecords, 'log records')
    request = protobufMessages().ExportLogsServiceRequest.decode(body) as unknown as PbExportLogsRequest
  } catch (e) {
    if (e instanceof TooManyRecords) throw e
    throw new UndecodableRequest(`the body is no protobuf ExportLogsServiceRequest: ${(e as Error).message}`)
  }
  const out = new Collector()
  ;(request.resourceLogs ?? []).forEach((rl, r) => {
    let resource: Record<string, unknown> | undefined
    try {
      resource = pbAttributes(rl.resource?.attributes, 1)
    } catch (e) {
      for (const sl of rl.scopeLogs ?? []) for (const _ of sl.logRecords ?? []) out.reject(`resourceLogs[${r}].resource`, e)
      return
    }
    const tag = tagOf(resource, opts)
    ;(rl.scopeLogs ?? []).forEach((sl, s) => {
      const scope = sl.scope?.name || undefined
      const scopeVersion = sl.scope?.version || undefined
      ;(sl.logRecords ?? []).forEach((lr: PbLogRecord, i) => {
        try {
          const data = documentOf({
            body: pbAnyValue(lr.body, 1),
            severityText: lr.severityText,
            severityNumber: lr.severityNumber,
            attributes: pbAttributes(lr.attributes, 1),
            resource,
            scope,
            scopeVersion,
            traceId: hexId(lr.traceId, 16, 'traceId'),
            spanId: hexId(lr.spanId, 8, 'spanId'),
            eventName: lr.eventName,
          })
          const ts = pbNanosToMs(lr.timeUnixNano) || pbNanosToMs(lr.observedTimeUnixNano) || now
          out.entries.push({ ts, tag, src: '', data })
        } catch (e) {
          out.reject(`resourceLogs[${r}].scopeLogs[${s}].logRecords[${i}]`, e)
        }
      })
    })
  })
  return out
}

// JSON (the OTLP JSON mapping: lowerCamelCase members, trace and span ids in hex, enums as integers, 64-bit integers
// as decimal strings or numbers, bytes in base64; unknown members ignored).
type Json = Record<string, unknown>
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)
const list = (v: unknown, what: string): unknown[] => {
  if (v === undefined || v === null) return []
  if (!Array.isArray(v)) throw new RecordProblem(`${what} is not an array`)
  return v
}

/** Milliseconds of a JSON nanosecond time: an unsigned decimal string or number; 0 when absent. */
function jsonNanosToMs(v: unknown, name: string): number {
  if (v === undefined || v === null) return 0
  if (typeof v === 'string' && /^\d{1,20}$/.test(v)) {
    if (v.length > 20 || (v.length === 20 && v > '18446744073709551615')) throw new RecordProblem(`${name} is past 2^64`)
    return v.length <= 6 ? 0 : Number(v.slice(0, -6))
  }
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return Math.floor(v / 1e6)
  throw new RecordProblem(`${name} is not an unsigned integer (a decimal string)`)
}

function jsonInt64(v: unknown, name: string): number | string {
  if (typeof v === 'number' && Number.isInteger(v)) return v
  if (typeof v === 'string' && /^-?\d{1,19}$/.test(v)) {
    const big = BigInt(v)
    if (big > 9223372036854775807n || big < -9223372036854775808n) throw new RecordProblem(`${name} is out of the int64 range`)
    // the same bound as the protobuf form (int64Value): from -2^53 up to, not including, 2^53
    return big >= -9007199254740992n && big < 9007199254740992n ? Number(big) : big.toString()
  }
  throw new RecordProblem(`${name} is not an integer`)
}

function jsonAnyValue(v: unknown, depth: number): unknown {
  if (v === undefined || v === null) return null
  if (!isObject(v)) throw new RecordProblem('a value is not an AnyValue object')
  if (depth > MAX_VALUE_DEPTH) throw new RecordProblem(`a value is nested more than ${MAX_VALUE_DEPTH} levels deep`)
  if ('stringValue' in v) {
    if (typeof v.stringValue !== 'string') throw new RecordProblem('stringValue is not a string')
    return v.stringValue
  }
  if ('boolValue' in v) {
    if (typeof v.boolValue !== 'boolean') throw new RecordProblem('boolValue is not a boolean')
    return v.boolValue
  }
  if ('intValue' in v) return jsonInt64(v.intValue, 'intValue')
  if ('doubleValue' in v) {
    const d = v.doubleValue
    if (typeof d === 'number') return d
    if (d === 'NaN' || d === 'Infinity' || d === '-Infinity') return d
    if (typeof d === 'string' && d.trim() !== '' && Number.isFinite(Number(d))) return Number(d)
    throw new RecordProblem('doubleValue is not a number')
  }
  if ('bytesValue' in v) {
    if (typeof v.bytesValue !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(v.bytesValue)) throw new RecordProblem('bytesValue is not base64')
    return v.bytesValue
  }
  if ('arrayValue' in v) {
    const a = v.arrayValue
    if (!isObject(a)) throw new RecordProblem('arrayValue is not an object')
    return list(a.values, 'arrayValue.values').map((x) => jsonAnyValue(x, depth + 1))
  }
  if ('kvlistValue' in v) {
    const kv = v.kvlistValue
    if (!isObject(kv)) throw new RecordProblem('kvlistValue is not an object')
    return jsonAttributes(kv.values, depth + 1, 'kvlistValue.values')
  }
  return null
}

function jsonAttributes(v: unknown, depth: number, what: string): Record<string, unknown> | undefined {
  const items = list(v, what)
  if (items.length === 0) return undefined
  const out: Record<string, unknown> = {}
  for (const kv of items) {
    if (!isObject(kv)) throw new RecordProblem(`an item of ${what} is not an object`)
    if (kv.key !== undefined && typeof kv.key !== 'string') throw new RecordProblem(`a key of ${what} is not a string`)
    out[(kv.key as string | undefined) ?? ''] = jsonAnyValue(kv.value, depth)
  }
  return out
}

function jsonHexId(v: unknown, size: number, name: string): string | undefined {
  if (v === undefined || v === null || v === '') return undefined
  if (typeof v !== 'string' || v.length !== size * 2 || !/^[0-9a-fA-F]+$/.test(v)) throw new RecordProblem(`${name} is not ${size} bytes in hex`)
  return v.toLowerCase()
}

function jsonString(v: unknown, name: string): string | undefined {
  if (v === undefined || v === null) return undefined
  if (typeof v !== 'string') throw new RecordProblem(`${name} is not a string`)
  return v
}

function decodeJson(body: Uint8Array, opts: OtlpOptions, now: number): DecodedLogs {
  let request: unknown
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body)
  } catch {
    throw new UndecodableRequest('the body is not UTF-8 text')
  }
  const shape = jsonShapeProblem(text, MAX_JSON_DEPTH * 2, opts.maxRecords * JSON_VALUES_PER_RECORD)
  if (shape?.problem === 'values') throw new TooManyRecords(opts.maxRecords, `log records (or ${opts.maxRecords * JSON_VALUES_PER_RECORD} JSON values)`)
  if (shape?.problem === 'depth') throw new UndecodableRequest(`the body is nested more than ${MAX_JSON_DEPTH * 2} levels deep`)
  try {
    request = JSON.parse(text)
  } catch (e) {
    throw new UndecodableRequest(`the body is not JSON: ${(e as Error).message}`)
  }
  if (!isObject(request)) throw new UndecodableRequest('the body is not a JSON object (an ExportLogsServiceRequest)')
  const out = new Collector()
  let resourceLogs: unknown[]
  try {
    resourceLogs = list(request.resourceLogs, 'resourceLogs')
  } catch (e) {
    throw new UndecodableRequest((e as Error).message)
  }
  let count = 0
  for (const rl of resourceLogs) {
    if (!isObject(rl)) continue
    for (const sl of Array.isArray(rl.scopeLogs) ? rl.scopeLogs : []) if (isObject(sl) && Array.isArray(sl.logRecords)) count += sl.logRecords.length
  }
  if (count > opts.maxRecords) throw new TooManyRecords(opts.maxRecords, 'log records')
  resourceLogs.forEach((rl, r) => {
    const where = `resourceLogs[${r}]`
    let resource: Record<string, unknown> | undefined
    let scopeLogs: unknown[]
    try {
      if (!isObject(rl)) throw new RecordProblem('is not an object')
      const res = rl.resource
      if (res !== undefined && res !== null && !isObject(res)) throw new RecordProblem('resource is not an object')
      resource = jsonAttributes(res?.attributes, 1, 'resource.attributes')
      scopeLogs = list(rl.scopeLogs, 'scopeLogs')
    } catch (e) {
      // what its records would have been cannot be counted exactly when the list itself is broken: one rejection
      const n = isObject(rl) && Array.isArray(rl.scopeLogs) ? rl.scopeLogs.reduce((k: number, sl) => k + (isObject(sl) && Array.isArray(sl.logRecords) ? sl.logRecords.length : 0), 0) : 1
      for (let k = 0; k < Math.max(n, 1); k++) out.reject(where, e)
      return
    }
    const tag = tagOf(resource, opts)
    scopeLogs.forEach((sl, s) => {
      const at = `${where}.scopeLogs[${s}]`
      let records: unknown[]
      let scope: string | undefined
      let scopeVersion: string | undefined
      try {
        if (!isObject(sl)) throw new RecordProblem('is not an object')
        if (sl.scope !== undefined && sl.scope !== null && !isObject(sl.scope)) throw new RecordProblem('scope is not an object')
        scope = jsonString(sl.scope?.name, 'scope.name') || undefined
        scopeVersion = jsonString(sl.scope?.version, 'scope.version') || undefined
        records = list(sl.logRecords, 'logRecords')
      } catch (e) {
        out.reject(at, e)
        return
      }
      records.forEach((lr, i) => {
        try {
          if (!isObject(lr)) throw new RecordProblem('is not an object')
          const severity = lr.severityNumber
          if (severity !== undefined && severity !== null && !(typeof severity === 'number' && Number.isInteger(severity) && severity >= 0 && severity <= 24))
            throw new RecordProblem('severityNumber is not an integer from 0 to 24')
          const data = documentOf({
            body: jsonAnyValue(lr.body, 1),
            severityText: jsonString(lr.severityText, 'severityText'),
            severityNumber: (severity as number | undefined) ?? undefined,
            attributes: jsonAttributes(lr.attributes, 1, 'attributes'),
            resource,
            scope,
            scopeVersion,
            traceId: jsonHexId(lr.traceId, 16, 'traceId'),
            spanId: jsonHexId(lr.spanId, 8, 'spanId'),
            eventName: jsonString(lr.eventName, 'eventName'),
          })
          const ts = jsonNanosToMs(lr.timeUnixNano, 'timeUnixNano') || jsonNanosToMs(lr.observedTimeUnixNano, 'observedTimeUnixNano') || now
          out.entries.push({ ts, tag, src: '', data })
        } catch (e) {
          out.reject(`${at}.logRecords[${i}]`, e)
        }
      })
    })
  })
  return out
}

/** The request's records as entries (src left empty, for the caller to set), and what was rejected and why. */
export function decodeOtlpLogs(body: Uint8Array, encoding: OtlpEncoding, opts: OtlpOptions, now: number): DecodedLogs {
  return encoding === 'protobuf' ? decodeProtobuf(body, opts, now) : decodeJson(body, opts, now)
}

/** ExportLogsServiceResponse, with partial_success when records were rejected (empty otherwise, as the spec says). */
export function exportResponse(encoding: OtlpEncoding, rejected: number, errorMessage: string): Uint8Array | string {
  if (encoding === 'json') return JSON.stringify(rejected > 0 ? { partialSuccess: { rejectedLogRecords: String(rejected), errorMessage } } : {})
  const message = rejected > 0 ? { partialSuccess: { rejectedLogRecords: rejected, errorMessage } } : {}
  const { ExportLogsServiceResponse } = protobufMessages()
  return ExportLogsServiceResponse.encode(ExportLogsServiceResponse.create(message)).finish()
}

/** google.rpc.Status, the body of OTLP's refusals; code 3 (INVALID_ARGUMENT) or another of google.rpc.Code. */
export function statusBody(encoding: OtlpEncoding, code: number, message: string): Uint8Array | string {
  if (encoding === 'json') return JSON.stringify({ code, message })
  const { RpcStatus } = protobufMessages()
  return RpcStatus.encode(RpcStatus.create({ code, message })).finish()
}

/** A google.rpc.Status body as protobufjs reads it back (tests, and clients that show it). */
export function readStatus(bytes: Uint8Array): { code: number; message: string } {
  const { RpcStatus } = protobufMessages()
  return RpcStatus.toObject(RpcStatus.decode(bytes), { defaults: true }) as { code: number; message: string }
}

/** An ExportLogsServiceResponse as protobufjs reads it back. */
export function readExportResponse(bytes: Uint8Array): { partialSuccess?: { rejectedLogRecords: string; errorMessage: string } } {
  const { ExportLogsServiceResponse } = protobufMessages()
  return ExportLogsServiceResponse.toObject(ExportLogsServiceResponse.decode(bytes), { longs: String }) as never
}
