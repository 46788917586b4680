// Resources: metadata rows here, contents in the blob store under `blob_key` (NULL while a resource is empty).
// Sharing lists hold any positive GID, also of a group that does not exist yet (docs/api.md "Sharing items with
// groups"), so resource_acl has no foreign key to groups; a trigger removes a deleted group from every list instead.
export default /* sql */ `
CREATE TABLE resources (
  guid        TEXT PRIMARY KEY,
  uid         INTEGER NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  name        TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  global      INTEGER NOT NULL DEFAULT 0,
  version     INTEGER NOT NULL DEFAULT 0,
  size        INTEGER NOT NULL DEFAULT 0,
  hash        TEXT NOT NULL DEFAULT '',
  blob_key    TEXT,
  modified    INTEGER NOT NULL,
  domain      INTEGER NOT NULL DEFAULT 0,
  labels      TEXT NOT NULL DEFAULT '[]'
) WITHOUT ROWID;
CREATE INDEX resources_uid ON resources(uid);
CREATE INDEX resources_global ON resources(global) WHERE global = 1;

CREATE TABLE resource_acl (
  guid TEXT NOT NULL REFERENCES resources(guid) ON DELETE CASCADE,
  gid  INTEGER NOT NULL,
  PRIMARY KEY (guid, gid)
) WITHOUT ROWID;
CREATE INDEX resource_acl_gid ON resource_acl(gid);

CREATE TRIGGER resource_acl_group_deleted AFTER DELETE ON groups
BEGIN
  DELETE FROM resource_acl WHERE gid = OLD.gid;
END;
`
