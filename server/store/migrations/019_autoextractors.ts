// Auto-extractor definitions (plugins/autoextractors): one row per definition, its tags a JSON array of names
// (the platform's Tag and Tags), its sharing list beside it, removed with a deleted group as in 006_library.
export default /* sql */ `
CREATE TABLE autoextractors (
  uuid        TEXT PRIMARY KEY,
  uid         INTEGER NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  name        TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '',
  labels      TEXT NOT NULL DEFAULT '[]',
  global      INTEGER NOT NULL DEFAULT 0,
  tags        TEXT NOT NULL DEFAULT '[]',
  module      TEXT NOT NULL,
  params      TEXT NOT NULL DEFAULT '',
  args        TEXT NOT NULL DEFAULT '',
  updated     INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX autoextractors_uid ON autoextractors(uid);
CREATE INDEX autoextractors_global ON autoextractors(global) WHERE global = 1;

CREATE TABLE autoextractor_gids (
  uuid TEXT NOT NULL REFERENCES autoextractors(uuid) ON DELETE CASCADE,
  gid  INTEGER NOT NULL,
  PRIMARY KEY (uuid, gid)
) WITHOUT ROWID;
CREATE INDEX autoextractor_gids_gid ON autoextractor_gids(gid);

CREATE TRIGGER autoextractor_gids_group_deleted AFTER DELETE ON groups
BEGIN
  DELETE FROM autoextractor_gids WHERE gid = OLD.gid;
END;
`
