// A compact encoding of entries' values for crossing a thread boundary (the stateless head of a query runs on worker
// threads: server/search/match.ts): one byte buffer, transferred without a copy, instead of a structured clone of
// many small objects (which loses the value classes: IPValue, TimeValue, DurationValue).
//
// Guarantees:
// - Every value comes back with its type and its exact content: strings (also ill-formed UTF-16, lone surrogates
//   included), numbers (every bit of a float64: -0, NaN, ±Infinity), booleans, IPValue (its text and its bytes),
//   TimeValue, DurationValue, bytes; the values of an entry in their order.
// - Names are written once per buffer: later uses are a small index (values repeat their names entry after entry).
// - Decoded bytes (DATA, byte values) are views of the buffer, not copies: the buffer must not be reused after.
//
// Layout: unsigned integers are LEB128 varints; a string is a varint byte length and UTF-8 (or, when ill-formed, a
// length with the low bit set and UTF-16 code units); a value is a type byte then its content (see VALUE_*).
import type { Entry } from './entry'
import { DurationValue, IPValue, TimeValue, type Value } from './value'

const VALUE_STRING = 0
const VALUE_NUMBER = 1
const VALUE_TRUE = 2
const VALUE_FALSE = 3
const VALUE_IP = 4
const VALUE_TIME = 5
const VALUE_DURATION = 6
const VALUE_BYTES = 7

/** Strings up to this many bytes are decoded here when they are ASCII (see TransferReader.shortString). */
const SHORT_STRING = 24

/** Appends to a growing buffer. */
export class TransferWriter {
  private buf: Buffer
  private view: DataView
  private at = 0
  /** Names written so far, by their index in the buffer (see name()). */
  private readonly names = new Map<string, number>()

  constructor(initialBytes = 1 << 16) {
    // Never from Buffer's shared pool: the buffer may be transferred to another thread whole.
    this.buf = Buffer.allocUnsafeSlow(Math.max(1, initialBytes))
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength)
  }

  private room(n: number): void {
    if (this.at + n <= this.buf.byteLength) return
    let size = this.buf.byteLength * 2
    while (size < this.at + n) size *= 2
    const next = Buffer.allocUnsafeSlow(size)
    this.buf.copy(next, 0, 0, this.at)
    this.buf = next
    this.view = new DataView(next.buffer, next.byteOffset, next.byteLength)
  }

  byte(b: number): void {
    this.room(1)
    this.buf[this.at++] = b
  }

  /** A non-negative integer up to 2^53. */
  uint(n: number): void {
    this.room(8)
    while (n >= 0x80) {
      this.buf[this.at++] = (n % 0x80) | 0x80
      n = Math.floor(n / 0x80)
    }
    this.buf[this.at++] = n
  }

  float(n: number): void {
    this.room(8)
    this.view.setFloat64(this.at, n, true)
    this.at += 8
  }

  bytes(b: Uint8Array): void {
    this.uint(b.byteLength)
    this.room(b.byteLength)
    this.buf.set(b, this.at)
    this.at += b.byteLength
  }

  string(s: string): void {
    if (s.isWellFormed()) {
      const n = Buffer.byteLength(s, 'utf8')
      this.uint(n * 2)
      this.room(n)
      this.at += this.buf.write(s, this.at, n, 'utf8')
      return
    }
    this.uint(s.length * 2 + 1)
    this.room(s.length * 2)
    for (let i = 0; i < s.length; i++) this.view.setUint16(this.at + i * 2, s.charCodeAt(i), true)
    this.at += s.length * 2
  }

  /** A name: its text the first time, its index after (names are few and repeat). */
  name(s: string): void {
    const known = this.names.get(s)
    if (known !== undefined) {
      this.uint(known + 1)
      return
    }
    this.names.set(s, this.names.size)
    this.uint(0)
    this.string(s)
  }

  value(v: Value): void {
    switch (typeof v) {
      case 'string':
        this.byte(VALUE_STRING)
        this.string(v)
        return
      case 'number':
        this.byte(VALUE_NUMBER)
        this.float(v)
        return
      case 'boolean':
        this.byte(v ? VALUE_TRUE : VALUE_FALSE)
        return
    }
    if (v instanceof IPValue) {
      this.byte(VALUE_IP)
      this.string(v.text)
      this.bytes(v.bytes)
    } else if (v instanceof TimeValue) {
      this.byte(VALUE_TIME)
      this.float(v.ms)
    } else if (v instanceof DurationValue) {
      this.byte(VALUE_DURATION)
      this.float(v.ns)
    } else {
      this.byte(VALUE_BYTES)
      this.bytes(v)
    }
  }

  /** Enumerated values in their order: a count, then each name and value; with `keep`, only the values it names. */
  values(values: ReadonlyMap<string, Value>, keep?: ReadonlySet<string>): void {
    if (keep === undefined) {
      this.uint(values.size)
      for (const [k, v] of values) {
        this.name(k)
        this.value(v)
      }
      return
    }
    let n = 0
    for (const k of values.keys()) if (keep.has(k)) n++
    this.uint(n)
    for (const [k, v] of values)
      if (keep.has(k)) {
        this.name(k)
        this.value(v)
      }
  }

  /** What was written: a view of the writer's own buffer (not pooled: it may be transferred; the writer is done with it). */
  finish(): Uint8Array {
    return new Uint8Array(this.buf.buffer, this.buf.byteOffset, this.at)
  }
}

