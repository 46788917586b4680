// Login and sessions: POST /api/login, refresh, download token, logout of one or all sessions.
import { Elysia } from 'elysia'
import type { Server } from 'bun'
import { type AuthService, sessionOf } from './service'
import { authGuard } from './guard'
import { Empty, LoginBody, LoginFailure, LoginSuccess, LoginThrottled, TempToken } from './schema'
import { area } from '../../server/http/openapi'

/** A request's client address (server/http/client-address.ts): the peer, or what trusted proxies say it is. */
type ClientOf = (server: Server<unknown> | null, request: Request) => string

export function authPlugin(auth: AuthService, originOf: ClientOf) {
  return new Elysia({ name: 'quarry-auth', detail: area('Login and sessions') })
    .use(authGuard(auth))
    .post(
      '/api/login',
      async ({ body, request, server, set, status }) => {
        // names are stored in NFC (server/rules/names.ts): a client that sends another normal form still finds its account
        const result = await auth.login(body.User.normalize('NFC'), body.Pass, originOf(server, request))
        if (!result.ok) {
          // 422 and 423 have the bodies of docs/api.md "Logging in and sessions"; the 429 is a plain refusal and
          // carries the `Error` of docs/api.md "Conventions" as well, so clients reading either shape see why.
          if (result.status === 429) {
            if (result.retryAfterMs > 0) set.headers['retry-after'] = String(Math.ceil(result.retryAfterMs / 1000))
            return status(429, { LoginStatus: false as const, Reason: result.reason, Error: result.reason })
          }
          return status(result.status, { LoginStatus: false as const, Reason: result.reason })
        }
        return { LoginStatus: true as const, JWT: result.jwt, Admin: result.user.admin, MFARequired: false, MFASetupRequired: false }
      },
      {
        body: LoginBody,
        response: { 200: LoginSuccess, 422: LoginFailure, 423: LoginFailure, 429: LoginThrottled },
        detail: { summary: 'Log in: get a JWT for a user name and password', description: 'Send `User` and `Pass` as JSON or form fields. Wrong credentials answer 422, a locked account 423, too many failures 429 (with Retry-After).' },
      },
    )
    .get(
      '/api/login/refreshtoken',
      async ({ caller, request, server }) => {
        const jwt = await auth.refreshSession(caller, originOf(server, request))
        return { LoginStatus: true as const, JWT: jwt, Admin: caller.user.admin, MFARequired: false, MFASetupRequired: false }
      },
      { access: 'session', response: LoginSuccess, detail: { summary: 'Renew your JWT', description: 'A new JWT replacing the current one, with the same session end time; the old JWT stops working.' } },
    )
    .get(
      '/api/login/tmptoken',
      async ({ caller, request, server }) => ({
        LoginStatus: true as const,
        JWT: await auth.openSession(caller.uid, originOf(server, request), true),
      }),
      { access: 'session', response: TempToken, detail: { summary: 'Get a 3-second download token', description: 'A JWT that works for 3 seconds and only on downloads (resource contents, user file contents, search downloads), as header or as cookie `token`.' } },
    )
    .put(
      '/api/logout',
      async ({ caller }) => {
        await auth.closeSession(sessionOf(caller).id)
        return {}
      },
      { access: 'session', response: Empty, detail: { summary: 'Log out this session' } },
    )
    .delete(
      '/api/logout',
      async ({ caller }) => {
        await auth.closeAllSessions(caller.uid)
        return {}
      },
      { access: 'session', response: Empty, detail: { summary: 'Log out every session of yours' } },
    )
}
