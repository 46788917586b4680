// One JSON object per line on stdout. Callers pass fields, never secrets: no passwords, JWTs or token values.
import type { LogLevel } from './config'

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 }

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void
  info(msg: string, fields?: Record<string, unknown>): void
  warn(msg: string, fields?: Record<string, unknown>): void
  error(msg: string, fields?: Record<string, unknown>): void
  /** Whether lines of this level are written at all. */
  enabled(level: LogLevel): boolean
}

/** Writes to stdout; a closed stdout (a reader that went away) must not fail the request being logged. */
function writeStdout(line: string) {
  try {
    process.stdout.write(line)
  } catch {
    // nowhere left to report it
  }
}

export function createLogger(level: LogLevel, write: (line: string) => void = writeStdout): Logger {
  const min = RANK[level]
  const emit = (lvl: LogLevel) => (msg: string, fields?: Record<string, unknown>) => {
    if (RANK[lvl] < min) return
    write(JSON.stringify({ ts: new Date().toISOString(), level: lvl, msg, ...fields }) + '\n')
  }
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error'), enabled: (lvl) => RANK[lvl] >= min }
}
