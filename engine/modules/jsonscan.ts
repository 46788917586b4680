// A JSON scanner over the bytes of an entry for the json module: one validating pass over the document that notes
// where the members its paths name are, and decodes only those. Its answer is that of JSON.parse over the decoded
// text followed by walkPath and jsonValue for each path (the module's general path), because:
// - a UTF-8 decoder never takes an ASCII byte into another character (an invalid sequence ends before it and becomes
//   U+FFFD), so the structure (quotes, brackets, commas, escapes, whitespace) sits at the same bytes; a byte past
//   ASCII is valid only inside a string, where any decoded character is allowed;
// - the whole document is validated as JSON.parse does (whitespace is space, \t, \n and \r only; control characters
//   in strings, bad escapes, numbers out of the grammar and trailing junk refuse it), and a refused document gives
//   nothing for every path;
// - a member that comes again replaces the earlier one (JSON.parse keeps the last): what was noted under it is
//   forgotten when the key is met again;
// - values are read as JSON.parse reads them: strings decoded (JSON.parse of the token when it holds an escape),
//   numbers by Number() over the token (the same rounding: -0, 1e400 is Infinity), objects and arrays parsed from
//   their own bytes and written back by JSON.stringify, null as the text `null`.
// Nesting is followed with a fixed stack; a document deeper than MAX_DEPTH is left to the general path (TOO_DEEP).
// Paths here hold keys and indexes only: `[]` (any element) needs the general path.
import type { Value } from '../value'
import { asBuffer, TextInterner } from '../entry'
import type { PathPart } from './json'

/** Containers nested deeper than this are not scanned: the caller reads such a document with JSON.parse. */
export const MAX_DEPTH = 128

export const SCAN_OK = 0
export const SCAN_INVALID = 1
export const SCAN_TOO_DEEP = 2

// What a noted member is (its span holds the whole token or container).
const ABSENT = 0
const STRING_ASCII = 1
const STRING = 2
const STRING_ESCAPED = 3
const NUMBER = 4
const TRUE = 5
const FALSE = 6
const NULL = 7
const CONTAINER = 8

/** A member some path goes through or ends at. */
interface PathNode {
  /** The paths (their indexes in the plan) that end here. */
  ends: number[]
  /** The paths that end here or below: forgotten when a later member with the same key replaces this one. */
  below: number[]
  keys: Map<string, PathNode>
  /** The ASCII keys as bytes, by byte length (a key of the document without escapes or non-ASCII bytes is compared as bytes). */
  asciiKeys: { bytes: Uint8Array; node: PathNode }[][]
  indexes: Map<number, PathNode>
}

export interface ScanPlan {
  root: PathNode
  /** Per path: start, end and what it is (ABSENT when the scan found nothing). */
  spans: Int32Array
  count: number
  stackNode: (PathNode | null)[]
  stackOpen: Uint8Array
  stackStart: Int32Array
  stackIndex: Int32Array
  /** The ASCII strings members held, found again rather than decoded again (one per plan: per query module). */
  texts: TextInterner
}

const newNode = (): PathNode => ({ ends: [], below: [], keys: new Map(), asciiKeys: [], indexes: new Map() })

/** The plan for these paths; null when one holds `[]` (any element), which only the general path reads. */
export function scanPlan(paths: readonly (readonly PathPart[])[]): ScanPlan | null {
  const root = newNode()
  for (let p = 0; p < paths.length; p++) {
    let node = root
    node.below.push(p)
    for (const part of paths[p]!) {
      let next: PathNode | undefined
      if ('key' in part) {
        next = node.keys.get(part.key)
        if (!next) {
          next = newNode()
          node.keys.set(part.key, next)
          if (/^[\x00-\x7f]*$/.test(part.key)) {
            const bytes = Buffer.from(part.key, 'latin1')
            ;(node.asciiKeys[bytes.length] ??= []).push({ bytes, node: next })
          }
        }
      } else if ('index' in part) {
        next = node.indexes.get(part.index)
        if (!next) node.indexes.set(part.index, (next = newNode()))
      } else return null
      node = next
      node.below.push(p)
    }
    node.ends.push(p)
  }
  return {
    root,
    spans: new Int32Array(paths.length * 3),
    count: paths.length,
    stackNode: new Array(MAX_DEPTH).fill(null),
    stackOpen: new Uint8Array(MAX_DEPTH),
    stackStart: new Int32Array(MAX_DEPTH),
    stackIndex: new Int32Array(MAX_DEPTH),
    texts: new TextInterner(),
  }
}

// Set by scanString: whether the string just scanned held a backslash, or a byte past ASCII.
let sawEscape = false
let sawHigh = false

