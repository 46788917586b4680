import { t } from 'elysia'

export const LoginBody = t.Object({ User: t.String({ maxLength: 1024 }), Pass: t.String({ maxLength: 1024 }) })

export const LoginSuccess = t.Object({
  LoginStatus: t.Literal(true),
  JWT: t.String(),
  Admin: t.Boolean(),
  MFARequired: t.Boolean(),
  MFASetupRequired: t.Boolean(),
})

export const LoginFailure = t.Object({ LoginStatus: t.Literal(false), Reason: t.String() })

/** 429 of the login throttle: a login failure that also carries the `Error` every refusal has (docs/api.md). */
export const LoginThrottled = t.Object({ LoginStatus: t.Literal(false), Reason: t.String(), Error: t.String() })

export const TempToken = t.Object({ LoginStatus: t.Literal(true), JWT: t.String() })

export const SessionItem = t.Object({ Origin: t.String(), LastHit: t.String(), TempSession: t.Boolean(), Synced: t.Boolean() })

export const SessionList = t.Object({ UID: t.Integer(), User: t.String(), Sessions: t.Array(SessionItem) })

export const Empty = t.Object({})
