// `quarry admin ...`: recovery run on the server's host against its store directly, not over HTTP (the answer to a
// lost admin password, as `grafana cli admin reset-admin-password` is for Grafana). Configured like the server, by
// its QUARRY_* variables (QUARRY_DATA_DIR, or QUARRY_DATABASE_URL for the PostgreSQL store of a cluster).
//
// Safe while the server runs: the data directory lock (server/runtime/datadir.ts) keeps a second *server* out (it would
// migrate, sweep blobs and remove the first one's search files); this tool does none of that. It opens the store
// without migrating, refuses a store whose schema is not the one it knows, and makes a few short writes through the
// store's repositories: SQLite in WAL mode lets another process write while the server reads and writes, each write
// waiting (busy_timeout) for the other's transaction. The server keeps no copy of users, sessions or throttle counts
// in memory (each request reads its session with its user from the store), so the change holds from its next request.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError, type Config, loadConfig } from '../../server/runtime/config'
import { PRIVATE_UMASK } from '../../server/runtime/datadir'
import { initialPasswordPath, removeInitialPassword } from '../../server/runtime/initial-password'
import { type Store, createSqliteStore } from '../../server/repos'
import { openPg, redact } from '../../server/store/pg'
import { pgStoreOn } from '../../server/repos.pg'
import { type ClusterEvent, publishToReplicas } from '../../server/runtime/events'
import { throttleSubject } from '../../plugins/auth/service'
import { PRIMARY_ADMIN } from '../../plugins/users'
import { command, group } from '../command'
import { CliError, UsageError } from '../errors'
import { newPassword } from '../prompt'
import { writeErr, writeOut } from '../stdio'

interface ServerStore {
  config: Config
  store: Store
  where: string
  /**
   * Tells the running servers what they hold open and must end now (their WebSockets of ended sessions). On
   * PostgreSQL the replicas hear it at once; a SQLite server is another process that nothing reaches, whose sockets
   * end at their next message or stats tick, when each request reads its session again.
   */
  announce(event: ClusterEvent): Promise<void>
}

/** The store the server with this environment uses, opened as it is (no migration). */
async function openServerStore(env: Record<string, string | undefined>): Promise<ServerStore> {
  let config: Config
  try {
    config = loadConfig(env).config
  } catch (e) {
    if (e instanceof ConfigError) throw new UsageError(`invalid configuration: ${e.message}`)
    throw e
  }
  if (config.databaseUrl) return openPgServerStore(config, config.databaseUrl)
  const path = join(config.dataDir, 'quarry.db')
  // Never create a store: a wrong QUARRY_DATA_DIR must say so, not reset the password of a new, empty store.
  if (!existsSync(path)) throw new CliError(`no Quarry store in ${config.dataDir} (set QUARRY_DATA_DIR to the server's data directory)`)
  process.umask(PRIVATE_UMASK)
  let store: Store
  try {
    store = createSqliteStore(path, { migrate: false })
  } catch (e) {
    throw new CliError(`cannot open the store ${path}: ${e instanceof Error ? e.message : e}`)
  }
  const state = await store.settings.migrationState().catch((e: unknown) => {
    store.close()
    throw new CliError(`cannot read the store ${path}: ${e instanceof Error ? e.message : e}`)
  })
  if (!state.current) {
    store.close()
    throw new CliError(
      `the store ${path} is at schema version ${state.applied}, this quarry knows ${state.known}: use the quarry of the server's version` +
        (state.applied < state.known ? ', or start this version of the server once (it migrates the store)' : ''),
    )
  }
  return { config, store, where: path, announce: async () => {} }
}

/**
 * The PostgreSQL store of QUARRY_DATABASE_URL, opened without migrating (as for SQLite: a store of another schema
 * version is refused, never changed). The writes are single statements that run beside the replicas' own.
 */
