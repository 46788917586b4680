// Bounds on the shape of JSON the server keeps (docs/security.md, "Stored JSON"): every stored JSON member (dashboard
// Data, library Metadata, preferences, search metadata, archive descriptions) is at most MAX_JSON_DEPTH levels deep
// and holds at most MAX_JSON_VALUES values. Other clients of this API family parse these members with stock
// parsers (Go's refuses past 10,000 levels, others recurse and overflow), so one stored value must not break
// the listing of everyone it is shared with. The check is one linear pass over the text with a fixed-size
// stack and no recursion, so hostile input (a million `[`) costs what reading it costs and stops at the first
// level over the bound.
import { Errors } from './errors'

/** Nesting levels a stored JSON value may have (a dashboard's Data uses about six). */
export const MAX_JSON_DEPTH = 64
/**
 * Values (every object, array, string, number, boolean and null, object keys not counted) one stored member may
 * hold. A dashboard with a thousand tiles is about 30,000; 100,000 leaves room for that while keeping what
 * every reader of a shared item must parse and hold bounded (a 4 MiB body of `[0,0,...]` is two million).
 */
export const MAX_JSON_VALUES = 100_000

export type ShapeProblem = { problem: 'depth' | 'values' } | undefined

const OBJECT = 1
const ARRAY = 2

/**
 * Whether JSON text stays within `maxDepth` levels and `maxValues` values; the first bound it breaks otherwise.
 * Meant for text JSON.parse accepted (or is about to try): on other text it still ends, in one pass, with a
 * best-effort answer. Strings are skipped with their escapes, so brackets inside them do not count.
 */
export function jsonShapeProblem(text: string, maxDepth = MAX_JSON_DEPTH, maxValues = MAX_JSON_VALUES): ShapeProblem {
  const kinds = new Uint8Array(maxDepth + 2)
  const n = text.length
  let depth = 0
  let values = 0
  // the last structural character outside strings, to tell an object key from a string value
  let prev = 0
  let i = 0
  while (i < n) {
    const c = text.charCodeAt(i)
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
      i++
      continue
    }
    if (c === 0x22 /* " */) {
      const isKey = kinds[depth] === OBJECT && (prev === 0x7b /* { */ || prev === 0x2c) /* , */
      if (!isKey && ++values > maxValues) return { problem: 'values' }
      i = stringEnd(text, i + 1)
      prev = 0x22
      continue
    }
    if (c === 0x7b || c === 0x5b /* [ */) {
      if (++depth > maxDepth) return { problem: 'depth' }
      if (++values > maxValues) return { problem: 'values' }
      kinds[depth] = c === 0x7b ? OBJECT : ARRAY
      prev = c
      i++
      continue
    }
    if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      if (depth > 0) depth--
      prev = c
      i++
      continue
    }
    if (c === 0x2c || c === 0x3a /* : */) {
      prev = c
      i++
      continue
    }
    // a number, true, false or null
    if (++values > maxValues) return { problem: 'values' }
    while (i < n) {
      const d = text.charCodeAt(i)
      if (d === 0x2c || d === 0x5d || d === 0x7d || d === 0x3a || d === 0x20 || d === 0x0a || d === 0x0d || d === 0x09) break
      i++
    }
    prev = 0x30
  }
  return undefined
}

/**
 * The index after the quote that closes the string whose contents start at `from` (the text's length when none does).
 * A quote ends the string unless an odd run of backslashes is right before it (each pair is one escaped backslash);
 * a run starts fresh at `from` or after an escaped quote. The quotes are found with indexOf (native), so a long string
 * (a base64 Data field) costs a search, not a JavaScript step per character.
 */
function stringEnd(text: string, from: number): number {
  let i = from
  for (;;) {
    const q = text.indexOf('"', i)
    if (q === -1) return text.length
    let b = q - 1
    while (b >= i && text.charCodeAt(b) === 0x5c /* \ */) b--
    if (((q - 1 - b) & 1) === 0) return q + 1
    i = q + 1
  }
}

/** 400 unless the JSON text of `what` stays within the bounds of stored JSON. */
export function checkJsonShape(text: string, what: string): void {
  const found = jsonShapeProblem(text)
  if (!found) return
  throw Errors.badRequest(
    found.problem === 'depth'
      ? `${what} is nested more than ${MAX_JSON_DEPTH} levels deep`
      : `${what} holds more than ${MAX_JSON_VALUES} values`,
  )
}
