// The app's own route table, as the tests that must cover every route read it: method, path, the permission
// the route declares, its TypeBox schemas, and whether it reads its own (multipart) body. Derived from the
// running app (Elysia's `app.routes`), so a route added by any plugin is covered without a hand-written list.
import type { TSchema } from '@sinclair/typebox'
import type { App } from '../server/app'
import { isOwnBody } from '../server/http/body'

export interface RouteInfo {
  method: string
  /** As registered, e.g. `/api/users/:id` (no trailing slash). */
  path: string
  /** `METHOD path`, the key of PUBLIC_ROUTES and of the security matrix. */
  key: string
  /** The `x-permission` the route's `access:` declares; undefined for public routes. */
  permission: string | undefined
  /** The route also takes the JWT from cookie `token` (`x-cookie`). */
  cookie: boolean
  body: TSchema | undefined
  query: TSchema | undefined
  params: TSchema | undefined
  /** Names of the path parameters, in order (`:id`, `:gid` → ['id', 'gid']). */
  paramNames: string[]
  /** The route parses its own body (a route-level parser: multipart uploads streamed to the blob store). */
  upload: boolean
  /** The route reads its own body in its protocol's format (server/http/body.ts ownBody: the shippers' protocols). */
  ownBody: boolean
}

interface Hooks {
  detail?: Record<string, unknown>
  body?: TSchema
  query?: TSchema
  params?: TSchema
  parse?: { scope?: string; fn?: unknown }[] | { scope?: string; fn?: unknown }
}

export function apiRoutes(app: App): RouteInfo[] {
  return app.routes.map((r) => {
    const hooks = r.hooks as Hooks
    const path = r.path.length > 1 ? r.path.replace(/\/$/, '') : r.path
    const parsers = hooks.parse === undefined ? [] : Array.isArray(hooks.parse) ? hooks.parse : [hooks.parse]
    return {
      method: r.method,
      path,
      key: `${r.method} ${path}`,
      permission: hooks.detail?.['x-permission'] as string | undefined,
      cookie: hooks.detail?.['x-cookie'] === true,
      body: hooks.body,
      query: hooks.query,
      params: hooks.params,
      paramNames: [...path.matchAll(/:(\w+)/g)].map((m) => m[1]!),
      // The global body parser is registered with scope 'global'; a parser without it belongs to the route.
      upload: parsers.some((p) => p.scope !== 'global' && !isOwnBody(p.fn)),
      ownBody: parsers.some((p) => isOwnBody(p.fn)),
    }
  })
}