/** The index past the closing quote of the string whose content starts at i; -1 when it is no valid JSON string. */
function scanString(b: Uint8Array, i: number, n: number): number {
  sawEscape = false
  sawHigh = false
  while (i < n) {
    const c = b[i]!
    if (c === 0x22) return i + 1
    if (c === 0x5c) {
      sawEscape = true
      const d = b[i + 1]
      if (d === 0x75) {
        if (i + 6 > n || !isHex(b[i + 2]!) || !isHex(b[i + 3]!) || !isHex(b[i + 4]!) || !isHex(b[i + 5]!)) return -1
        i += 6
      } else if (d === 0x22 || d === 0x5c || d === 0x2f || d === 0x62 || d === 0x66 || d === 0x6e || d === 0x72 || d === 0x74) i += 2
      else return -1
    } else if (c < 0x20) return -1
    else {
      if (c >= 0x80) sawHigh = true
      i++
    }
  }
  return -1
}

const isHex = (c: number) => (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66)
const isDigit = (c: number | undefined) => c !== undefined && c >= 0x30 && c <= 0x39

/** The index past the number starting at i (JSON's grammar: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?); -1 when none. */
function scanNumber(b: Uint8Array, i: number, n: number): number {
  if (b[i] === 0x2d) i++
  if (i >= n) return -1
  if (b[i] === 0x30) i++
  else if (isDigit(b[i])) while (i < n && isDigit(b[i])) i++
  else return -1
  if (b[i] === 0x2e) {
    i++
    if (!isDigit(b[i])) return -1
    while (i < n && isDigit(b[i])) i++
  }
  if (b[i] === 0x65 || b[i] === 0x45) {
    i++
    if (b[i] === 0x2b || b[i] === 0x2d) i++
    if (!isDigit(b[i])) return -1
    while (i < n && isDigit(b[i])) i++
  }
  return i
}

function skipBlanks(b: Uint8Array, i: number, n: number): number {
  while (i < n) {
    const c = b[i]!
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break
    i++
  }
  return i
}

function note(spans: Int32Array, node: PathNode, start: number, end: number, kind: number): void {
  for (const p of node.ends) {
    spans[p * 3] = start
    spans[p * 3 + 1] = end
    spans[p * 3 + 2] = kind
  }
}

/** A member met again (or first): what its earlier occurrence left is forgotten. */
function replaced(spans: Int32Array, node: PathNode): PathNode {
  for (const p of node.below) spans[p * 3 + 2] = ABSENT
  return node
}

/** The path node of the member whose key is the string token b[start, end) in an object of `parent`; null when none. */
function keyNode(b: Uint8Array, start: number, end: number, parent: PathNode): PathNode | null {
  if (!sawEscape && !sawHigh) {
    const list = parent.asciiKeys[end - start - 2]
    if (list === undefined) return null
    outer: for (const k of list) {
      const bytes = k.bytes
      for (let j = 0; j < bytes.length; j++) if (b[start + 1 + j] !== bytes[j]) continue outer
      return k.node
    }
    return null
  }
  const buf = asBuffer(b)
  const key: string = sawEscape ? JSON.parse(buf.toString('utf8', start, end)) : buf.toString('utf8', start + 1, end - 1)
  return parent.keys.get(key) ?? null
}

/**
 * Scans the document in `b` and notes in plan.spans where each path's member is. SCAN_OK: the spans are the answer;
 * SCAN_INVALID: the document is no JSON (no path has a member); SCAN_TOO_DEEP: nesting passed MAX_DEPTH, nothing
 * is known.
 */
