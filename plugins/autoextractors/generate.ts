// Suggested auto-extractors for a tag from sample entries: POST /api/explore/generate (the platform's data explorer,
// gravwell/wiki api/explore: GenerateAXRequest {Tag, Entries} → a map from module name to GenerateAXResponse list;
// the Go client's ExploreGenerate, the TypeScript client's generateAutoExtractors).
//
// Guarantees:
// - Each module with a generator here (json, kv) that extracts something from the entries gets one suggestion: the
//   definition (module, params naming every field found, first seen first; a name the module would read otherwise
//   is quoted or, for kv, left out), a Confidence from 0 to 10 (the share of entries, or of kv's words, it reads:
//   10 when it reads them all), the entries it read and, for each of them, the elements it extracts
//   (Explore: Name, Path, Value, SubElements for members of a JSON object, the Filters the value takes).
// - Bounded: at most MAX_SAMPLE entries are read (the body is bounded as every JSON body is), fields per entry and
//   params per suggestion at most MAX_FIELDS, SubElements MAX_DEPTH levels deep.
import { formatTime } from '../../server/runtime/time'

/** Entries read from a request at most. */
export const MAX_SAMPLE = 1000
/** Fields read per entry, and params per suggestion. */
export const MAX_FIELDS = 256
/** Levels of SubElements under an element. */
export const MAX_DEPTH = 4

export interface SampleEntry {
  TS?: string | null
  Tag?: unknown
  SRC?: string | null
  Data: string
  Enumerated?: unknown
}

export interface ExploreElement {
  Module: string
  Name: string
  Path: string
  Value: string | number | boolean | null
  SubElements?: ExploreElement[]
  Filters: string[]
}

export interface Suggestion {
  Extractor: {
    Name: string
    Desc: string
    Module: string
    Params: string
    Args: string
    Tag: string
    Labels: string[]
    UID: number
    GIDs: number[]
    Global: boolean
    UUID: string
    LastUpdated: string
  }
  Confidence: number
  Entries: SampleEntry[]
  Explore: { Elements: ExploreElement[]; Module: string; Tag: string }[]
}

const EQUALITY = ['==', '!=']
const TEXT_FILTERS = ['==', '!=', '~', '!~']
const NUMBER_FILTERS = ['==', '!=', '<', '>', '<=', '>=']

const filtersOf = (v: ExploreElement['Value']) => (typeof v === 'number' ? NUMBER_FILTERS : typeof v === 'string' ? TEXT_FILTERS : EQUALITY)

