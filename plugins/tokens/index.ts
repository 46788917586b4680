// API tokens (docs/api.md "API tokens"): restricted, optionally expiring credentials for scripts.
// A token is usable until it expires, and stays listed after that until it is refreshed or deleted.
import { Elysia, t } from 'elysia'
import type { Config } from '../../server/runtime/config'
import { Errors } from '../../server/http/errors'
import {
  CAPABILITIES, CAPABILITY_NAMES, type Capability, capabilitiesOf, isCapability, userHolds,
} from '../../server/rules/permissions'
import { parseTime } from '../../server/runtime/time'
import { authGuard } from '../auth/guard'
import { Empty } from '../auth/schema'
import type { AuthService, Caller } from '../auth/service'
import type { TokenRow, TokensRepo } from './repo'
import {
  CapabilityInfo, CreateTokenBody, RefreshTokenBody, TokenParams, TokenRecord, TokenWithSecret, UpdateTokenBody, toTokenRecord,
} from './schema'
import { hashSecret, newSecret } from './secret'
import { area, refusals } from '../../server/http/openapi'
import type { UsersRepo } from '../users/repo'

export interface TokensDeps {
  config: Config
  repos: { users: UsersRepo; tokens: TokensRepo }
  auth: AuthService
  clock: () => number
}

const CATEGORIES: ReadonlySet<string> = new Set(Object.values(CAPABILITIES).map((c) => c.Category))

