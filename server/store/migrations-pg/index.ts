// The PostgreSQL dialect of server/store/migrations: the same versions, tables, columns and meaning, written for
// PostgreSQL. Append only, in step with server/store/migrations (a new SQLite migration gets its PostgreSQL twin
// under the same version). Dialect differences, kept explicit:
// - times, sizes and dashboard ids are BIGINT (Bun.SQL answers them as strings; the repos map them to numbers);
// - flags are BOOLEAN; entry bytes are BYTEA;
// - SQLite's INTEGER PRIMARY KEY AUTOINCREMENT (UIDs, GIDs) is a counter row in id_sequences, taken in the
//   inserting transaction: ids start at 1, are never reused, and a failed insert (a taken name) rolls the counter
//   back with it, so the numbers are exactly SQLite's (an identity column would skip one per failed insert);
// - SQLite's COLLATE NOCASE on names (ASCII-only case folding) is a unique index on lower(name COLLATE "C"),
//   which folds ASCII letters only, exactly as NOCASE does;
// - text that listings order by is COLLATE "C" (byte order, as SQLite's BINARY), whatever the database locale;
// - SQLite's triggers are trigger functions.
import notifications from './012_notifications'
import leases from './013_leases'

export const PG_MIGRATIONS: { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: 'core',
    sql: /* sql */ `
CREATE TABLE id_sequences (
  name TEXT COLLATE "C" PRIMARY KEY,
  last INTEGER NOT NULL
);
INSERT INTO id_sequences (name, last) VALUES ('users', 0), ('groups', 0);

CREATE TABLE groups (
  gid         INTEGER PRIMARY KEY,
  name        TEXT COLLATE "C" NOT NULL,
  description TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX groups_name ON groups (lower(name));

CREATE TABLE users (
  uid           INTEGER PRIMARY KEY,
  username      TEXT COLLATE "C" NOT NULL,
  name          TEXT NOT NULL,
  email         TEXT NOT NULL,
  password_hash TEXT NOT NULL,
  admin         BOOLEAN NOT NULL DEFAULT false,
  locked        BOOLEAN NOT NULL DEFAULT false,
  default_gid   INTEGER REFERENCES groups(gid) ON DELETE SET NULL,
  last_active   BIGINT NOT NULL DEFAULT 0,
  created       BIGINT NOT NULL
);
CREATE UNIQUE INDEX users_username ON users (lower(username));

CREATE TABLE user_groups (
  uid INTEGER NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  gid INTEGER NOT NULL REFERENCES groups(gid) ON DELETE CASCADE,
  PRIMARY KEY (uid, gid)
);
CREATE INDEX user_groups_gid ON user_groups(gid);

CREATE TABLE sessions (
  id       TEXT COLLATE "C" PRIMARY KEY,
  uid      INTEGER NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  created  BIGINT NOT NULL,
  last_hit BIGINT NOT NULL,
  expires  BIGINT NOT NULL,
  origin   TEXT NOT NULL,
  temp     BOOLEAN NOT NULL DEFAULT false
);
CREATE INDEX sessions_uid ON sessions(uid);

CREATE TABLE preferences (
  uid     INTEGER NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  name    TEXT COLLATE "C" NOT NULL,
  data    TEXT NOT NULL,
  updated BIGINT NOT NULL,
  PRIMARY KEY (uid, name)
);

-- username holds lower(name COLLATE "C"): the NOCASE key of SQLite.
CREATE TABLE login_failures (
  username     TEXT COLLATE "C" PRIMARY KEY,
  failures     INTEGER NOT NULL,
  window_start BIGINT NOT NULL
);

CREATE TABLE server_settings (
  key   TEXT COLLATE "C" PRIMARY KEY,
  value TEXT NOT NULL
);
`,
  },
  {
    version: 2,
    name: 'tokens',
    sql: /* sql */ `
CREATE TABLE tokens (
  secret_hash  TEXT COLLATE "C" PRIMARY KEY,
  id           TEXT COLLATE "C" NOT NULL UNIQUE,
  uid          INTEGER NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  name         TEXT NOT NULL,
  description  TEXT NOT NULL DEFAULT '',
  capabilities TEXT NOT NULL,
  created      BIGINT NOT NULL,
  expires      BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX tokens_uid ON tokens(uid);
`,
  },
  {
    version: 3,
    name: 'resources',
    sql: /* sql */ `
CREATE TABLE resources (
  guid        TEXT COLLATE "C" PRIMARY KEY,
  uid         INTEGER NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  name        TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  global      BOOLEAN NOT NULL DEFAULT false,
  version     BIGINT NOT NULL DEFAULT 0,
  size        BIGINT NOT NULL DEFAULT 0,
  hash        TEXT NOT NULL DEFAULT '',
  blob_key    TEXT,
  modified    BIGINT NOT NULL,
  domain      BIGINT NOT NULL DEFAULT 0,
  labels      TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX resources_uid ON resources(uid);
CREATE INDEX resources_global ON resources(global) WHERE global;

CREATE TABLE resource_acl (
  guid TEXT COLLATE "C" NOT NULL REFERENCES resources(guid) ON DELETE CASCADE,
  gid  INTEGER NOT NULL,
  PRIMARY KEY (guid, gid)
);
CREATE INDEX resource_acl_gid ON resource_acl(gid);

CREATE FUNCTION resource_acl_group_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM resource_acl WHERE gid = OLD.gid;
  RETURN NULL;
END $$;
CREATE TRIGGER resource_acl_group_deleted AFTER DELETE ON groups FOR EACH ROW EXECUTE FUNCTION resource_acl_group_deleted();
`,
  },
  {
    version: 4,
    name: 'files',
    sql: /* sql */ `
CREATE TABLE user_files (
  thing_uuid  TEXT COLLATE "C" PRIMARY KEY,
  guid        TEXT COLLATE "C" NOT NULL,
  uid         INTEGER NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  name        TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '',
  global      BOOLEAN NOT NULL DEFAULT false,
  size        BIGINT NOT NULL DEFAULT 0,
  type        TEXT NOT NULL DEFAULT '',
  labels      TEXT NOT NULL DEFAULT '[]',
  updated     BIGINT NOT NULL,
  blob_key    TEXT NOT NULL
);
CREATE INDEX user_files_guid ON user_files(guid);
CREATE INDEX user_files_uid ON user_files(uid);
CREATE INDEX user_files_global ON user_files(global) WHERE global;

CREATE TABLE user_file_gids (
  thing_uuid TEXT COLLATE "C" NOT NULL REFERENCES user_files(thing_uuid) ON DELETE CASCADE,
  gid        INTEGER NOT NULL,
  PRIMARY KEY (thing_uuid, gid)
);
CREATE INDEX user_file_gids_gid ON user_file_gids(gid);

CREATE FUNCTION user_file_gids_group_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM user_file_gids WHERE gid = OLD.gid;
  RETURN NULL;
END $$;
CREATE TRIGGER user_file_gids_group_deleted AFTER DELETE ON groups FOR EACH ROW EXECUTE FUNCTION user_file_gids_group_deleted();
`,
  },
  {
    version: 5,
    name: 'dashboards',
    sql: /* sql */ `
CREATE TABLE dashboards (
  id          BIGINT PRIMARY KEY,
  guid        TEXT COLLATE "C" NOT NULL,
  uid         INTEGER NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  name        TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '',
  global      BOOLEAN NOT NULL DEFAULT false,
  labels      TEXT NOT NULL DEFAULT '[]',
  data        TEXT NOT NULL DEFAULT '{}',
  created     BIGINT NOT NULL,
  updated     BIGINT NOT NULL
);
CREATE INDEX dashboards_guid ON dashboards(guid);
CREATE INDEX dashboards_uid ON dashboards(uid);
CREATE INDEX dashboards_global ON dashboards(global) WHERE global;

CREATE TABLE dashboard_gids (
  id  BIGINT NOT NULL REFERENCES dashboards(id) ON DELETE CASCADE,
  gid INTEGER NOT NULL,
  PRIMARY KEY (id, gid)
);
CREATE INDEX dashboard_gids_gid ON dashboard_gids(gid);

CREATE FUNCTION dashboard_gids_group_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM dashboard_gids WHERE gid = OLD.gid;
  RETURN NULL;
END $$;
CREATE TRIGGER dashboard_gids_group_deleted AFTER DELETE ON groups FOR EACH ROW EXECUTE FUNCTION dashboard_gids_group_deleted();
`,
  },
  {
    version: 6,
    name: 'library',
    sql: /* sql */ `
CREATE TABLE library (
  thing_uuid  TEXT COLLATE "C" PRIMARY KEY,
  guid        TEXT COLLATE "C" NOT NULL,
  uid         INTEGER NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  name        TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '',
  query       TEXT NOT NULL DEFAULT '',
  global      BOOLEAN NOT NULL DEFAULT false,
  labels      TEXT NOT NULL DEFAULT '[]',
  metadata    TEXT,
  updated     BIGINT NOT NULL
);
CREATE INDEX library_guid ON library(guid);
CREATE INDEX library_uid ON library(uid);
CREATE INDEX library_global ON library(global) WHERE global;

CREATE TABLE library_gids (
  thing_uuid TEXT COLLATE "C" NOT NULL REFERENCES library(thing_uuid) ON DELETE CASCADE,
  gid        INTEGER NOT NULL,
  PRIMARY KEY (thing_uuid, gid)
);
CREATE INDEX library_gids_gid ON library_gids(gid);

CREATE FUNCTION library_gids_group_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM library_gids WHERE gid = OLD.gid;
  RETURN NULL;
END $$;
CREATE TRIGGER library_gids_group_deleted AFTER DELETE ON groups FOR EACH ROW EXECUTE FUNCTION library_gids_group_deleted();
`,
  },
  {
    version: 7,
    name: 'entries',
    sql: /* sql */ `
CREATE TABLE ingest_tags (
  id   INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  name TEXT COLLATE "C" NOT NULL UNIQUE
);

-- The walk of a search follows (ts, tag_id, id); SQLite carries the rowid in every index, PostgreSQL needs it named.
CREATE TABLE entries (
  id     BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  ts     BIGINT NOT NULL,
  tag_id INTEGER NOT NULL REFERENCES ingest_tags(id),
  src    TEXT NOT NULL,
  data   BYTEA NOT NULL
);
CREATE INDEX entries_time_tag ON entries(ts, tag_id, id);
`,
  },
  {
    version: 8,
    name: 'searches',
    sql: /* sql */ `
CREATE TABLE saved_searches (
  id              TEXT COLLATE "C" PRIMARY KEY,
  uid             INTEGER NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  gid             INTEGER NOT NULL DEFAULT 0,
  state           TEXT NOT NULL CHECK (state IN ('saving', 'saved')),
  user_query      TEXT NOT NULL,
  effective_query TEXT NOT NULL,
  start_range     BIGINT NOT NULL,
  end_range       BIGINT NOT NULL,
  started         BIGINT NOT NULL,
  finished        BIGINT NOT NULL,
  last_update     BIGINT NOT NULL,
  store_size      BIGINT NOT NULL,
  index_size      BIGINT NOT NULL,
  item_count      BIGINT NOT NULL,
  metadata        TEXT,
  import          TEXT,
  launch_info     TEXT NOT NULL,
  no_history      BOOLEAN NOT NULL,
  error           TEXT NOT NULL DEFAULT '',
  results_key     TEXT,
  index_key       TEXT
);
CREATE INDEX saved_searches_uid ON saved_searches(uid);

CREATE TABLE search_history (
  id              BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  uid             INTEGER NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  gid             INTEGER NOT NULL DEFAULT 0,
  user_query      TEXT NOT NULL,
  effective_query TEXT NOT NULL,
  launched        BIGINT NOT NULL
);
CREATE INDEX search_history_uid ON search_history(uid, launched);
`,
  },
  {
    version: 9,
    name: 'search_gid',
    // As SQLite's 009: the default search group may name a group that does not exist yet, so it moves to a column
    // without a foreign key; default_gid stays, always NULL, unread (as on SQLite). A deleted group stops being
    // anyone's default search group.
    sql: /* sql */ `
ALTER TABLE users ADD COLUMN search_gid INTEGER;
UPDATE users SET search_gid = default_gid, default_gid = NULL;

CREATE FUNCTION users_search_gid_group_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE users SET search_gid = NULL WHERE search_gid = OLD.gid;
  RETURN NULL;
END $$;
CREATE TRIGGER users_search_gid_group_deleted AFTER DELETE ON groups FOR EACH ROW EXECUTE FUNCTION users_search_gid_group_deleted();
`,
  },
  {
    version: 10,
    name: 'quota',
    // As SQLite's 010: covering indexes for the per-user sums of server/store/quota.ts, and stored_bytes (the bytes of the
    // text members, set by the repos on every write) on dashboards and library entries, filled for existing rows.
    // BIGINT here as every size of this store.
    sql: /* sql */ `
CREATE INDEX resources_uid_size ON resources(uid, size);
CREATE INDEX user_files_uid_size ON user_files(uid, size);
CREATE INDEX saved_searches_uid_state_size ON saved_searches(uid, state, store_size, index_size);

ALTER TABLE dashboards ADD COLUMN stored_bytes BIGINT NOT NULL DEFAULT 0;
UPDATE dashboards SET stored_bytes = octet_length(name) + octet_length(description) + octet_length(labels) + octet_length(data);
CREATE INDEX dashboards_uid_bytes ON dashboards(uid, stored_bytes);

ALTER TABLE library ADD COLUMN stored_bytes BIGINT NOT NULL DEFAULT 0;
UPDATE library SET stored_bytes = octet_length(name) + octet_length(description) + octet_length(query) + octet_length(labels)
  + coalesce(octet_length(metadata), 0);
CREATE INDEX library_uid_bytes ON library(uid, stored_bytes);
`,
  },
  {
    version: 11,
    name: 'login_attempts',
    // As SQLite's 011: the login throttle reserves attempts per subject (an account's UID, or the hash of a user
    // name no account has) before the password is checked; replaces login_failures. window_end is a time in ms.
    sql: /* sql */ `
DROP TABLE login_failures;

CREATE TABLE login_attempts (
  subject    TEXT COLLATE "C" PRIMARY KEY,
  attempts   INTEGER NOT NULL,
  window_end BIGINT NOT NULL
);
CREATE INDEX login_attempts_window_end ON login_attempts(window_end);
`,
  },
  { version: 12, name: 'notifications', sql: notifications },
  { version: 13, name: 'leases', sql: leases },
  {
    version: 15,
    name: 'replicas',
    // As SQLite's 015: the replica registry; times in ms.
    sql: /* sql */ `
CREATE TABLE replicas (
  id          TEXT COLLATE "C" PRIMARY KEY,
  name        TEXT NOT NULL,
  address     TEXT NOT NULL,
  description TEXT NOT NULL,
  started     BIGINT NOT NULL,
  heartbeat   BIGINT NOT NULL
);
CREATE INDEX replicas_heartbeat ON replicas(heartbeat);
`,
  },
  {
    version: 16,
    name: 'search_records',
    // As SQLite's 016: the record of each search a replica holds, by its owner; times in ms.
    sql: /* sql */ `
CREATE TABLE search_records (
  id      TEXT COLLATE "C" PRIMARY KEY,
  owner   TEXT COLLATE "C" NOT NULL,
  uid     INTEGER NOT NULL,
  gid     INTEGER NOT NULL,
  started BIGINT NOT NULL,
  data    TEXT NOT NULL,
  updated BIGINT NOT NULL
);
CREATE INDEX search_records_owner ON search_records(owner);
`,
  },
  {
    version: 17,
    name: 'segments',
    // As SQLite's 017: the sealed segments of entries (server/search/segments.ts); times in ms.
    sql: /* sql */ `
CREATE TABLE entry_segments (
  seq     BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  key     TEXT COLLATE "C" NOT NULL UNIQUE,
  count   INTEGER NOT NULL,
  bytes   BIGINT NOT NULL,
  min_ts  BIGINT NOT NULL,
  min_tag INTEGER NOT NULL,
  min_id  BIGINT NOT NULL,
  max_ts  BIGINT NOT NULL,
  max_tag INTEGER NOT NULL,
  max_id  BIGINT NOT NULL,
  created BIGINT NOT NULL
);
`,
  },
  {
    version: 18,
    name: 'ingest_usage',
    // As SQLite's 018: the bytes each user ingested, for the quota (server/store/quota.ts).
    sql: /* sql */ `
CREATE TABLE ingest_usage (
  uid   INTEGER PRIMARY KEY REFERENCES users(uid) ON DELETE CASCADE,
  bytes BIGINT NOT NULL
);
`,
  },
  {
    version: 19,
    name: 'autoextractors',
    // As SQLite's 019: auto-extractor definitions, their tags a JSON array, their sharing lists.
    sql: /* sql */ `
CREATE TABLE autoextractors (
  uuid        TEXT COLLATE "C" PRIMARY KEY,
  uid         INTEGER NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  name        TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '',
  labels      TEXT NOT NULL DEFAULT '[]',
  global      BOOLEAN NOT NULL DEFAULT false,
  tags        TEXT NOT NULL DEFAULT '[]',
  module      TEXT NOT NULL,
  params      TEXT NOT NULL DEFAULT '',
  args        TEXT NOT NULL DEFAULT '',
  updated     BIGINT NOT NULL
);
CREATE INDEX autoextractors_uid ON autoextractors(uid);
CREATE INDEX autoextractors_global ON autoextractors(global) WHERE global;

CREATE TABLE autoextractor_gids (
  uuid TEXT COLLATE "C" NOT NULL REFERENCES autoextractors(uuid) ON DELETE CASCADE,
  gid  INTEGER NOT NULL,
  PRIMARY KEY (uuid, gid)
);
CREATE INDEX autoextractor_gids_gid ON autoextractor_gids(gid);

CREATE FUNCTION autoextractor_gids_group_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM autoextractor_gids WHERE gid = OLD.gid;
  RETURN NULL;
END $$;
CREATE TRIGGER autoextractor_gids_group_deleted AFTER DELETE ON groups FOR EACH ROW EXECUTE FUNCTION autoextractor_gids_group_deleted();
`,
  },
  {
    version: 23,
    name: 'retention',
    // As SQLite's 023: retention rules, per-segment tag statistics, the journal of unregistered segments, deletion
    // intents and the ingest usage by tag (server/search/retention.ts).
    sql: /* sql */ `
CREATE TABLE retention_rules (
  tag        TEXT COLLATE "C" PRIMARY KEY,
  max_age_ms BIGINT,
  max_bytes  BIGINT,
  updated    BIGINT NOT NULL
);

CREATE TABLE entry_segment_tags (
  seq    BIGINT NOT NULL,
  tag_id INTEGER NOT NULL,
  count  INTEGER NOT NULL,
  bytes  BIGINT NOT NULL,
  min_ts BIGINT NOT NULL,
  max_ts BIGINT NOT NULL,
  PRIMARY KEY (seq, tag_id)
);

CREATE TABLE entry_segment_removals (
  id        BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  key       TEXT COLLATE "C" NOT NULL,
  removed   BIGINT NOT NULL,
  blob_gone BOOLEAN NOT NULL DEFAULT false
);
CREATE INDEX entry_segment_removals_pending ON entry_segment_removals(id) WHERE NOT blob_gone;

CREATE TABLE entry_deletions (
  id       BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  tag      TEXT COLLATE "C" NOT NULL,
  start_ts BIGINT NOT NULL,
  end_ts   BIGINT NOT NULL,
  uid      INTEGER,
  created  BIGINT NOT NULL,
  finished BIGINT,
  deleted  BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE ingest_usage_tags (
  uid    INTEGER NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  tag_id INTEGER NOT NULL,
  bytes  BIGINT NOT NULL,
  PRIMARY KEY (uid, tag_id)
);
`,
  },
]
