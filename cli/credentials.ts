// The per-user credentials file: one login session (its JWT) per server URL, plus the server last logged in to,
// used when neither --server nor QUARRY_URL names one. The file holds live secrets, so it is created with mode
// 0600 inside a 0700 directory and replaced atomically (written beside, then renamed), never left half-written.
import { nodeFs, nodePath } from './builtins'
import { CliError } from './errors'

export interface SavedSession {
  /** The user name given at login. */
  user: string
  jwt: string
  /** RFC 3339 time of the login. */
  since: string
  /** The --ca file of the login (an absolute path): this server's certificates are checked against it from then on. */
  ca?: string
}

export interface CredentialsFile {
  /** The server of the last login. */
  current?: string
  servers: Record<string, SavedSession>
}

/** `$XDG_CONFIG_HOME/quarry/credentials.json`, or `~/.config/quarry/credentials.json`. */
export function credentialsPath(env: Record<string, string | undefined> = process.env): string {
  const { join } = nodePath()
  // node:os only without HOME (rare): its load is part of every command's start otherwise.
  const base = env.XDG_CONFIG_HOME || join(env.HOME || (require('node:os') as typeof import('node:os')).homedir(), '.config')
  return join(base, 'quarry', 'credentials.json')
}

export function readCredentials(path = credentialsPath()): CredentialsFile {
  let text: string
  try {
    text = nodeFs().readFileSync(path, 'utf8')
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { servers: {} }
    throw new CliError(`cannot read ${path}: ${(e as Error).message}`)
  }
  try {
    const parsed = JSON.parse(text) as CredentialsFile
    if (typeof parsed !== 'object' || parsed === null || typeof parsed.servers !== 'object') throw new Error('unexpected shape')
    return parsed
  } catch (e) {
    throw new CliError(`${path} is not a credentials file (${(e as Error).message}); remove it and log in again`)
  }
}

export function writeCredentials(file: CredentialsFile, path = credentialsPath()): void {
  const { chmodSync, mkdirSync, renameSync, rmSync, writeFileSync } = nodeFs()
  mkdirSync(nodePath().dirname(path), { recursive: true, mode: 0o700 })
  const temp = `${path}.${process.pid}.tmp`
  try {
    // mode applies at creation only; chmod covers a umask that would widen nothing but keeps intent explicit.
    writeFileSync(temp, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600, flag: 'w' })
    chmodSync(temp, 0o600)
    renameSync(temp, path)
  } catch (e) {
    rmSync(temp, { force: true })
    throw new CliError(`cannot write ${path}: ${(e as Error).message}`)
  }
}

export function saveSession(server: string, session: SavedSession, path = credentialsPath()): void {
  const file = readCredentials(path)
  file.servers[server] = session
  file.current = server
  writeCredentials(file, path)
}

/** Forgets the session of `server`; answers whether there was one. */
export function forgetSession(server: string, path = credentialsPath()): boolean {
  const file = readCredentials(path)
  if (!file.servers[server]) return false
  delete file.servers[server]
  if (file.current === server) delete file.current
  writeCredentials(file, path)
  return true
}
