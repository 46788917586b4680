// The notifications repository contract on the SQLite store (repo.contract.ts; the PostgreSQL store runs it too).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSqliteStore } from '../../server/repos'
import { notificationsContract } from './repo.contract'

notificationsContract('SQLite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-notifications-'))
  const store = createSqliteStore(join(dir, 'quarry.db'))
  return { store, close: () => (store.close(), rmSync(dir, { recursive: true, force: true })) }
})
