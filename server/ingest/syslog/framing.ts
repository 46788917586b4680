// Messages out of a syslog byte stream (TCP, TLS), in both framings of RFC 6587, told apart per message as rsyslog
// and syslog-ng do: a frame that starts with digits and a space is octet-counted (`MSG-LEN SP MSG`, RFC 5425 for
// TLS); any other is a line ended by LF (a CR before the LF is dropped too). So a line that itself starts with a
// number and a space (`200 OK`) is read as a count, as those daemons read it. An octet-counted message that ends with
// an LF (syslog-ng's syslog() driver counts one in) loses it, as rsyslog drops it on reception.
//
// Bounds: the deframer holds at most one partial frame (a count, a space and `maxMessage` bytes); a message longer
// than `maxMessage` is dropped whole (its count's bytes, or its line up to the next LF) and reported as too large, not
// held. Empty lines are skipped.

const LF = 0x0a
const CR = 0x0d
const SP = 0x20
const D0 = 0x30
const D9 = 0x39
/** Digits of the longest count read as one: 9 digits is 999,999,999 bytes, past any message limit. */
const MAX_COUNT_DIGITS = 9

export type FrameRefusal = 'too-large' | 'invalid'

/** The largest slab a deframer copies chunks into (see StreamDeframer.copy). */
const SLAB_MAX = 256 * 1024
/** A slab holds this many chunks of the size that opens it (a sender of small chunks gets small slabs). */
const SLAB_CHUNKS = 8

export class StreamDeframer {
  /** The start of a frame not yet whole (a copy: the chunk it came in is not kept). */
  private rest: Buffer | undefined
  /** Where chunks are copied, one after the other, and how much of it is used. */
  private slab = Buffer.alloc(0)
  private slabUsed = 0
  /** Bytes of an oversize octet-counted frame still to be dropped. */
  private skip = 0
  /** Dropping an oversize line until its LF. */
  private skipLine = false

  constructor(private readonly maxMessage: number) {}

  /** Whether part of a frame is held or being dropped (what the frame timeout watches). */
  get partial(): boolean {
    return this.rest !== undefined || this.skip > 0 || this.skipLine
  }

  /**
   * Reads `chunk`: calls `message` with each whole message and `refused` with each message dropped. The messages are
   * views into a copy of the chunk (one copy of each byte), so they stay valid after the caller's buffer is reused.
   * (Views by `slice`: Bun's Buffer `subarray` costs a microsecond each, a fifth of the whole cost of a message.)
   */
  push(chunk: Buffer, message: (m: Buffer) => void, refused: (reason: FrameRefusal) => void): void {
    const b = this.copy(chunk)
    this.rest = undefined
    let i = 0
    const n = b.length
    while (i < n) {
      if (this.skip > 0) {
        const k = Math.min(this.skip, n - i)
        this.skip -= k
        i += k
        continue
      }
      if (this.skipLine) {
        const lf = b.indexOf(LF, i)
        if (lf < 0) return
        this.skipLine = false
        i = lf + 1
        continue
      }
      const c = b[i]!
      if (c === LF || c === CR) {
        i++
        continue
      }
      if (c >= D0 && c <= D9) {
        let j = i
        let count = 0
        while (j < n && j - i < MAX_COUNT_DIGITS + 1 && b[j]! >= D0 && b[j]! <= D9) count = count * 10 + (b[j++]! - D0)
        if (j === n && j - i <= MAX_COUNT_DIGITS) break // the count goes on in the next chunk
        if (b[j] === SP && j - i <= MAX_COUNT_DIGITS) {
          const start = j + 1
          if (count === 0) {
            refused('invalid')
            i = start
            continue
          }
          if (count > this.maxMessage) {
            refused('too-large')
            this.skip = count
            i = start
            continue
          }
          if (start + count > n) break // the message goes on in the next chunk
          let end = start + count
          if (b[end - 1] === LF) end -= b[end - 2] === CR && end - 2 >= start ? 2 : 1
          if (end > start) message(b.slice(start, end))
          i = start + count
          continue
        }
        // digits not followed by a space: a line that starts with a number
      }
      const lf = b.indexOf(LF, i)
      if (lf < 0) {
        if (n - i > this.maxMessage + 1) {
          refused('too-large')
          this.skipLine = true
          return
        }
        break
      }
      const end = b[lf - 1] === CR ? lf - 1 : lf
      if (end - i > this.maxMessage) refused('too-large')
      else message(b.slice(i, end))
      i = lf + 1
    }
    if (i < n) this.rest = b.slice(i)
  }

  /**
   * The partial frame held and `chunk`, copied one after the other into the slab: a buffer per chunk (Buffer.concat)
   * cost a sixth of a syslog connection's CPU. The partial frame is the slab's tail already when it was cut from the
   * last copy, so only the chunk is copied after it. A new slab (SLAB_CHUNKS times the copy's size, at most SLAB_MAX,
   * or the copy's size when larger) when they do not fit; the old one stays only as long as messages that are views
   * into it (until they are stored).
   */
  private copy(chunk: Buffer): Buffer {
    const rest = this.rest
    const restLength = rest?.length ?? 0
    const n = restLength + chunk.length
    const restIsTail = rest !== undefined && rest.buffer === this.slab.buffer && rest.byteOffset + restLength === this.slab.byteOffset + this.slabUsed
    if (restIsTail && this.slabUsed + chunk.length <= this.slab.length) {
      chunk.copy(this.slab, this.slabUsed)
      this.slabUsed += chunk.length
      return this.slab.slice(this.slabUsed - n, this.slabUsed)
    }
    if (this.slabUsed + n > this.slab.length) {
      this.slab = Buffer.allocUnsafeSlow(Math.max(n, Math.min(SLAB_MAX, SLAB_CHUNKS * n)))
      this.slabUsed = 0
    }
    const at = this.slabUsed
    if (rest !== undefined) rest.copy(this.slab, at)
    chunk.copy(this.slab, at + restLength)
    this.slabUsed += n
    return this.slab.slice(at, at + n)
  }
}

/**
 * The message of a UDP datagram (one datagram, one message, RFC 5426): without the LF, CR LF or NUL some senders end
 * it with; undefined when nothing is left.
 */
export function datagramMessage(d: Buffer): Buffer | undefined {
  let end = d.length
  while (end > 0 && (d[end - 1] === LF || d[end - 1] === 0 || d[end - 1] === CR)) end--
  return end === 0 ? undefined : d.subarray(0, end)
}
