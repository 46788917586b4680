// Versioned migrations, applied in order at start inside one transaction each. Append only: a released
// migration is never edited; a change to the schema is a new entry.
import core from './001_core'
import tokens from './002_tokens'
import resources from './003_resources'
import files from './004_files'
import entries from './007_entries'
import searches from './008_searches'
import dashboards from './005_dashboards'
import library from './006_library'
import searchGid from './009_search_gid'
import quota from './010_quota'
import loginAttempts from './011_login_attempts'
import notifications from './012_notifications'
import replicas from './015_replicas'
import searchRecords from './016_search_records'
import leases from './013_leases'
import segments from './017_segments'
import ingestUsage from './018_ingest_usage'
import autoextractors from './019_autoextractors'
import retention from './023_retention'

export const MIGRATIONS: { version: number; name: string; sql: string }[] = [
  { version: 1, name: 'core', sql: core },
  { version: 2, name: 'tokens', sql: tokens },
  { version: 3, name: 'resources', sql: resources },
  { version: 4, name: 'files', sql: files },
  { version: 5, name: 'dashboards', sql: dashboards },
  { version: 6, name: 'library', sql: library },
  { version: 7, name: 'entries', sql: entries },
  { version: 8, name: 'searches', sql: searches },
  { version: 9, name: 'search_gid', sql: searchGid },
  { version: 10, name: 'quota', sql: quota },
  { version: 11, name: 'login_attempts', sql: loginAttempts },
  { version: 12, name: 'notifications', sql: notifications },
  { version: 13, name: 'leases', sql: leases },
  { version: 15, name: 'replicas', sql: replicas },
  { version: 16, name: 'search_records', sql: searchRecords },
  { version: 17, name: 'segments', sql: segments },
  { version: 18, name: 'ingest_usage', sql: ingestUsage },
  { version: 19, name: 'autoextractors', sql: autoextractors },
  { version: 23, name: 'retention', sql: retention },
]
