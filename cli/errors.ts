// The CLI's three kinds of failure and their exit codes: bad usage (2), a refusal by the server (1), anything
// else that stops a command (1: unreachable server, unreadable file...). main.ts prints the message, never a stack.

/** The command line itself is wrong: unknown command or option, missing or malformed argument. Exit 2. */
export class UsageError extends Error {
  override name = 'UsageError'
}

/** The server answered with an error status; `message` is its `{"Error": ...}` text. Exit 1. */
export class ApiError extends Error {
  override name = 'ApiError'
  constructor(
    readonly status: number,
    message: string,
    readonly body?: unknown,
    /** The server's Retry-After, in milliseconds: when to send the same request again (429 and 503 say it). */
    readonly retryAfterMs?: number,
  ) {
    super(message)
  }
}

/** The command could not be carried out for a reason other than the server's answer. Exit 1. */
export class CliError extends Error {
  override name = 'CliError'
}

/** The server refused, or the command could not be carried out. */
export const EXIT_FAILURE = 1
export const EXIT_USAGE = 2