export function scanDocument(b: Uint8Array, plan: ScanPlan): number {
  const spans = plan.spans
  const stackNode = plan.stackNode
  const stackOpen = plan.stackOpen
  const stackStart = plan.stackStart
  const stackIndex = plan.stackIndex
  const n = b.length
  for (let p = 0; p < plan.count; p++) spans[p * 3 + 2] = ABSENT
  let depth = 0
  // The path node of the value at i (null when no path goes through it).
  let node: PathNode | null = plan.root
  let i = skipBlanks(b, 0, n)
  for (;;) {
    // A value starts at i.
    if (i >= n) return SCAN_INVALID
    let c = b[i]!
    if (c === 0x7b || c === 0x5b) {
      if (depth === MAX_DEPTH) return SCAN_TOO_DEEP
      stackNode[depth] = node
      stackOpen[depth] = c
      stackStart[depth] = i
      stackIndex[depth] = 0
      depth++
      i = skipBlanks(b, i + 1, n)
      if (i >= n) return SCAN_INVALID
      c = b[i]!
      if (c === 0x7b + 2 || c === 0x5b + 2) {
        // Empty: `}` or `]`, checked against the opening below.
      } else if (stackOpen[depth - 1] === 0x7b) {
        i = member(b, i, n, node, spans)
        if (i < 0) return SCAN_INVALID
        node = memberNode
        continue
      } else {
        if (node !== null) {
          const child = node.indexes.get(0)
          node = child === undefined ? null : replaced(spans, child)
        }
        continue
      }
    } else {
      const start = i
      let kind: number
      if (c === 0x22) {
        i = scanString(b, i + 1, n)
        if (i < 0) return SCAN_INVALID
        kind = sawEscape ? STRING_ESCAPED : sawHigh ? STRING : STRING_ASCII
      } else if (c === 0x74) {
        if (b[i + 1] !== 0x72 || b[i + 2] !== 0x75 || b[i + 3] !== 0x65) return SCAN_INVALID
        i += 4
        kind = TRUE
      } else if (c === 0x66) {
        if (b[i + 1] !== 0x61 || b[i + 2] !== 0x6c || b[i + 3] !== 0x73 || b[i + 4] !== 0x65) return SCAN_INVALID
        i += 5
        kind = FALSE
      } else if (c === 0x6e) {
        if (b[i + 1] !== 0x75 || b[i + 2] !== 0x6c || b[i + 3] !== 0x6c) return SCAN_INVALID
        i += 4
        kind = NULL
      } else {
        i = scanNumber(b, i, n)
        if (i < 0) return SCAN_INVALID
        kind = NUMBER
      }
      if (node !== null) note(spans, node, start, i, kind)
    }
    // After a value: close containers until the next member or element, or the end of the document.
    for (;;) {
      i = skipBlanks(b, i, n)
      if (depth === 0) return i === n ? SCAN_OK : SCAN_INVALID
      if (i >= n) return SCAN_INVALID
      c = b[i]!
      const open = stackOpen[depth - 1]!
      if (c === 0x2c) {
        i = skipBlanks(b, i + 1, n)
        const parent = stackNode[depth - 1]!
        if (open === 0x7b) {
          i = member(b, i, n, parent, spans)
          if (i < 0) return SCAN_INVALID
          node = memberNode
        } else {
          const index = ++stackIndex[depth - 1]!
          if (parent === null) node = null
          else {
            const child = parent.indexes.get(index)
            node = child === undefined ? null : replaced(spans, child)
          }
        }
        break
      }
      if (c !== open + 2) return SCAN_INVALID
      i++
      depth--
      const closed = stackNode[depth]
      if (closed !== null && closed !== undefined && closed.ends.length) note(spans, closed, stackStart[depth]!, i, CONTAINER)
    }
  }
}

// Set by member: the path node of the member's value.
let memberNode: PathNode | null = null

/** Reads `"key" :` at i in an object of `parent`; returns where the value starts (-1 when invalid) and sets memberNode. */
function member(b: Uint8Array, i: number, n: number, parent: PathNode | null, spans: Int32Array): number {
  if (b[i] !== 0x22) return -1
  const start = i
  const end = scanString(b, i + 1, n)
  if (end < 0) return -1
  memberNode = null
  if (parent !== null && parent.keys.size) {
    const child = keyNode(b, start, end, parent)
    if (child !== null) memberNode = replaced(spans, child)
  }
  i = skipBlanks(b, end, n)
  if (b[i] !== 0x3a) return -1
  return skipBlanks(b, i + 1, n)
}

/** The value of path `p` after scanDocument returned SCAN_OK: what jsonValue gives for the member, or undefined. */
export function memberValue(d: Uint8Array, plan: ScanPlan, p: number): Value | undefined {
  const spans = plan.spans
  const kind = spans[p * 3 + 2]
  if (kind === ABSENT) return undefined
  const start = spans[p * 3]!
  const end = spans[p * 3 + 1]!
  const b = asBuffer(d)
  switch (kind) {
    case STRING_ASCII:
      // ASCII bytes read as latin1 are the same text, decoded faster (or found again: TextInterner).
      return plan.texts.latin1(b, start + 1, end - 1)
    case STRING:
      return b.toString('utf8', start + 1, end - 1)
    case STRING_ESCAPED:
      return JSON.parse(b.toString('utf8', start, end)) as string
    case NUMBER:
      return numberOf(b, start, end)
    case TRUE:
      return true
    case FALSE:
      return false
    case NULL:
      return 'null'
  }
  try {
    return JSON.stringify(JSON.parse(b.toString('utf8', start, end)))
  } catch {
    // As jsonValue: nested past what the stack holds for JSON.stringify.
    return undefined
  }
}

/** Number() of a number token: integers of up to 15 digits (exact in a double) summed directly, others by Number(). */
function numberOf(b: Buffer, start: number, end: number): number {
  const negative = b[start] === 0x2d
  const from = negative ? start + 1 : start
  if (end - from <= 15) {
    let v = 0
    let i = from
    for (; i < end; i++) {
      const c = b[i]!
      if (c < 0x30 || c > 0x39) break
      v = v * 10 + (c - 0x30)
    }
    // -0 stays -0, as Number('-0') gives.
    if (i === end) return negative ? -v : v
  }
  return Number(b.toString('latin1', start, end))
}
