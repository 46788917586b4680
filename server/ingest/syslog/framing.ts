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

/**
 * The most bytes a frame that began in an earlier chunk can still take from the next one before it is whole or
 * refused: a count's digits, its space and the longest message, and a line's CR LF.
 */
const frameTail = (maxMessage: number) => maxMessage + MAX_COUNT_DIGITS + 3

export class StreamDeframer {
  /** The start of a frame not yet whole: a copy of its bytes (the chunk it came in is not kept for it). */
  private rest: Buffer | undefined
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
   * Reads `chunk`: calls `message` with each whole message and `refused` with each message dropped. The chunk is the
   * deframer's from now on (the caller must not change it): messages are views into it, not copies, and stay valid as
   * long as they are held. Bun gives each socket read a buffer of its own (server/ingest/syslog/stream.test.ts checks
   * it), so a listener hands its chunks on as they come: each byte is copied once, by Bun, and only a frame cut by a
   * chunk's end is copied again, joined with the start of the next chunk. (Views by `slice`: Bun's Buffer `subarray`
   * costs a microsecond each, a fifth of the whole cost of a message.)
   */
  push(chunk: Buffer, message: (m: Buffer) => void, refused: (reason: FrameRefusal) => void): void {
    let from = 0
    const rest = this.rest
    if (rest !== undefined) {
      this.rest = undefined
      // The frame begun in `rest` is whole or refused within frameTail bytes: only those are joined to it. The scan
      // stops once past the join; a frame that is still not whole there has taken all of the chunk.
      const take = Math.min(chunk.length, frameTail(this.maxMessage))
      const joined = Buffer.allocUnsafe(rest.length + take)
      rest.copy(joined, 0)
      chunk.copy(joined, rest.length, 0, take)
      const at = this.scan(joined, 0, rest.length, message, refused)
      if (at < rest.length) {
        this.rest = joined.slice(at)
        return
      }
      from = at - rest.length
    }
    const end = this.scan(chunk, from, chunk.length, message, refused)
    // A copy: a view would keep the whole chunk for a frame's start.
    if (end < chunk.length) this.rest = Buffer.from(chunk.subarray(end))
  }

  /**
   * Reads the frames of `b` from `i` on, until one ends at or past `stopAt` or the buffer does; answers where it
   * stopped: the start of a frame not whole within `b` (the caller keeps it), or where it went on to.
   */
  private scan(b: Buffer, i: number, stopAt: number, message: (m: Buffer) => void, refused: (reason: FrameRefusal) => void): number {
    const n = b.length
    while (i < n && i < stopAt) {
      if (this.skip > 0) {
        const k = Math.min(this.skip, n - i)
        this.skip -= k
        i += k
        continue
      }
      if (this.skipLine) {
        const lf = b.indexOf(LF, i)
        if (lf < 0) return n
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
        if (j === n && j - i <= MAX_COUNT_DIGITS) return i // the count goes on in the next chunk
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
          if (start + count > n) return i // the message goes on in the next chunk
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
          return n
        }
        return i
      }
      const end = b[lf - 1] === CR ? lf - 1 : lf
      if (end - i > this.maxMessage) refused('too-large')
      else message(b.slice(i, end))
      i = lf + 1
    }
    return i
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
