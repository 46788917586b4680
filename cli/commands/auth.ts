// login, logout, whoami: a login session kept in the credentials file, per server.
import { Client } from '../client'
import { command } from '../command'
import { resolve } from 'node:path'
import { caCertificates, client, givenCa, output, serverUrl, usingToken } from '../context'
import { forgetSession, readCredentials, saveSession } from '../credentials'
import { ApiError, CliError, UsageError } from '../errors'
import { ask, askHidden, stdinLine } from '../prompt'
import { type User, userDetails } from '../records'

export const login = command({
  name: 'login',
  description: 'Log in and keep the session in the credentials file (mode 0600) for later commands, with --ca if given',
  examples: [
    'quarry login admin                         # asks for the password without echo',
    'echo "$PASSWORD" | quarry login admin --password-stdin',
    'quarry --server https://quarry.example.com login alice',
  ],
  args: {
    user: { type: 'positional', required: false, description: 'User name (asked for when omitted)' },
    'password-stdin': { type: 'boolean', description: 'Read the password from the first line of standard input' },
  },
  async run({ args }) {
    if (usingToken()) throw new UsageError('login makes a session; it cannot be combined with --token')
    const server = serverUrl()
    const user = args.user ?? (await ask('User: '))
    const pass = args['password-stdin'] ? await stdinLine('the password') : await askHidden(`Password for ${user}: `)
    const answer = await new Client({ server, ca: caCertificates(server) }).post<{ JWT: string; Admin: boolean }>('/api/login', { User: user, Pass: pass })
    // --ca is remembered with the session (a later login without it keeps the one remembered)
    const given = givenCa()
    const ca = given ? resolve(given) : readCredentials().servers[server]?.ca
    saveSession(server, { user, jwt: answer.JWT, since: new Date().toISOString(), ...(ca ? { ca } : {}) })
    const out = output()
    out.result({ Server: server, User: user, Admin: answer.Admin }, () => `Logged in to ${server} as ${user}${answer.Admin ? ' (admin)' : ''}`)
  },
})

export const logout = command({
  name: 'logout',
  description: 'End the saved session on the server and remove it from the credentials file',
  examples: ['quarry logout', 'quarry logout --all    # end every session of the user, on every device'],
  args: { all: { type: 'boolean', description: 'End all of the user\'s sessions, not only this one' } },
  async run({ args }) {
    if (usingToken()) throw new UsageError('logout ends a login session; it cannot be combined with --token')
    const server = serverUrl()
    const out = output()
    if (!readCredentials().servers[server]) {
      out.result({ Server: server, LoggedOut: false }, () => `Not logged in to ${server}`)
      return
    }
    let ended = true
    try {
      await client().call(args.all ? 'DELETE' : 'PUT', '/api/logout')
    } catch (e) {
      // A session the server already ended (expired, locked account) is forgotten all the same.
      if (!(e instanceof ApiError && e.status === 401)) throw e
      ended = false
    }
    const user = readCredentials().servers[server]!.user
    forgetSession(server)
    out.result({ Server: server, LoggedOut: true, AllSessions: Boolean(args.all) && ended }, () =>
      !ended ? `Logged out of ${server} (the session had already ended)`
      : args.all ? `Logged out of ${server}: ended every session of ${user}, on every device`
      : `Logged out of ${server}`,
    )
  },
})

export const whoami = command({
  name: 'whoami',
  description: 'Show the user the saved session or the token acts as',
  examples: ['quarry whoami', 'quarry whoami --json | jq .UID', 'QUARRY_TOKEN=... quarry whoami'],
  async run() {
    const c = client()
    if (!c.authenticated) throw new CliError(`not logged in to ${c.server}: run \`quarry login\` or pass --token`)
    const out = output()
    const me = await c.get<User>('/api/info/whoami')
    out.result(me, () => `${userDetails(out, me)}\nServer: ${c.server}`)
  },
})
