// The one auth guard: a macro every plugin uses to declare what each route needs (`access: 'ListUsers'`).
// The caller is authenticated and admitted before anything of the request is looked at: on routes that take a
// body, by the body parser before it reads a byte (bodyGate, wired in server/app.ts), so an anonymous request
// is refused unread; on the others in `transform`, before validation, so an anonymous caller gets 401 rather
// than a complaint about its query. The caller is then available to the handler as `caller`.
import { Elysia } from 'elysia'
import type { AssembledRoute, BodyGate } from '../../server/http/body'
import { type Access, type AccessSpec, accessSpec } from '../../server/rules/permissions'
import type { AuthService, Caller } from './service'
import { noteCaller } from '../../server/http/request-log'
import { valueNow } from '../../server/store/maybe'

type WithCaller = { caller?: Caller }

/** The access rule of each route's guard hook, so the body parser can run the same check first (bodyGate). */
const guardSpecs = new WeakMap<object, AccessSpec>()

export function authGuard(auth: AuthService) {
  return new Elysia({ name: 'quarry-auth-guard' }).macro({
    access: (access: Access) => {
      const spec = accessSpec(access)
      // Only ctx.request and ctx.caller are touched, never ctx as a whole: Elysia reads the hook's source and would
      // otherwise prepare every part of the context (query, cookies, ...) on every request. It also decides from the
      // source whether to await the hook (an `async`, an `await`, or a call right after a `return` or an arrow), and
      // one awaited hook makes the route's whole handler async: a promise per request. So two forms: on a store that
      // answers at once (SQLite) a plain function; on PostgreSQL an async one that awaits the store.
      const admit = admitter(auth, spec)
      const transform = auth.answersAtOnce
        ? (ctx: { request: Request }) => {
            if ((ctx as WithCaller).caller) return // admitted by the body parser already
            const caller = valueNow(auth.authenticate(ctx.request, spec))
            ;(ctx as WithCaller).caller = caller
            admit(ctx.request, caller)
          }
        : async (ctx: { request: Request }) => {
            if ((ctx as WithCaller).caller) return // admitted by the body parser already
            const caller = await auth.authenticate(ctx.request, spec)
            ;(ctx as WithCaller).caller = caller
            admit(ctx.request, caller)
          }
      guardSpecs.set(transform, spec)
      return {
        // Read by the route-table tests (test/routes.ts): the permission, and whether the JWT may come as a cookie.
        detail: { 'x-permission': spec.key, ...(spec.cookie ? { 'x-cookie': true } : {}) } as Record<string, unknown>,
        transform,
        resolve(ctx) {
          return { caller: (ctx as unknown as WithCaller).caller! }
        },
      }
    },
  })
}

/**
 * The check the body parser runs before it reads the body of an assembled route: that route's own guard (401,
 * 403), or undefined for a route without one (a public route). The parser puts the caller where the guard's
 * transform finds it, so the check runs once.
 */
export function bodyGate(auth: AuthService, hooks: AssembledRoute['hooks']): BodyGate<Caller> | undefined {
  const spec = accessOf(hooks)
  if (!spec) return undefined
  const admit = admitter(auth, spec)
  return { authenticate: (request) => auth.authenticate(request, spec), admit: (caller, request) => admit(request, caller) }
}

/**
 * The permission check of a route once its caller is known (403 when refused). The caller is noted for the request
 * line first, so that a refused request's line still names the uid.
 */
function admitter(auth: AuthService, spec: AccessSpec) {
  return (request: Request, caller: Caller) => {
    noteCaller(request, caller)
    if (spec.releaseOwn && caller.token && !caller.token.capabilities.includes(spec.key as never)) {
      // Only what the token itself holds may be released (the route checks that, see releaseOnly); the rest of the
      // rule (session-only, admin, a temporary download session) still applies.
      auth.admit(caller, { ...spec, key: 'self' })
      releasing.add(request)
      return
    }
    auth.admit(caller, spec)
  }
}

/** The requests admitted only to let go of the caller's own hold (AccessSpec releaseOwn). */
const releasing = new WeakSet<Request>()

/**
 * Whether the request was admitted only under AccessSpec releaseOwn (a token without the route's permission): the
 * route must then act on the caller's own attachment alone, and refuse anything else with the permission's 403.
 */
export function releaseOnly(request: Request): boolean {
  return releasing.has(request)
}

/**
 * The access rule an assembled route's guard enforces, or undefined for a route without one (a public route). The
 * body parser (bodyGate) and the OpenAPI document (its security and x-permission) both read it here, so what the
 * document says a route needs is what the guard checks.
 */
export function accessOf(hooks: AssembledRoute['hooks']): AccessSpec | undefined {
  const transforms = Array.isArray(hooks.transform) ? (hooks.transform as { fn: object }[]) : []
  return transforms.map((h) => guardSpecs.get(h.fn)).find((s) => s !== undefined)
}

/** Whether the caller may act on the account `uid`: their own, or any with admin rights. */
export function selfOrAdmin(caller: Caller, uid: number): boolean {
  return caller.uid === uid || caller.admin
}
