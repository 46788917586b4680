// Dashboards: `data` holds the Data member's JSON text exactly as the client sent it (docs/api.md "Dashboards and the
// search library"). The id is random below 2^53 (docs/api.md "Conventions"); several dashboards may share a GUID
// (kits). Sharing lists hold any positive GID, also of a group that does not exist yet (docs/api.md "Sharing items with
// groups"), so dashboard_gids has no foreign key to groups; a trigger removes a deleted group from every list instead.
// A listing is a union of three index searches (owner, the partial index of global ones, the sharing rows of the
// caller's groups), so its cost follows what the caller sees, not the size of the table.
export default /* sql */ `
CREATE TABLE dashboards (
  id          INTEGER PRIMARY KEY,
  guid        TEXT NOT NULL,
  uid         INTEGER NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  name        TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '',
  global      INTEGER NOT NULL DEFAULT 0,
  labels      TEXT NOT NULL DEFAULT '[]',
  data        TEXT NOT NULL DEFAULT '{}',
  created     INTEGER NOT NULL,
  updated     INTEGER NOT NULL
);
CREATE INDEX dashboards_guid ON dashboards(guid);
CREATE INDEX dashboards_uid ON dashboards(uid);
CREATE INDEX dashboards_global ON dashboards(global) WHERE global = 1;

CREATE TABLE dashboard_gids (
  id  INTEGER NOT NULL REFERENCES dashboards(id) ON DELETE CASCADE,
  gid INTEGER NOT NULL,
  PRIMARY KEY (id, gid)
) WITHOUT ROWID;
CREATE INDEX dashboard_gids_gid ON dashboard_gids(gid);

CREATE TRIGGER dashboard_gids_group_deleted AFTER DELETE ON groups
BEGIN
  DELETE FROM dashboard_gids WHERE gid = OLD.gid;
END;
`