export function tokensPlugin({ config, repos, auth, clock }: TokensDeps) {
  const { tokens } = repos

  /** The policy switch: with it on, only admins may use the token API. */
  function checkPolicy(caller: Caller) {
    if (config.tokenApiAdminOnly && !caller.user.admin) throw Errors.forbidden('the token API is disabled for non-admin users')
  }

  /** A token the caller may see and manage: their own, or any for an admin with a session; 404 otherwise. */
  async function visible(caller: Caller, id: string): Promise<TokenRow> {
    checkPolicy(caller)
    const token = await tokens.get(id.toLowerCase())
    if (!token || (token.uid !== caller.uid && !caller.admin)) throw Errors.notFound('token')
    return token
  }

  /**
   * The permissions a request asks for, singly and by category, checked against the owner's own rights and, when
   * a token is asking, against that token's: a token can only restrict, never grant (docs/api.md "API tokens"), and a
   * token cannot make or change a token into one that may do more than itself.
   */
  function permissionsOf(caller: Caller, owner: Caller['user'], body: { capabilities?: string[]; categories?: string[] }): Capability[] {
    const holds = (cap: Capability) => userHolds(owner, cap) && (!caller.token || caller.token.capabilities.includes(cap))
    const chosen = new Set<Capability>()
    for (const name of body.capabilities ?? []) {
      if (!isCapability(name)) throw Errors.badRequest(`unknown permission ${JSON.stringify(name).slice(0, 70)}`)
      chosen.add(name)
    }
    // Permissions named singly must all be held; a group gives those of its permissions that are.
    for (const cap of chosen) if (!holds(cap)) throw Errors.missingPermission(cap)
    for (const category of body.categories ?? []) {
      if (!CATEGORIES.has(category)) throw Errors.badRequest(`unknown permission group ${JSON.stringify(category).slice(0, 70)}`)
      for (const cap of capabilitiesOf(category)) if (holds(cap)) chosen.add(cap)
    }
    if (chosen.size === 0) throw Errors.badRequest('a token needs at least one permission (capabilities or categories)')
    return CAPABILITY_NAMES.filter((c) => chosen.has(c))
  }

  /**
   * Expiry from the wire: 0 for never. A time already past is refused on create and refresh; `pastAllowed` (PUT)
   * takes it, and the token is then expired and stays listed (docs/api.md "API tokens"; the js-client sets "now").
   */
  function expiryOf(value: string | null | undefined, pastAllowed = false): number {
    const ms = parseTime(value)
    if (ms === undefined) throw Errors.badRequest('expiresAt must be an RFC 3339 time')
    if (!pastAllowed && ms !== 0 && ms <= clock()) throw Errors.badRequest('expiresAt must be in the future')
    return ms
  }

  /**
   * A token may not outlive the token that sets its expiry (docs/api.md "API tokens"): an expiring token sets neither
   * "never" nor a time past its own end, on itself or on a token it makes, changes or refreshes. A time already past is
   * no extension and is left to expiryOf.
   */
  function checkOutlives(caller: Caller, expires: number) {
    const own = caller.token?.expires
    if (own === undefined || own === 0) return
    if (expires === 0 || expires > own) throw Errors.forbidden('a token may not set an expiry later than its own (or none)')
  }

  /**
   * Refreshing answers the token's new secret: a token may refresh only tokens that can do nothing it cannot, so
   * that it cannot trade itself for a stronger credential of the same owner.
   */
  function checkNotStronger(caller: Caller, target: TokenRow) {
    if (!caller.token) return
    for (const cap of target.capabilities) if (!caller.token.capabilities.includes(cap)) throw Errors.missingPermission(cap)
  }

  return new Elysia({ name: 'quarry-tokens', detail: area('API tokens') })
    .use(authGuard(auth))
    .get(
      '/api/tokens',
      async ({ caller, query }) => {
        checkPolicy(caller)
        const all = query.admin === 'true' && caller.admin
        return (all ? await tokens.listAll() : await tokens.listForUser(caller.uid)).map(toTokenRecord)
      },
      {
        access: 'TokenRead',
        query: t.Object({ admin: t.Optional(t.String()) }),
        response: t.Array(TokenRecord),
        detail: { summary: 'List your API tokens', description: 'With `?admin=true` an admin gets every token. Secrets are never listed.' },
      },
    )
    .post(
      '/api/tokens',
      async ({ caller, body }) => {
        checkPolicy(caller)
        const secret = newSecret()
        const token: TokenRow = {
          id: crypto.randomUUID(),
          uid: caller.uid,
          name: body.name,
          description: body.description ?? '',
          capabilities: permissionsOf(caller, caller.user, body),
          created: clock(),
          expires: expiryOf(body.expiresAt),
        }
        checkOutlives(caller, token.expires)
        await tokens.create(token, hashSecret(secret))
        return { ...toTokenRecord(token), token: secret }
      },
      { access: 'TokenWrite', body: CreateTokenBody, response: TokenWithSecret, detail: { summary: 'Create an API token', description: 'The secret (`token`) is in this answer only; store it.' } },
    )
    .get('/api/tokens/capabilities', ({ caller }) => (checkPolicy(caller), CAPABILITY_NAMES), {
      access: 'self',
      // 403 when the token API is closed to non-admins (QUARRY_TOKEN_API_ADMIN_ONLY)
      response: { 200: t.Array(t.String()), ...refusals(403) },
      detail: { summary: 'List the permission names a token may hold' },
    })
    .get(
      '/api/info/capabilities',
      () => CAPABILITY_NAMES.map((name) => ({ Name: name, Desc: CAPABILITIES[name].Desc, Category: CAPABILITIES[name].Category })),
      { access: 'self', response: t.Array(CapabilityInfo), detail: { summary: 'List permissions with descriptions and groups' } },
    )
    .get('/api/tokens/:id', async ({ caller, params }) => toTokenRecord(await visible(caller, params.id)), {
      access: 'TokenRead',
      params: TokenParams,
      response: TokenRecord,
      detail: { summary: 'Get one API token', description: 'Your own; admins any.' },
    })
    .put(
      '/api/tokens/:id',
      async ({ caller, params, body }) => {
        const token = await visible(caller, params.id)
        const owner = token.uid === caller.uid ? caller.user : await repos.users.get(token.uid)
        if (!owner) throw Errors.notFound('token')
        const changes = {
          name: body.name || undefined,
          description: body.description,
          capabilities: body.capabilities !== undefined || body.categories !== undefined ? permissionsOf(caller, owner, body) : undefined,
          expires: body.expiresAt !== undefined ? expiryOf(body.expiresAt, true) : undefined,
        }
        if (changes.expires !== undefined) checkOutlives(caller, changes.expires)
        await tokens.update(token.id, changes)
        if (changes.expires !== undefined) auth.tokenExpiryChanged(token.id, changes.expires)
        return toTokenRecord((await tokens.get(token.id))!)
      },
      {
        access: 'TokenWrite',
        params: TokenParams,
        body: UpdateTokenBody,
        response: TokenRecord,
        detail: { summary: 'Change an API token', description: 'Name, description, expiry or permissions; never the secret.' },
      },
    )
    .patch(
      '/api/tokens/:id',
      async ({ caller, params, body }) => {
        const token = await visible(caller, params.id)
        const expires = expiryOf(body.expiresAt)
        checkOutlives(caller, expires)
        checkNotStronger(caller, token)
        const secret = newSecret()
        await tokens.replaceSecret(token.id, hashSecret(secret), expires)
        // The same token (same id) under a new secret: what it is attached to stays, with its new expiry.
        auth.tokenExpiryChanged(token.id, expires)
        return { ...toTokenRecord({ ...token, expires }), token: secret }
      },
      {
        access: 'TokenWrite',
        params: TokenParams,
        body: RefreshTokenBody,
        response: TokenWithSecret,
        detail: { summary: 'Refresh an API token: new expiry and new secret', description: 'The new secret is in this answer only; the old one stops working.' },
      },
    )
    .delete(
      '/api/tokens/:id',
      async ({ caller, params }) => {
        const { id } = await visible(caller, params.id)
        await tokens.delete(id)
        auth.tokensEnded([id])
        return {}
      },
      { access: 'TokenWrite', params: TokenParams, response: Empty, detail: { summary: 'Delete an API token' } },
    )
}
