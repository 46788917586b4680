// The one auth guard: a macro every plugin uses to declare what each route needs (`access: 'ListUsers'`).
// It authenticates in `transform`, before validation, so an anonymous caller gets 401 rather than a
// complaint about its body; the caller is then available to the handler as `caller`.
import { Elysia } from 'elysia'
import { type Access, accessSpec } from '../../server/permissions'
import type { AuthService, Caller } from './service'

type WithCaller = { caller: Caller }

export function authGuard(auth: AuthService) {
  return new Elysia({ name: 'quarry-auth-guard' }).macro({
    access: (access: Access) => {
      const spec = accessSpec(access)
      return {
        // Read by the route-table tests (test/routes.ts): the permission, and whether the JWT may come as a cookie.
        detail: { 'x-permission': spec.key, ...(spec.cookie ? { 'x-cookie': true } : {}) } as Record<string, unknown>,
        async transform(ctx) {
          // Set before the route may refuse (403 here, or 400 from validation), so the request log names the uid.
          const caller = await auth.authenticate(ctx.request, spec)
          ;(ctx as unknown as WithCaller).caller = caller
          auth.admit(caller, spec)
        },
        resolve(ctx) {
          return { caller: (ctx as unknown as WithCaller).caller }
        },
      }
    },
  })
}

/** Whether the caller may act on the account `uid`: their own, or any with admin rights. */
export function selfOrAdmin(caller: Caller, uid: number): boolean {
  return caller.uid === uid || caller.admin
}
