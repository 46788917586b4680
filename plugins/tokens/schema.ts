import { t } from 'elysia'
import { formatTime } from '../../server/runtime/time'
import type { TokenRow } from './repo'
import { OptionalText } from '../../server/http/wire'

/** The token record of docs/api.md "API tokens" (wire names in camelCase, as the published clients use them). */
export const TokenRecord = t.Object({
  id: t.String(),
  name: t.String(),
  description: t.String(),
  uid: t.Integer(),
  createdAt: t.String(),
  expiresAt: t.String(),
  capabilities: t.Array(t.String()),
})

/** Create and refresh answers: the record and, this once, the secret. */
export const TokenWithSecret = t.Composite([TokenRecord, t.Object({ token: t.String() })])

const TokenName = t.String({ minLength: 1, maxLength: 256, pattern: '\\S' })
const Description = t.String({ maxLength: 4096 })
const Names = t.Array(t.String({ maxLength: 64 }), { maxItems: 256 })
/** RFC 3339 with any offset; null, "" or absent: never expires. */
const ExpiresAt = t.Union([t.String({ maxLength: 64 }), t.Null()])

export const CreateTokenBody = t.Object({
  name: TokenName,
  description: OptionalText(Description),
  /** Permission names, chosen singly. */
  capabilities: t.Optional(Names),
  /** Permission groups by category (`Dashboards`, `Search`, ...), each adding all its permissions. */
  categories: t.Optional(Names),
  expiresAt: t.Optional(ExpiresAt),
})

/**
 * Absent fields keep their value, and so does an empty (or null) name; the secret cannot be changed here (a
 * refresh makes a new one). The js-client sends the whole token back, with `id` and a null description.
 */
export const UpdateTokenBody = t.Object({
  name: OptionalText(t.Union([t.Literal(''), TokenName])),
  description: OptionalText(Description),
  capabilities: t.Optional(Names),
  categories: t.Optional(Names),
  expiresAt: t.Optional(ExpiresAt),
})

export const RefreshTokenBody = t.Object({ expiresAt: t.Optional(ExpiresAt) })

export const TokenParams = t.Object({ id: t.String({ format: 'uuid' }) })

export const CapabilityInfo = t.Object({ Name: t.String(), Desc: t.String(), Category: t.String() })

export function toTokenRecord(token: TokenRow) {
  return {
    id: token.id,
    name: token.name,
    description: token.description,
    uid: token.uid,
    createdAt: formatTime(token.created),
    expiresAt: formatTime(token.expires),
    capabilities: [...token.capabilities],
  }
}
