// The PostgreSQL store: the same Store as createSqliteStore, over one Bun.SQL pool shared by every repository.
// Migrations run at open, once per cluster (see migratePg).
import { type PgPool, migratePg, openPg } from './store/pg'
import type { Store } from './repos'
import { PgClusterRepo } from './cluster/repo.pg'
import { PgUsersRepo } from '../plugins/users/repo.pg'
import { PgGroupsRepo } from '../plugins/groups/repo.pg'
import { PgSessionsRepo } from '../plugins/auth/repo.pg'
import { PgSettingsRepo } from '../plugins/system/repo.pg'
import { PgTokensRepo } from '../plugins/tokens/repo.pg'
import { PgResourcesRepo } from '../plugins/resources/repo.pg'
import { PgFilesRepo } from '../plugins/files/repo.pg'
import { PgEntriesRepo } from './search/entries.pg'
import { PgSegmentsRepo } from './search/segments.pg'
import { PgRemovalRepo } from './search/retention-repo.pg'
import { PgSearchesRepo } from './search/repo.pg'
import { PgDashboardsRepo } from '../plugins/dashboards/repo.pg'
import { PgLibraryRepo } from '../plugins/library/repo.pg'
import { PgQuotaRepo } from './store/quota.pg'
import { PgNotificationsRepo } from '../plugins/notifications/repo.pg'
import { PgLeasesRepo } from './store/leases.pg'
import { PgAutoExtractorsRepo } from '../plugins/autoextractors/repo.pg'

export interface PgStoreOptions {
  /** Connections in the pool (10). */
  max?: number
}

/** Builds the store's repositories over an open pool (already migrated). */
export function pgStoreOn(sql: PgPool): Store & { sql: PgPool } {
  return {
    sql,
    users: new PgUsersRepo(sql),
    groups: new PgGroupsRepo(sql),
    sessions: new PgSessionsRepo(sql),
    settings: new PgSettingsRepo(sql),
    tokens: new PgTokensRepo(sql),
    resources: new PgResourcesRepo(sql),
    files: new PgFilesRepo(sql),
    entries: new PgEntriesRepo(sql),
    segments: new PgSegmentsRepo(sql),
    removal: new PgRemovalRepo(sql),
    searches: new PgSearchesRepo(sql),
    dashboards: new PgDashboardsRepo(sql),
    library: new PgLibraryRepo(sql),
    autoextractors: new PgAutoExtractorsRepo(sql),
    quota: new PgQuotaRepo(sql),
    notifications: new PgNotificationsRepo(sql),
    cluster: new PgClusterRepo(sql),
    leases: new PgLeasesRepo(sql),
    kind: 'pg',
    close: () => sql.close(),
  }
}

/**
 * Opens the PostgreSQL store at `url` (postgres://user:pass@host:port/db), checks the server answers and applies
 * the missing migrations. Rejects with one clear line when the URL is bad or the server does not answer.
 */
export async function createPgStore(url: string, options: PgStoreOptions = {}): Promise<Store & { sql: PgPool }> {
  const sql = await openPg(url, options)
  try {
    await migratePg(sql)
  } catch (e) {
    await sql.close().catch(() => {})
    throw e
  }
  return pgStoreOn(sql)
}