/** A member name as the json module reads it in a path: plain when it holds nothing the path syntax reads. */
const jsonName = (key: string) =>
  /^[^\s|"`.[\]=!<>~]+$/.test(key) && key !== 'as' && !key.startsWith('-') ? key : `"${key.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`

/** A kv key the kv module reads as a plain argument. */
const KV_KEY = /^[A-Za-z0-9_][A-Za-z0-9_.:@/-]*$/

const text = (data: Uint8Array) => new TextDecoder().decode(data)

/** The elements of a JSON object's members, SubElements for members that are objects (up to MAX_DEPTH). */
function jsonElements(obj: Record<string, unknown>, prefix: string, depth: number): ExploreElement[] {
  const out: ExploreElement[] = []
  for (const [key, v] of Object.entries(obj).slice(0, MAX_FIELDS)) {
    const path = prefix === '' ? jsonName(key) : `${prefix}.${jsonName(key)}`
    const scalar = v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean'
    const Value = scalar ? (v as ExploreElement['Value']) : JSON.stringify(v)
    const e: ExploreElement = { Module: 'json', Name: path, Path: path, Value, Filters: filtersOf(Value) }
    if (!scalar && !Array.isArray(v) && depth < MAX_DEPTH) e.SubElements = jsonElements(v as Record<string, unknown>, path, depth + 1)
    out.push(e)
  }
  return out
}

/** The key=value pairs of a line split on blanks (a value may be double-quoted, without blanks inside). */
function kvPairs(line: string): { pairs: [string, string][]; words: number } {
  const words = line.split(/[ \t\r\n]+/).filter((w) => w !== '')
  const pairs: [string, string][] = []
  for (const w of words) {
    const at = w.indexOf('=')
    if (at <= 0) continue
    const key = w.slice(0, at)
    if (!KV_KEY.test(key) || key === 'as' || pairs.length >= MAX_FIELDS) continue
    const raw = w.slice(at + 1)
    pairs.push([key, raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw])
  }
  return { pairs, words: words.length }
}

/** A number when the whole text is a decimal number, else the text (as kv's filters read it). */
const kvValue = (v: string): string | number => (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(v) ? Number(v) : v)

function suggestion(tag: string, module: string, params: string[], confidence: number, entries: SampleEntry[], explore: ExploreElement[][]): Suggestion {
  return {
    Extractor: {
      Name: tag,
      Desc: `Auto-generated ${module} extraction for tag ${tag}`,
      Module: module,
      Params: params.join(' '),
      Args: '',
      Tag: tag,
      Labels: [],
      UID: 0,
      GIDs: [],
      Global: false,
      UUID: '00000000-0000-0000-0000-000000000000',
      LastUpdated: formatTime(0),
    },
    Confidence: Math.round(confidence * 10) / 10,
    Entries: entries,
    Explore: explore.map((Elements) => ({ Elements, Module: module, Tag: tag })),
  }
}

/**
 * The suggestions for `tag` from the sample entries (their Data decoded by `decode`; an entry whose Data is not
 * base64 is not read by any module), by module; modules that read nothing are absent.
 */
export function generateSuggestions(tag: string, sample: readonly SampleEntry[], decode: (b64: string) => Uint8Array | undefined): Record<string, Suggestion[]> {
  const entries = sample.slice(0, MAX_SAMPLE)
  const decoded = entries.map((e) => (typeof e.Data === 'string' ? decode(e.Data) : undefined))
  const out: Record<string, Suggestion[]> = {}

  // json: entries that are JSON objects; params are their members
  const jsonRead: SampleEntry[] = []
  const jsonExplore: ExploreElement[][] = []
  const jsonParams: string[] = []
  for (const [i, data] of decoded.entries()) {
    if (!data) continue
    let v: unknown
    try {
      v = JSON.parse(text(data))
    } catch {
      continue
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v)) continue
    jsonRead.push(entries[i]!)
    const elements = jsonElements(v as Record<string, unknown>, '', 1)
    jsonExplore.push(elements)
    for (const e of elements) if (!jsonParams.includes(e.Path) && jsonParams.length < MAX_FIELDS) jsonParams.push(e.Path)
  }
  if (jsonRead.length > 0 && jsonParams.length > 0)
    out.json = [suggestion(tag, 'json', jsonParams, (10 * jsonRead.length) / entries.length, jsonRead, jsonExplore)]

  // kv: words of the form key=value; the confidence is the share of words that are pairs
  const kvRead: SampleEntry[] = []
  const kvExplore: ExploreElement[][] = []
  const kvParams: string[] = []
  let words = 0
  let pairs = 0
  for (const [i, data] of decoded.entries()) {
    if (!data) continue
    const found = kvPairs(text(data))
    words += found.words
    if (found.pairs.length === 0) continue
    pairs += found.pairs.length
    kvRead.push(entries[i]!)
    kvExplore.push(
      found.pairs.map(([key, raw]) => {
        const Value = kvValue(raw)
        return { Module: 'kv', Name: key, Path: key, Value, Filters: filtersOf(Value) }
      }),
    )
    for (const [key] of found.pairs) if (!kvParams.includes(key) && kvParams.length < MAX_FIELDS) kvParams.push(key)
  }
  if (kvRead.length > 0) out.kv = [suggestion(tag, 'kv', kvParams, (10 * pairs) / Math.max(words, 1), kvRead, kvExplore)]
  return out
}