/** Reads what a TransferWriter wrote, in the same order. A buffer that was not written so is an error, not garbage. */
export class TransferReader {
  private at = 0
  private readonly buf: Buffer
  private readonly view: DataView
  private readonly names: string[] = []

  constructor(bytes: Uint8Array) {
    this.buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  }

  get more(): boolean {
    return this.at < this.buf.byteLength
  }

  private need(n: number): void {
    if (this.at + n > this.buf.byteLength) throw new Error('transfer: the buffer ends too early')
  }

  byte(): number {
    this.need(1)
    return this.buf[this.at++]!
  }

  uint(): number {
    let n = 0
    let scale = 1
    for (;;) {
      const b = this.byte()
      n += (b & 0x7f) * scale
      if (b < 0x80) return n
      scale *= 0x80
      if (scale > 2 ** 56) throw new Error('transfer: an integer is too long')
    }
  }

  float(): number {
    this.need(8)
    const n = this.view.getFloat64(this.at, true)
    this.at += 8
    return n
  }

  bytes(): Uint8Array {
    const n = this.uint()
    this.need(n)
    const b = this.buf.subarray(this.at, this.at + n)
    this.at += n
    return new Uint8Array(b.buffer, b.byteOffset, b.byteLength)
  }

  string(): string {
    const head = this.uint()
    if (head % 2 === 0) {
      const n = head / 2
      this.need(n)
      const s = n <= SHORT_STRING ? this.shortString(n) : this.buf.toString('utf8', this.at, this.at + n)
      this.at += n
      return s
    }
    const units = (head - 1) / 2
    this.need(units * 2)
    let s = ''
    for (let i = 0; i < units; i++) s += String.fromCharCode(this.view.getUint16(this.at + i * 2, true))
    this.at += units * 2
    return s
  }

  /** A short string's text: ASCII read byte by byte (a native call per string cost more than the string). */
  private shortString(n: number): string {
    const b = this.buf
    let s = ''
    for (let i = this.at; i < this.at + n; i++) {
      const c = b[i]!
      if (c >= 0x80) return b.toString('utf8', this.at, this.at + n)
      s += String.fromCharCode(c)
    }
    return s
  }

  name(): string {
    const i = this.uint()
    if (i === 0) {
      const s = this.string()
      this.names.push(s)
      return s
    }
    const s = this.names[i - 1]
    if (s === undefined) throw new Error('transfer: a name index points nowhere')
    return s
  }

  value(): Value {
    const type = this.byte()
    switch (type) {
      case VALUE_STRING:
        return this.string()
      case VALUE_NUMBER:
        return this.float()
      case VALUE_TRUE:
        return true
      case VALUE_FALSE:
        return false
      case VALUE_IP: {
        const text = this.string()
        return new IPValue(text, this.bytes())
      }
      case VALUE_TIME:
        return new TimeValue(this.float())
      case VALUE_DURATION:
        return new DurationValue(this.float())
      case VALUE_BYTES:
        return this.bytes()
    }
    throw new Error(`transfer: unknown value type ${type}`)
  }

  values(into: Map<string, Value> = new Map()): Map<string, Value> {
    const n = this.uint()
    for (let i = 0; i < n; i++) {
      const k = this.name()
      into.set(k, this.value())
    }
    return into
  }
}

/** What of an entry a stage changed besides its values (a flag each; see writeEntryOut). */
const CHANGED_DATA = 1
const CHANGED_TS = 2
const CHANGED_TAG = 4
const CHANGED_SRC = 8

/**
 * One entry that came out of a part of the pipeline run elsewhere: the index of the entry it came from (a stage may
 * pass on several from one), what changed of its intrinsic fields, and its values (with `keep`, only those it names).
 */
export function writeEntryOut(w: TransferWriter, index: number, e: Entry, from: Pick<Entry, 'ts' | 'tag' | 'src' | 'data'>, keep?: ReadonlySet<string>): void {
  w.uint(index)
  const changed = (e.data !== from.data ? CHANGED_DATA : 0) | (Object.is(e.ts, from.ts) ? 0 : CHANGED_TS) | (e.tag !== from.tag ? CHANGED_TAG : 0) | (e.src !== from.src ? CHANGED_SRC : 0)
  w.byte(changed)
  if (changed & CHANGED_DATA) w.bytes(e.data)
  if (changed & CHANGED_TS) w.float(e.ts)
  if (changed & CHANGED_TAG) w.string(e.tag)
  if (changed & CHANGED_SRC) w.string(e.src)
  w.values(e.values, keep)
}

/** An entry read back: `from` is the entry of that index, for the fields that did not change. */
export function readEntryOut(r: TransferReader, from: (index: number) => Pick<Entry, 'ts' | 'tag' | 'src' | 'data'>): { index: number; entry: Entry } {
  const index = r.uint()
  const changed = r.byte()
  const base = from(index)
  const data = changed & CHANGED_DATA ? r.bytes() : base.data
  const ts = changed & CHANGED_TS ? r.float() : base.ts
  const tag = changed & CHANGED_TAG ? r.string() : base.tag
  const src = changed & CHANGED_SRC ? r.string() : base.src
  return { index, entry: { ts, tag, src, data, values: r.values() } }
}
