// Standard output and error written with write(2), not through process.stdout/stderr: the first touch of either
// builds Node's stream machinery (node:stream, fs.WriteStream), 20-130 ms of a command that otherwise takes about
// 50 (measured with Bun 1.4.5), and a command writes a few lines. Writes are synchronous, so they keep their order
// with each other and with `Bun.write(Bun.stdout, ...)` awaited in between. A descriptor some other process left
// non-blocking (EAGAIN) is handed to the stream from then on, which waits for it; a reader that has gone (EPIPE, or
// ECONNRESET when the descriptor is a socket, as Bun's spawn gives some children) makes the rest of the output go
// nowhere, as a pipe into `head` expects.
import { nodeFs } from './builtins'

const viaStream = { 1: false, 2: false }
const gone = { 1: false, 2: false }

/** Where standard output goes instead, while redirected (tests of commands run in process). */
let outSink: ((text: string) => void) | undefined

/** Sends standard output to `sink` until the returned function is called. */
export function redirectOut(sink: (text: string) => void): () => void {
  outSink = sink
  return () => (outSink = undefined)
}

function write(fd: 1 | 2, text: string): void {
  if (fd === 1 && outSink) return outSink(text)
  if (gone[fd]) return
  if (viaStream[fd]) {
    ;(fd === 1 ? process.stdout : process.stderr).write(text)
    return
  }
  const bytes = Buffer.from(text)
  let done = 0
  while (done < bytes.byteLength) {
    try {
      done += nodeFs().writeSync(fd, bytes, done)
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code
      if (code === 'EPIPE' || code === 'ECONNRESET') {
        gone[fd] = true
        return
      }
      if (code !== 'EAGAIN') throw e
      viaStream[fd] = true
      ;(fd === 1 ? process.stdout : process.stderr).write(bytes.subarray(done))
      return
    }
  }
}

/** Writes `text` to standard output. */
export const writeOut = (text: string): void => write(1, text)
/** Writes `text` to standard error. */
export const writeErr = (text: string): void => write(2, text)
/**
 * isatty(3) without node:tty: that module builds Node's stream classes as it loads (about 20-60 ms of a command's
 * start, Bun 1.4.5), and a command only asks whether a descriptor is a terminal. Bun's `tty_wrap` binding answers the
 * same (in the compiled executable too); a runtime without it gets node:tty's answer, loaded at the first question.
 */
function ttyProbe(): (fd: number) => boolean {
  try {
    const binding = (process as unknown as { binding(name: string): { isTTY?: unknown } }).binding('tty_wrap')
    if (typeof binding.isTTY === 'function') {
      const isTTY = binding.isTTY as (fd: number) => boolean
      return (fd) => isTTY(fd) === true
    }
  } catch {}
  const { isatty } = require('node:tty') as typeof import('node:tty')
  return isatty
}
let probe: ((fd: number) => boolean) | undefined

/** Whether standard output (1) or error (2) is a terminal. */
export const isTerminal = (fd: 1 | 2): boolean => (probe ??= ttyProbe())(fd)
