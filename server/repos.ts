// Which repositories exist, and the SQLite store that builds them (the PostgreSQL one: ./repos.pg.ts). Part of the
// composition root: it imports every area's repository and nothing below imports it, so the import graph points
// one way (route → repository → server/store/). Each plugin receives the repositories it uses, not this record.
// One repository per area behind a narrow, async interface, so that a PostgreSQL-backed store can stand in for
// the SQLite one without touching plugins. Repository methods that change several rows do so in one transaction
// of their own.
import type { Database } from 'bun:sqlite'
import { openDatabase } from './store/db'
import { SqliteClusterRepo, type ClusterRepo } from './cluster/repo'
import type { BlobReference } from './blob/sweep'
import { searchBlobKeys } from './search/repo'
import { SqliteUsersRepo, type UsersRepo } from '../plugins/users/repo'
import { SqliteGroupsRepo, type GroupsRepo } from '../plugins/groups/repo'
import { SqliteSessionsRepo, type SessionsRepo } from '../plugins/auth/repo'
import { SqliteSettingsRepo, type SettingsRepo } from '../plugins/system/repo'
import { SqliteTokensRepo, type TokensRepo } from '../plugins/tokens/repo'
import { SqliteResourcesRepo, type ResourcesRepo } from '../plugins/resources/repo'
import { SqliteFilesRepo, type FilesRepo } from '../plugins/files/repo'
import { SqliteEntriesRepo, type EntriesRepo } from './search/entries'
import { SqliteSegmentsRepo, type SegmentsRepo } from './search/segments'
import { SqliteRemovalRepo, type RemovalRepo } from './search/retention-repo'
import { SqliteSearchesRepo, type SearchesRepo } from './search/repo'
import { SqliteDashboardsRepo, type DashboardsRepo } from '../plugins/dashboards/repo'
import { SqliteLibraryRepo, type LibraryRepo } from '../plugins/library/repo'
import { SqliteQuotaRepo, type QuotaRepo } from './store/quota'
import { SqliteNotificationsRepo, type NotificationsRepo } from '../plugins/notifications/repo'
import { SqliteLeasesRepo, type LeasesRepo } from './store/leases'
import { SqliteAutoExtractorsRepo, type AutoExtractorsRepo } from '../plugins/autoextractors/repo'

export interface Store {
  users: UsersRepo
  groups: GroupsRepo
  sessions: SessionsRepo
  settings: SettingsRepo
  tokens: TokensRepo
  resources: ResourcesRepo
  files: FilesRepo
  /** The embedded engine's ingested entries. */
  entries: EntriesRepo
  /** The sealed segments the entries are compacted into (server/search/segments.ts). */
  segments: SegmentsRepo
  /** Retention rules, deletions and the removal of segments (server/search/retention.ts). */
  removal: RemovalRepo
  /** Saved searches and the search history. */
  searches: SearchesRepo
  dashboards: DashboardsRepo
  library: LibraryRepo
  /** Auto-extractor definitions (the `ax` module). */
  autoextractors: AutoExtractorsRepo
  /** Bytes each user stores, summed over the rows of the areas above (server/store/quota.ts). */
  quota: QuotaRepo
  notifications: NotificationsRepo
  /** The replica registry and the records of the searches each replica holds (server/cluster). */
  cluster: ClusterRepo
  /** Leases of the periodic jobs: which process runs each (server/runtime/jobs.ts). */
  leases: LeasesRepo
  /** Which engine holds the metadata (for messages and for tests that must reach it directly). */
  readonly kind: 'sqlite' | 'pg'
  /** Ends the store's connections; pending queries finish first. */
  close(): Promise<void>
}

/** Every blob key the metadata points at, from each area that keeps contents in the blob store. */
export async function blobReferences(store: Store): Promise<BlobReference[]> {
  // A search being saved writes its blobs before its row says 'saved' (a start after a crash writes them again):
  // they are kept, though nothing points at them yet, and may not exist yet.
  const saving = (await store.searches.listSaved()).filter((r) => r.state === 'saving')
  return [
    ...(await store.resources.blobReferences()),
    ...(await store.files.blobReferences()),
    ...(await store.searches.blobReferences()),
    ...(await store.segments.blobReferences()),
    ...saving.flatMap((r) => Object.values(searchBlobKeys(r.id)).map((key) => ({ key, item: `search ${r.id} (being saved)`, pending: true }))),
  ]
}

export function createSqliteStore(path: string, opts: { migrate?: boolean } = {}): Store & { db: Database } {
  const db = openDatabase(path, opts)
  return {
    db,
    users: new SqliteUsersRepo(db),
    groups: new SqliteGroupsRepo(db),
    sessions: new SqliteSessionsRepo(db),
    settings: new SqliteSettingsRepo(db),
    tokens: new SqliteTokensRepo(db),
    resources: new SqliteResourcesRepo(db),
    files: new SqliteFilesRepo(db),
    entries: new SqliteEntriesRepo(db),
    segments: new SqliteSegmentsRepo(db),
    removal: new SqliteRemovalRepo(db),
    searches: new SqliteSearchesRepo(db),
    dashboards: new SqliteDashboardsRepo(db),
    library: new SqliteLibraryRepo(db),
    autoextractors: new SqliteAutoExtractorsRepo(db),
    quota: new SqliteQuotaRepo(db),
    notifications: new SqliteNotificationsRepo(db),
    cluster: new SqliteClusterRepo(db),
    leases: new SqliteLeasesRepo(db),
    kind: 'sqlite',
    close: async () => db.close(),
  }
}
