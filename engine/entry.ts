// An entry as it goes through the pipeline: the stored entry's intrinsic fields and the enumerated values modules
// attach. Stages may change `data` (DATA) and `values`; they never share an entry with another search.
import type { Condensed } from './aggregate'
import { TimeValue, type Value } from './value'

export interface Entry {
  /** Milliseconds since the epoch (TIMESTAMP). */
  ts: number
  /** Tag name (TAG). */
  tag: string
  /** Source address as text (SRC). */
  src: string
  /** The entry's body (DATA). */
  data: Uint8Array
  /** Enumerated values by name, in the order modules set them. */
  values: Map<string, Value>
  /** Set by a condensing module on the entries it emits: the aggregates behind their values (aggregate.ts). */
  condensed?: Condensed
}

/** The names every entry has without a module setting them. */
export const BUILTINS = ['TAG', 'SRC', 'TIMESTAMP', 'DATA'] as const

/** A value of an entry by name: an enumerated value of that name first, then the built-ins. */
export function valueOf(e: Entry, name: string): Value | undefined {
  const v = e.values.get(name)
  if (v !== undefined) return v
  switch (name) {
    case 'DATA':
      return e.data
    case 'TAG':
      return e.tag
    case 'SRC':
      return e.src
    case 'TIMESTAMP':
      return new TimeValue(e.ts)
  }
  return undefined
}

/** An entry with its own copy of the values (a stage that emits one entry several times). */
export function cloneEntry(e: Entry): Entry {
  return { ts: e.ts, tag: e.tag, src: e.src, data: e.data, values: new Map(e.values) }
}

/**
 * Bytes as a Buffer, without a copy: entries' data mostly are Buffers already (views of a segment), and reading
 * `.buffer` of a plain view costs more than the work done with it on a short entry.
 */
export function asBuffer(d: Uint8Array): Buffer {
  return d instanceof Buffer ? d : Buffer.from(d.buffer, d.byteOffset, d.byteLength)
}

/**
 * The UTF-8 text of b[start, end). ASCII bytes read as latin1 are the same text, and Bun decodes them so about 7 times
 * faster than as UTF-8 (80 against 540 ns for 16 bytes): a value read from every entry (kv's) is decoded that way
 * whenever it is ASCII, which one pass over its bytes tells.
 */
export function utf8Text(b: Buffer, start: number, end: number): string {
  for (let i = start; i < end; i++) if (b[i]! >= 0x80) return b.toString('utf8', start, end)
  return b.toString('latin1', start, end)
}

/**
 * Latin-1 (so ASCII) texts read from entries, kept by a hash of their bytes: a field's values repeat across entries
 * (hosts, statuses, methods), and finding a text made before costs a hash and a compare of its bytes, cheaper than
 * decoding it again; the same string also keeps its hash for the Map lookups after it (stats keys). A field whose
 * values rarely repeat (ids) turns the cache off after one window of lookups. The answer is always exactly what
 * decoding the bytes gives.
 */
export class TextInterner {
  private static readonly SLOTS = 1024
  private static readonly MAX_LENGTH = 64
  private static readonly WINDOW = 4096
  private readonly texts: (string | undefined)[] = new Array(TextInterner.SLOTS).fill(undefined)
  private lookups = 0
  private hits = 0
  private off = false

  /** `b.toString('latin1', start, end)`. */
  latin1(b: Buffer, start: number, end: number): string {
    return this.text(b, start, end, false)
  }

  /** `b.toString('utf8', start, end)` (utf8Text's answer): texts with bytes past ASCII are decoded, never kept. */
  utf8(b: Buffer, start: number, end: number): string {
    return this.text(b, start, end, true)
  }

  private text(b: Buffer, start: number, end: number, utf8: boolean): string {
    const n = end - start
    if (this.off || n > TextInterner.MAX_LENGTH) return utf8 ? utf8Text(b, start, end) : b.toString('latin1', start, end)
    let h = n | 0
    let high = 0
    for (let i = start; i < end; i++) {
      const c = b[i]!
      high |= c
      h = Math.imul(h ^ c, 0x01000193)
    }
    if (utf8 && high >= 0x80) return b.toString('utf8', start, end)
    const slot = (h ^ (h >>> 15)) & (TextInterner.SLOTS - 1)
    const known = this.texts[slot]
    if (++this.lookups === TextInterner.WINDOW) {
      // fewer than a quarter found again: the values do not repeat enough to pay for the hashing
      if (this.hits * 4 < TextInterner.WINDOW) this.off = true
      this.lookups = this.hits = 0
    }
    if (known !== undefined && known.length === n) {
      let i = 0
      while (i < n && known.charCodeAt(i) === b[start + i]) i++
      if (i === n) {
        this.hits++
        return known
      }
    }
    const made = b.toString('latin1', start, end)
    this.texts[slot] = made
    return made
  }
}
