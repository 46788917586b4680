// Output: the server's JSON as it came with --json (for scripts), readable tables otherwise; messages for people
// go to standard error so standard output stays clean. Progress bars only on a terminal and never with --json.
import type { SingleBar } from 'cli-progress'
import type TableClass from 'cli-table3'
import type { Progress } from './client'
import { isTerminal, writeErr, writeOut } from './stdio'

// Loaded on first use: each costs tens of milliseconds at start-up, and many commands need neither.
const Table = (): typeof TableClass => require('cli-table3')
const progressBars = (): typeof import('cli-progress') => require('cli-progress')

export interface Column<T> {
  header: string
  value: (row: T) => unknown
}

const ZERO_TIME = '0001-01-01T00:00:00Z'

/** One cell: times without their fraction, the zero time as "-", lists joined, objects as JSON. */
export function cell(v: unknown): string {
  if (v === undefined || v === null || v === '') return '-'
  if (typeof v === 'boolean') return v ? 'yes' : 'no'
  if (typeof v === 'string') {
    if (v === ZERO_TIME) return '-'
    if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(v)) return v.replace(/\.\d+Z$/, 'Z')
    return v
  }
  if (Array.isArray(v)) return v.length === 0 ? '-' : v.map(cell).join(', ')
  if (typeof v === 'object') return JSON.stringify(v)
  return String(v)
}

/** Borderless tables: columns separated by two spaces, as `ps` or `kubectl` print them. */
const PLAIN = {
  top: '', 'top-mid': '', 'top-left': '', 'top-right': '',
  bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '',
  left: '', 'left-mid': '', mid: '', 'mid-mid': '', right: '', 'right-mid': '', middle: '  ',
}
const STYLE = { head: [], border: [], 'padding-left': 0, 'padding-right': 0, compact: true }

export class Output {
  constructor(
    readonly json: boolean,
    /** Whether standard error is a terminal (progress bars go there). */
    private readonly terminal = isTerminal(2),
  ) {}

  /** Whether progress may be shown: standard error is a terminal. */
  get onTerminal(): boolean {
    return this.terminal
  }

  /** A message for people, on standard error (standard output stays the command's result). */
  note(text: string) {
    writeErr(text.endsWith('\n') ? text : `${text}\n`)
  }

  private write(text: string) {
    writeOut(text.endsWith('\n') ? text : `${text}\n`)
  }

  /** The server's answer verbatim with --json; otherwise what `human` renders. */
  result(data: unknown, human: () => string | undefined) {
    if (this.json) return this.write(JSON.stringify(data, null, 2))
    const text = human()
    if (text !== undefined && text !== '') this.write(text)
  }

  table<T>(rows: T[], columns: Column<T>[]): string {
    if (rows.length === 0) return '(none)'
    const t = new (Table())({ head: columns.map((c) => c.header), chars: PLAIN, style: STYLE })
    for (const row of rows) t.push(columns.map((c) => cell(c.value(row))))
    return t.toString().split('\n').map((l) => l.trimEnd()).join('\n')
  }

  /** One record as `Label: value` lines. */
  details(pairs: [string, unknown][]): string {
    const t = new (Table())({ chars: PLAIN, style: STYLE })
    for (const [k, v] of pairs) t.push([`${k}:`, cell(v)])
    return t.toString().split('\n').map((l) => l.trimEnd()).join('\n')
  }

  /**
   * A status line on standard error when it is a terminal and output is not JSON, redrawn in place by cli-progress;
   * otherwise none.
   */
  status(label: string, stream?: NodeJS.WriteStream): Status | undefined {
    if (this.json || !this.terminal) return undefined
    stream ??= process.stderr
    const { Format, SingleBar } = progressBars()
    const bar = new SingleBar({
      format: (options, params, payload) => Format.Formatter({ ...options, format: `${label} {text}` }, params, payload),
      stream,
      hideCursor: true,
      clearOnComplete: false,
      noTTYOutput: true,
      notTTYSchedule: 200,
    })
    bar.start(1, 0, { text: '' })
    return { update: (text) => bar.update(0, { text }), stop: () => bar.stop() }
  }

  /**
   * A progress bar on standard error when it is a terminal and output is not JSON; otherwise none. When the size
   * is not known up front the bar shows the bytes so far and ends at 100% once the transfer is complete.
   */
  progress(label: string, stream?: NodeJS.WriteStream): Progress | undefined {
    if (this.json || !this.terminal) return undefined
    const to = stream ?? process.stderr
    let bar: SingleBar | undefined
    let done = 0
    let known = true
    return {
      start(total) {
        known = total !== undefined
        const withBar = `${label} [{bar}] {percentage}% {done}/{size} {eta_formatted}`
        const { Format, SingleBar } = progressBars()
        bar = new SingleBar({
          // without a known size there is nothing to fill: the bytes so far, until the end shows 100%
          format: (options, params, payload) =>
            Format.Formatter({ ...options, format: known ? withBar : `${label} {done}` }, params, payload),
          stream: to,
          hideCursor: true,
          clearOnComplete: false,
          // the caller decided this is a terminal; cli-progress would check the stream again
          noTTYOutput: true,
          notTTYSchedule: 200,
        })
        bar.start(total ?? 0, 0, { done: bytes(0), size: known ? bytes(total!) : '?' })
      },
      advance(n) {
        done += n
        bar?.update(done, { done: bytes(done) })
      },
      stop() {
        if (bar && !known) {
          known = true
          bar.setTotal(done)
          bar.update(done, { size: bytes(done) })
        }
        bar?.stop()
      },
    }
  }
}

/** A line of status that changes in place (a count so far, a state), for waits whose end is not known. */
export interface Status {
  update(text: string): void
  stop(): void
}

export function bytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
  let i = 0
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024
    i++
  }
  return `${i === 0 ? n : n.toFixed(1)} ${units[i]}`
}
