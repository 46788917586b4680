// Users, groups, memberships, sessions, preferences, login throttling and server settings.
// Times are integer milliseconds since the epoch; 0 means unset.
export default /* sql */ `
CREATE TABLE users (
  uid           INTEGER PRIMARY KEY AUTOINCREMENT,
  username      TEXT NOT NULL COLLATE NOCASE UNIQUE,
  name          TEXT NOT NULL,
  email         TEXT NOT NULL,
  password_hash TEXT NOT NULL,
  admin         INTEGER NOT NULL DEFAULT 0,
  locked        INTEGER NOT NULL DEFAULT 0,
  default_gid   INTEGER REFERENCES groups(gid) ON DELETE SET NULL,
  last_active   INTEGER NOT NULL DEFAULT 0,
  created       INTEGER NOT NULL
);

CREATE TABLE groups (
  gid         INTEGER PRIMARY KEY AUTOINCREMENT,
  name        TEXT NOT NULL COLLATE NOCASE UNIQUE,
  description TEXT NOT NULL DEFAULT ''
);

CREATE TABLE user_groups (
  uid INTEGER NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  gid INTEGER NOT NULL REFERENCES groups(gid) ON DELETE CASCADE,
  PRIMARY KEY (uid, gid)
) WITHOUT ROWID;
CREATE INDEX user_groups_gid ON user_groups(gid);

CREATE TABLE sessions (
  id       TEXT PRIMARY KEY,
  uid      INTEGER NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  created  INTEGER NOT NULL,
  last_hit INTEGER NOT NULL,
  expires  INTEGER NOT NULL,
  origin   TEXT NOT NULL,
  temp     INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX sessions_uid ON sessions(uid);

CREATE TABLE preferences (
  uid     INTEGER NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  name    TEXT NOT NULL,
  data    TEXT NOT NULL,
  updated INTEGER NOT NULL,
  PRIMARY KEY (uid, name)
) WITHOUT ROWID;

CREATE TABLE login_failures (
  username     TEXT PRIMARY KEY COLLATE NOCASE,
  failures     INTEGER NOT NULL,
  window_start INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE server_settings (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
`
