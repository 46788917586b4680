// The one auth guard: a macro every plugin uses to declare what each route needs (`access: 'ListUsers'`).
// It authenticates in `transform`, before validation, so an anonymous caller gets 401 rather than a
// complaint about its body; the caller is then available to the handler as `caller`.
import { Elysia } from 'elysia'
import { type Access, accessSpec } from '../../server/permissions'
import type { AuthService, Caller } from './service'

const CALLER = Symbol('caller')

export function authGuard(auth: AuthService) {
  return new Elysia({ name: 'quarry-auth-guard' }).macro({
    access: (access: Access) => {
      const spec = accessSpec(access)
      return {
        detail: { 'x-permission': spec.key } as Record<string, unknown>,
        async transform(ctx) {
          ;(ctx as unknown as Record<symbol, Caller>)[CALLER] = await auth.authorize(ctx.request, spec)
        },
        resolve(ctx) {
          return { caller: (ctx as unknown as Record<symbol, Caller>)[CALLER]! }
        },
      }
    },
  })
}

/** Whether the caller may act on the account `uid`: their own, or any with admin rights. */
export function selfOrAdmin(caller: Caller, uid: number): boolean {
  return caller.uid === uid || caller.admin
}
