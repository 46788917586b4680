// The store every plugin reaches its data through: one repository per area behind a narrow, async
// interface, so that a PostgreSQL-backed store can stand in for the SQLite one without touching plugins.
// Repository methods that change several rows do so in one transaction of their own.
import type { Database } from 'bun:sqlite'
import { openDatabase } from './db'
import { SqliteUsersRepo, type UsersRepo } from '../plugins/users/repo'
import { SqliteGroupsRepo, type GroupsRepo } from '../plugins/groups/repo'
import { SqliteSessionsRepo, type SessionsRepo } from '../plugins/auth/repo'
import { SqliteSettingsRepo, type SettingsRepo } from '../plugins/system/repo'

export interface Store {
  users: UsersRepo
  groups: GroupsRepo
  sessions: SessionsRepo
  settings: SettingsRepo
  close(): void
}

/** Raised by a repository when a write would break a uniqueness rule (a taken name). */
export class UniqueViolation extends Error {}

/** Runs a write and turns SQLite's unique-constraint failure into UniqueViolation. */
export function uniqueWrite<T>(write: () => T): T {
  try {
    return write()
  } catch (e) {
    if (e instanceof Error && (e as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw new UniqueViolation(e.message)
    throw e
  }
}

export function createSqliteStore(path: string): Store & { db: Database } {
  const db = openDatabase(path)
  return {
    db,
    users: new SqliteUsersRepo(db),
    groups: new SqliteGroupsRepo(db),
    sessions: new SqliteSessionsRepo(db),
    settings: new SqliteSettingsRepo(db),
    close: () => db.close(),
  }
}
