// Secrets from the person at the terminal (without echo) or from standard input, for scripts.
import { nodeFs } from './builtins'
import { CliError, UsageError } from './errors'
import { writeErr } from './stdio'

let stdinLines: string[] | undefined

/** Standard input's lines, read once (a password on stdin is one line; a trailing newline is not part of it). */
async function readStdinLines(): Promise<string[]> {
  if (!stdinLines) {
    const text = await new Response(Bun.stdin.stream()).text()
    stdinLines = text.split(/\r?\n/)
  }
  return stdinLines
}

/** The next line of standard input; a missing or empty line is an error naming `what`. */
export async function stdinLine(what: string): Promise<string> {
  const lines = await readStdinLines()
  const line = lines.shift()
  if (line === undefined || line === '') throw new UsageError(`expected ${what} on standard input`)
  return line
}

function needTerminal(what: string) {
  if (!process.stdin.isTTY) throw new UsageError(`no terminal to ask for ${what}: pass it on standard input with --password-stdin`)
}

/** Whether there is a person to ask: standard input is a terminal. */
export function onTerminal(): boolean {
  return Boolean(process.stdin.isTTY)
}

/** Asks for a line with echo (e.g. a user name). */
export async function ask(question: string): Promise<string> {
  needTerminal(question.replace(/:\s*$/, '').toLowerCase())
  const answer = prompt(question) ?? ''
  if (answer.trim() === '') throw new UsageError(`${question.replace(/:\s*$/, '')} is required`)
  return answer.trim()
}

/** How a confirmation reaches the person (a seam for tests; the default asks on the terminal). */
export interface Asker {
  terminal: boolean
  ask(question: string): string | null
}
/** The question on standard error (standard output may be redirected: `--json ... > out.json`), the answer one line. */
const terminalAsker: Asker = {
  get terminal() {
    return onTerminal()
  },
  ask(q) {
    writeErr(`${q} `)
    const buf = Buffer.alloc(1)
    let line = ''
    // Read byte by byte up to the newline: nothing typed after it is taken from a later reader of standard input.
    for (;;) {
      let n = 0
      try {
        n = nodeFs().readSync(0, buf, 0, 1, null)
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EAGAIN') {
          Bun.sleepSync(10) // a non-blocking terminal with nothing typed yet
          continue
        }
        throw e
      }
      if (n === 0) return line === '' ? null : line
      const ch = buf.toString('latin1')
      if (ch === '\n') return Buffer.from(line, 'latin1').toString('utf8').replace(/\r$/, '')
      line += ch
    }
  },
}

/**
 * A destructive command goes ahead only when confirmed: by `--yes`, or by the answer y/yes to `question` on a
 * terminal. Without a terminal and without --yes it is refused as bad usage (exit 2) before anything is sent;
 * any other answer aborts it (exit 1). `action` says what would have happened ("delete user alice").
 */
export function confirm(action: string, question: string, yes: boolean, asker: Asker = terminalAsker): void {
  if (yes) return
  if (!asker.terminal) throw new UsageError(`refusing to ${action} without confirmation: no terminal to ask on, pass --yes`)
  const answer = (asker.ask(`${question} [y/N]`) ?? '').trim().toLowerCase()
  if (answer !== 'y' && answer !== 'yes') throw new CliError(`aborted: did not ${action}`)
}

/** Asks for a secret on the terminal without echoing it. Ctrl-C aborts, Ctrl-D ends the input. */
export async function askHidden(question: string): Promise<string> {
  needTerminal(question.replace(/:\s*$/, '').toLowerCase())
  const stdin = process.stdin
  // Echo goes off before the prompt shows, so nothing typed after the prompt can be echoed.
  stdin.setRawMode(true)
  writeErr(question)
  stdin.resume()
  stdin.setEncoding('utf8')
  try {
    return await new Promise<string>((resolve, reject) => {
      let value = ''
      const onData = (chunk: string) => {
        for (const ch of chunk) {
          if (ch === '\r' || ch === '\n' || ch === '\u0004') {
            stdin.off('data', onData)
            return resolve(value)
          }
          if (ch === '\u0003') {
            stdin.off('data', onData)
            return reject(new CliError('aborted'))
          }
          if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1)
          else value += ch
        }
      }
      stdin.on('data', onData)
    })
  } finally {
    stdin.setRawMode(false)
    stdin.pause()
    writeErr('\n')
  }
}

/** A new password: asked twice on a terminal, or one line of standard input. */
export async function newPassword(fromStdin: boolean, question = 'New password: '): Promise<string> {
  if (fromStdin) return stdinLine('the new password')
  const first = await askHidden(question)
  const again = await askHidden('Repeat it: ')
  if (first !== again) throw new CliError('the two passwords differ')
  if (first === '') throw new UsageError('the password may not be empty')
  return first
}
