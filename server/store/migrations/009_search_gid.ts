// The default search group may name a group that does not exist yet (docs/api.md "Users and groups": an admin sets any
// positive GID, as clients do before they create the group), so it moves to a column without a foreign key. The old
// column cannot go: SQLite refuses to drop a column with a foreign key, and rebuilding `users` would cascade
// through every table that references it; default_gid stays, always NULL, unread.
// A deleted group stops being anyone's default search group, as it leaves every sharing list.
export default /* sql */ `
ALTER TABLE users ADD COLUMN search_gid INTEGER;
UPDATE users SET search_gid = default_gid, default_gid = NULL;

CREATE TRIGGER users_search_gid_group_deleted AFTER DELETE ON groups
BEGIN
  UPDATE users SET search_gid = NULL WHERE search_gid = OLD.gid;
END;
`
