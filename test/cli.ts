// Driving the `quarry` CLI as a user does, for the CLI test files: one real server process per file (started with
// `quarry serve`) on a temporary store, and the CLI run as a subprocess per command with its own HOME, so the
// credentials file is a real file.
import { afterAll, beforeAll, expect } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { listening } from './helpers'

export const MAIN = join(import.meta.dir, '..', 'cli', 'main.ts')
export const ADMIN_PASSWORD = 'admin-password-1'
/** Per-test limit: each test runs many subprocesses, and a timed-out test makes Bun kill the server as well. */
export const SLOW = 60_000

export interface Run {
  code: number
  stdout: string
  stderr: string
  json: () => any
}

export interface RunOptions {
  stdin?: string
  env?: Record<string, string>
}

/** The failure of a command: its exit code and its one-line message, never a stack trace. */
export function expectFailure(r: Run, code: number, message: string) {
  expect(r.code).toBe(code)
  expect(r.stderr).toContain(`quarry: ${message}`)
  expect(r.stderr).not.toMatch(/^\s+at /m)
  expect(r.stdout).toBe('')
}

/** Starts this test file's server (before its tests) and answers the tools to drive the CLI against it. */
export interface TerminalReply {
  /** Typed once the terminal shows this text. */
  after: string
  type: string
}

/**
 * Runs `command` on a pseudo-terminal (`script`, util-linux), so that standard input, output and error are a
 * terminal: each reply is typed once the terminal shows its `after` text, in order. Answers the exit code and what
 * the terminal showed.
 */
export async function onPseudoTerminal(command: string[], env: Record<string, string>, replies: TerminalReply[] = []): Promise<{ code: number; seen: string }> {
  const line = command.map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(' ')
  const proc = Bun.spawn(['script', '-qec', line, '/dev/null'], { env: { ...env, NO_COLOR: '1', TERM: 'dumb' }, stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' })
  let seen = ''
  const decoder = new TextDecoder()
  const reader = proc.stdout.getReader()
  const readUntil = async (done: () => boolean) => {
    while (!done()) {
      const { value, done: ended } = await reader.read()
      if (ended) break
      seen += decoder.decode(value)
    }
  }
  let cursor = 0
  for (const { after, type } of replies) {
    await readUntil(() => seen.indexOf(after, cursor) !== -1)
    const at = seen.indexOf(after, cursor)
    if (at === -1) break // the command ended without asking
    cursor = at + after.length
    proc.stdin.write(type)
    await proc.stdin.flush()
  }
  await readUntil(() => false)
  proc.stdin.end()
  return { code: await proc.exited, seen }
}

/** `serverEnv`: more of the server's environment (a limit a test needs). */
export function cliHarness(serverEnv: Record<string, string> = {}) {
  const dirs: string[] = []
  const state = { url: '' }
  let server: ReturnType<typeof Bun.spawn> | undefined
  let sharedAdmin: Promise<string> | undefined

  function tempDir() {
    const dir = mkdtempSync(join(tmpdir(), 'quarry-cli-'))
    dirs.push(dir)
    return dir
  }

  beforeAll(async () => {
    const proc = Bun.spawn([process.execPath, 'run', MAIN, 'serve'], {
      env: { PATH: process.env.PATH ?? '', QUARRY_LISTEN: '127.0.0.1:0', QUARRY_DATA_DIR: tempDir(), QUARRY_ADMIN_PASSWORD: ADMIN_PASSWORD, ...serverEnv },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    server = proc
    state.url = (await listening(proc)).url
  })

  afterAll(async () => {
    server?.kill('SIGTERM')
    await server?.exited
    dirs.forEach((d) => rmSync(d, { recursive: true, force: true }))
  })

  /** Runs `quarry ARGS` with HOME (and so the credentials file) in `home`, QUARRY_URL pointing at the server. */
  async function quarry(home: string, args: string[], opts: RunOptions = {}): Promise<Run> {
    const proc = Bun.spawn([process.execPath, 'run', MAIN, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: home, QUARRY_URL: state.url, NO_COLOR: '1', ...opts.env },
      stdin: opts.stdin === undefined ? 'ignore' : new TextEncoder().encode(opts.stdin),
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
    return { code, stdout, stderr, json: () => JSON.parse(stdout) }
  }

  /** A command that must succeed; answers its run. */
  async function ok(home: string, args: string[], opts?: RunOptions): Promise<Run> {
    const r = await quarry(home, args, opts)
    if (r.code !== 0) throw new Error(`quarry ${args.join(' ')} exited ${r.code}: ${r.stderr}`)
    return r
  }

  /**
   * Runs `quarry ARGS` on a pseudo-terminal (see onTerminal below) against the harness's server. Answers what the
   * terminal showed.
   */
  function onTerminal(home: string, args: string[], replies: TerminalReply[] = []): Promise<{ code: number; seen: string }> {
    return onPseudoTerminal([process.execPath, 'run', MAIN, ...args], { PATH: process.env.PATH ?? '', HOME: home, QUARRY_URL: state.url }, replies)
  }

  /** A HOME logged in as admin, shared by the tests that do not log it out. */
  function adminHome(): Promise<string> {
    sharedAdmin ??= (async () => {
      const home = tempDir()
      await ok(home, ['login', 'admin', '--password-stdin'], { stdin: `${ADMIN_PASSWORD}\n` })
      return home
    })()
    return sharedAdmin
  }

  /** The JWT `login` saved in `home` for this server. */
  function savedJwt(home: string): string {
    return JSON.parse(readFileSync(join(home, '.config', 'quarry', 'credentials.json'), 'utf8')).servers[state.url].jwt
  }

  /** A direct API call with the JWT (to set up or check what a command did); answers the parsed body, throws on a refusal. */
  async function api(jwt: string, method: string, path: string, json?: unknown) {
    const res = await fetch(`${state.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${jwt}`, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
      body: json === undefined ? undefined : JSON.stringify(json),
    })
    const text = await res.text()
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`)
    return text === '' ? null : JSON.parse(text)
  }

  return {
    /** The server's base URL (set once the file's tests start). */
    get url() {
      return state.url
    },
    tempDir,
    quarry,
    onTerminal,
    ok,
    adminHome,
    savedJwt,
    api,
  }
}