async function openPgServerStore(config: Config, url: string): Promise<ServerStore> {
  const where = `the PostgreSQL store at ${redact(url)}`
  let sql
  try {
    sql = await openPg(url, { max: 2 })
  } catch (e) {
    throw new CliError(`cannot open ${where}: ${e instanceof Error ? e.message : e}`)
  }
  const store = pgStoreOn(sql)
  const state = await store.settings.migrationState().catch(async (e: unknown) => {
    await store.close()
    throw new CliError(`cannot read ${where} (is it a Quarry store?): ${e instanceof Error ? e.message : e}`)
  })
  if (!state.current) {
    await store.close()
    throw new CliError(`${where} is at schema version ${state.applied}, this quarry knows ${state.known}: use the quarry of the servers' version`)
  }
  return { config, store, where, announce: (event) => publishToReplicas(sql, 'quarry admin', event) }
}

function generatedPassword(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(18))).toString('base64url')
}

const resetPassword = command({
  name: 'reset-password',
  description: "Set a user's password directly in the server's store (on the server's host; works while it runs), end their sessions, clear their login throttle",
  examples: [
    'QUARRY_DATA_DIR=/var/lib/quarry quarry admin reset-password',
    'quarry admin reset-password alice --generate',
    'printf %s "$NEW_PASSWORD" | quarry admin reset-password --password-stdin',
  ],
  args: {
    user: { type: 'positional', required: false, valueHint: 'USER', description: `User name (default: ${PRIMARY_ADMIN})` },
    'password-stdin': { type: 'boolean', description: 'Read the new password from the first line of standard input' },
    generate: { type: 'boolean', description: 'Generate a password and print it once on standard output' },
  },
  async run({ args }) {
    if (args['password-stdin'] && args.generate) throw new UsageError('give either --password-stdin or --generate, not both')
    const username = (args.user as string | undefined) || PRIMARY_ADMIN
    const { config, store, where, announce } = await openServerStore(process.env)
    try {
      const user = await store.users.getByName(username)
      if (!user) throw new CliError(`no user "${username}" in ${where}`)
      const password = args.generate ? generatedPassword() : await newPassword(Boolean(args['password-stdin']), `New password for ${username}: `)
      if (password.length < config.minPasswordLength)
        throw new CliError(`the password must be at least ${config.minPasswordLength} characters (QUARRY_MIN_PASSWORD_LENGTH)`)
      const hash = await Bun.password.hash(password, { algorithm: 'argon2id', ...config.passwordHash })
      await store.users.setPasswordHash(user.uid, hash)
      // After the new hash is in: a login checked against the old password in the meantime gets no session
      // (sessions.create requires the hash it verified), and every session from before ends here.
      const ended = await store.sessions.deleteForUser(user.uid)
      await store.sessions.clearLoginAttempts(throttleSubject(user, user.username))
      await announce({ kind: 'sessions-ended', ids: ended }).catch((e: unknown) =>
        writeErr(`quarry: the servers could not be told at once (${e instanceof Error ? e.message : e}); the sessions' WebSockets end at their next message\n`),
      )
      // The generated first password is of no use any more. On a cluster the file is on the replica that created
      // the account; run here with that replica's QUARRY_DATA_DIR it goes at once, elsewhere that replica removes it
      // at its next start (it checks the file's password against the store).
      const removed = user.username === PRIMARY_ADMIN && removeInitialPassword(config.dataDir)
      if (args.generate) writeOut(`${password}\n`)
      writeErr(`quarry: the password of "${user.username}" (UID ${user.uid}) is reset; ${ended.length} session(s) ended\n`)
      if (removed) writeErr(`quarry: removed ${initialPasswordPath(config.dataDir)} (the generated first password)\n`)
    } finally {
      await store.close()
    }
  },
})

export default group('admin', "Recovery on the server's host, against its store directly: reset-password", { 'reset-password': resetPassword }, [
  'quarry admin reset-password',
])
