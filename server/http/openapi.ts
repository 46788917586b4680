// What the OpenAPI document says about the API that no route schema holds: the API areas (one tag each, declared
// by each plugin with `detail: area(...)`), and the `{"Error"}` body of every refusal with the statuses a route
// declares beside its success schema (`response: { 200: X, ...refusals(404, 409) }`). The document itself is
// built from the assembled app by plugins/system/docs.ts.
import { t } from 'elysia'
import type { TSchema } from '@sinclair/typebox'

/** The API areas, each with the sentence the document shows for its tag. One plugin declares each. */
export const AREAS = {
  System: 'Liveness, readiness, version and server settings: what a client or a load balancer checks first.',
  'Login and sessions': 'Exchange a user name and password for a JWT, renew it, get a download token, and log out.',
  Users: 'Accounts: who you are, account administration, passwords, locks, admin status, search group, preferences and sessions.',
  Groups: 'Groups of users, which items are shared with and default search groups point at.',
  'API tokens': 'Restricted, optionally expiring tokens that let scripts call the user-level APIs without a login.',
  Resources: 'Named blobs with metadata, versions and group sharing, for lookups and other search modules.',
  'User files': 'Small files (icons, images) addressed by GUID or ThingUUID, with ownership and sharing.',
  Ingest: 'Entries sent to the embedded search engine, where searches find them.',
  'Retention and deletion': 'How long ingested entries are kept, per tag and store-wide, and the deletion of a tag\'s entries in a time range (admins only).',
  Searches: 'Launch searches on the embedded engine, then inspect, background, save, stop, download, export and import them.',
  Stats: 'Status and host facts of the web server and the embedded engine.',
  WebSockets: 'The clients\' live protocols: search launch and results, and periodic system status.',
  Notifications: 'Messages to yourself, to a user, to a group or to everyone, shown by the GUI.',
  Dashboards: 'JSON dashboard definitions the GUI renders, with sharing by group or globally.',
  'Search library': 'Saved search queries with names, labels, free-form metadata and sharing.',
  'Auto-extractors': 'Per-tag extraction definitions the ax module applies, with sharing, a syntax check and TOML definition files.',
  Metrics: 'Prometheus metrics of the server, for monitoring.',
} as const

export type Area = keyof typeof AREAS

/** The `detail` of a plugin's Elysia instance: every route of that plugin carries the area's tag. */
export const area = (name: Area) => ({ tags: [name] as string[] })

/**
 * The body of every refusal (docs/api.md "Conventions"): `Error` always; `Cap` names a missing token permission (403),
 * `Position` the offset of a search query's problem (400).
 */
export const ErrorBody = t.Object(
  {
    Error: t.String({ description: 'a human-readable reason' }),
    Cap: t.Optional(t.String({ description: 'the permission the caller lacks (403 for a token without it)' })),
    Position: t.Optional(t.Integer({ description: 'the 0-based character offset of a search query\'s problem (400)' })),
  },
  { description: 'A refusal' },
)

/**
 * The success schema of a route whose handler writes its JSON text itself (server/http/raw-json.ts: members kept byte
 * for byte), for the route's `detail`: the document shows it; Elysia cannot check a text it did not serialise,
 * but every answer the test suite gets is checked against it (test/documented.ts).
 */
export const rawAnswer = (schema: TSchema) => ({ 'x-raw-answer': schema })

/** Response schemas of the statuses a route refuses with, beside the generic ones the document derives. */
export function refusals<const S extends number>(...statuses: S[]): Record<S, typeof ErrorBody> {
  return Object.fromEntries(statuses.map((s) => [s, ErrorBody])) as Record<S, typeof ErrorBody>
}
