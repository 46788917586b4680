// Search library entries: `metadata` holds the Metadata member's JSON text exactly as sent, NULL when there is
// none. Several entries may share a GUID (kits); the ThingUUID is the key. Sharing lists and the group-deletion
// trigger as in 005_dashboards.
export default /* sql */ `
CREATE TABLE library (
  thing_uuid  TEXT PRIMARY KEY,
  guid        TEXT NOT NULL,
  uid         INTEGER NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  name        TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '',
  query       TEXT NOT NULL DEFAULT '',
  global      INTEGER NOT NULL DEFAULT 0,
  labels      TEXT NOT NULL DEFAULT '[]',
  metadata    TEXT,
  updated     INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX library_guid ON library(guid);
CREATE INDEX library_uid ON library(uid);
CREATE INDEX library_global ON library(global) WHERE global = 1;

CREATE TABLE library_gids (
  thing_uuid TEXT NOT NULL REFERENCES library(thing_uuid) ON DELETE CASCADE,
  gid        INTEGER NOT NULL,
  PRIMARY KEY (thing_uuid, gid)
) WITHOUT ROWID;
CREATE INDEX library_gids_gid ON library_gids(gid);

CREATE TRIGGER library_gids_group_deleted AFTER DELETE ON groups
BEGIN
  DELETE FROM library_gids WHERE gid = OLD.gid;
END;
`
