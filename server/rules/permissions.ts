// The one permission list: exactly the names the existing clients know, and no others (a client checks every
// listed name against its own list, so one name of ours breaks it). Every route declares
// exactly one Access key built from this list, so a typo fails to compile and tokens (a later issue) can
// be checked against the same key the route declares.

interface CapabilityInfo {
  Desc: string
  Category: string
}

/** A read/write pair of capabilities, typed by name so that `DashboardRead` is a Capability. */
const pair = <N extends string, C extends string>(noun: N, category: C) =>
  ({
    [`${noun}Read`]: { Desc: `Read ${category.toLowerCase()}`, Category: category },
    [`${noun}Write`]: { Desc: `Create, change and delete ${category.toLowerCase()}`, Category: category },
  }) as Record<`${N}Read` | `${N}Write`, { Desc: string; Category: C }>

export const CAPABILITIES = {
  ...pair('Dashboard', 'Dashboards'),
  ...pair('Resource', 'Resources'),
  ...pair('Template', 'Templates'),
  ...pair('Pivot', 'Pivots'),
  ...pair('Macro', 'Macros'),
  ...pair('Library', 'Query Library'),
  ...pair('Extractor', 'Extractors'),
  ...pair('UserFile', 'Files'),
  ...pair('Kit', 'Kits'),
  ...pair('Schedule', 'Scheduled Searches'),
  ...pair('Playbook', 'Playbooks'),
  ...pair('Notification', 'Notifications'),
  ...pair('Token', 'Tokens'),
  ...pair('Secret', 'Secrets'),
  ...pair('Alert', 'Alerts'),
  Search: { Desc: 'Launch searches', Category: 'Search' },
  Download: { Desc: 'Download search results', Category: 'Search' },
  SaveSearch: { Desc: 'Save searches', Category: 'Search' },
  AttachSearch: { Desc: 'Attach to searches and list them', Category: 'Search' },
  BackgroundSearch: { Desc: 'Background searches', Category: 'Search' },
  SetSearchGroup: { Desc: 'Set the default search group', Category: 'Search' },
  SearchHistory: { Desc: 'Read own search history', Category: 'Search' },
  SearchGroupHistory: { Desc: 'Read the search history of own groups', Category: 'Search' },
  SearchAllHistory: { Desc: 'Read the search history of all users', Category: 'Search' },
  KitBuild: { Desc: 'Build kits', Category: 'Kits' },
  KitDownload: { Desc: 'Download kits', Category: 'Kits' },
  SOARLibs: { Desc: 'Use SOAR libraries', Category: 'Playbooks' },
  SOAREmail: { Desc: 'Send email from playbooks', Category: 'Playbooks' },
  LicenseRead: { Desc: 'Read license information', Category: 'System and Stats' },
  Stats: { Desc: 'Read system statistics', Category: 'System and Stats' },
  Ingest: { Desc: 'Ingest entries', Category: 'System and Stats' },
  ListUsers: { Desc: 'List users', Category: 'Users and Groups' },
  ListGroups: { Desc: 'List groups', Category: 'Users and Groups' },
  ListGroupMembers: { Desc: 'List the members of groups', Category: 'Users and Groups' },
  SystemInfoRead: { Desc: 'Read system information', Category: 'System and Stats' },
} as const satisfies Record<string, CapabilityInfo>

export type Capability = keyof typeof CAPABILITIES
export const CAPABILITY_NAMES = Object.keys(CAPABILITIES) as Capability[]

/**
 * What a route needs:
 * - a Capability: an authenticated caller whose rights include it;
 * - 'self': any authenticated caller, any API token included, whatever permissions it lists. Only for reads
 *   that show a token nothing but who it acts for and facts of the server that are the same for everyone
 *   (testauth, whoami, settings, the permission lists: SELF_ROUTES); every route touching the owner's data declares a
 *   Capability, which every user holds, so that a token needs it there (docs/security.md);
 * - 'session': a caller logged in with a session, never an API token (the session itself and the account:
 *   logout, refresh, password, account changes, session list, and the preferences, the UI state of the person
 *   logged in, for which the clients' permission list has no name);
 * - 'admin': an admin logged in with a session (never a token, docs/api.md "API tokens").
 * Public routes declare no access at all and are listed in PUBLIC_ROUTES.
 */
export type AccessKey = Capability | 'self' | 'session' | 'admin'

export interface AccessSpec {
  key: AccessKey
  /** The 3-second download session of GET /api/login/tmptoken is accepted here. */
  download?: boolean
  /** The JWT is also accepted in cookie `token` (download routes and search import). */
  cookie?: boolean
  /**
   * Letting go of what the caller itself holds (detaching its own client from a search): a token without the key is
   * admitted all the same, marked so (plugins/auth/guard.ts releaseOnly), and the route must then refuse with the
   * key's 403 anything but the caller's own attachment. A client may always leave what it attached, whatever its
   * token lists: otherwise a token that may launch but not detach leaves every search it launched attached.
   */
  releaseOwn?: boolean
  /**
   * An API token is also accepted the ways log shippers send one (ingest routes only): `Authorization: Bearer <token>`
   * (a value that is not a JWT), `Authorization: Basic` with the token as the password (any user name), and
   * `Authorization: Splunk <token>` (Splunk's HTTP Event Collector). Such a credential is always a token, never a
   * session, so it reaches nothing a token could not.
   */
  shipper?: boolean
}

export type Access = AccessKey | AccessSpec

export function accessSpec(access: Access): AccessSpec {
  return typeof access === 'string' ? { key: access } : access
}

/** The routes that declare 'self': open to every token (see AccessKey); a new one must be added here knowingly. */
export const SELF_ROUTES: ReadonlySet<string> = new Set([
  'GET /api/testauth',
  'GET /api/info/whoami',
  'GET /api/settings',
  'GET /api/tokens/capabilities',
  'GET /api/info/capabilities',
  'GET /api/info/searchmodules',
  'GET /api/info/rendermodules',
])

/** Routes that answer without authentication: "METHOD path" as registered. */
export const PUBLIC_ROUTES = new Set([
  'GET /api/test',
  'GET /api/health',
  'GET /api/health/ready',
  'GET /api/version',
  'POST /api/login',
  'GET /api/docs',
  'GET /api/docs/json',
  'GET /api/docs/scalar-1.72.1.js',
  // the web console's page and its hashed files (plugins/console): it holds no data; everything it shows comes
  // from the API under the signed-in person's own rights
  'GET /',
  'GET /assets/:name',
  // no user authentication: guarded by its own QUARRY_METRICS_TOKEN when set (plugins/metrics)
  'GET /metrics',
  // Splunk HEC's health check, which load balancers and shippers call without a token; it says only that HEC is up
  'GET /api/ingest/splunk/services/collector/health',
  'GET /api/ingest/splunk/services/collector/health/:version',
])

/**
 * Whether a logged-in user's own rights include a capability. Every user holds every user-level
 * capability; reading all users' search history is an admin's.
 */
export function userHolds(user: { admin: boolean }, cap: Capability): boolean {
  return cap === 'SearchAllHistory' ? user.admin : true
}

export function isCapability(name: string): name is Capability {
  return Object.hasOwn(CAPABILITIES, name)
}

/** Every capability of a category (`Dashboards`, `Search`, ...), for choosing permissions as a group. */
export function capabilitiesOf(category: string): Capability[] {
  return CAPABILITY_NAMES.filter((c) => CAPABILITIES[c].Category === (category as string))
}
