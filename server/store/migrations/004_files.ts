// User files: metadata rows here, contents in the blob store under `blob_key` (every file has a blob, also an
// empty one). Several files may share a GUID (kits), so the primary key is the ThingUUID. Sharing lists hold
// any positive GID, also of a group that does not exist yet (docs/api.md "Sharing items with groups"), so
// user_file_gids has no foreign key to groups; a trigger removes a deleted group from every list instead.
export default /* sql */ `
CREATE TABLE user_files (
  thing_uuid  TEXT PRIMARY KEY,
  guid        TEXT NOT NULL,
  uid         INTEGER NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  name        TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '',
  global      INTEGER NOT NULL DEFAULT 0,
  size        INTEGER NOT NULL DEFAULT 0,
  type        TEXT NOT NULL DEFAULT '',
  labels      TEXT NOT NULL DEFAULT '[]',
  updated     INTEGER NOT NULL,
  blob_key    TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX user_files_guid ON user_files(guid);
CREATE INDEX user_files_uid ON user_files(uid);
CREATE INDEX user_files_global ON user_files(global) WHERE global = 1;

CREATE TABLE user_file_gids (
  thing_uuid TEXT NOT NULL REFERENCES user_files(thing_uuid) ON DELETE CASCADE,
  gid        INTEGER NOT NULL,
  PRIMARY KEY (thing_uuid, gid)
) WITHOUT ROWID;
CREATE INDEX user_file_gids_gid ON user_file_gids(gid);

CREATE TRIGGER user_file_gids_group_deleted AFTER DELETE ON groups
BEGIN
  DELETE FROM user_file_gids WHERE gid = OLD.gid;
END;
`
