// Notifications (docs/api.md, "Notifications"): one row per notification, addressed to exactly one of: every user
// (broadcast), one user, or one group. A group notification is one row however many members the group has, so a
// sender's rows are what bounds the store (QUARRY_NOTIFICATIONS_PER_USER live rows each). Ids are never reused
// (AUTOINCREMENT): a client that remembers an id never reaches a later notification under it. Rows past `expires` are
// invisible and swept; the rows of a deleted sender, target user or target group go with it.
export default /* sql */ `
CREATE TABLE notifications (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  sender       INTEGER NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  broadcast    INTEGER NOT NULL DEFAULT 0,
  target_uid   INTEGER REFERENCES users(uid) ON DELETE CASCADE,
  target_gid   INTEGER REFERENCES groups(gid) ON DELETE CASCADE,
  type         INTEGER NOT NULL DEFAULT 0,
  level        TEXT NOT NULL DEFAULT '',
  link         TEXT NOT NULL DEFAULT '',
  msg          TEXT NOT NULL,
  sent         INTEGER NOT NULL,
  expires      INTEGER NOT NULL,
  ignore_until INTEGER NOT NULL DEFAULT 0,
  CHECK ((broadcast <> 0) + (target_uid IS NOT NULL) + (target_gid IS NOT NULL) = 1)
);
CREATE INDEX notifications_sender ON notifications(sender, expires);
CREATE INDEX notifications_target_uid ON notifications(target_uid) WHERE target_uid IS NOT NULL;
CREATE INDEX notifications_target_gid ON notifications(target_gid) WHERE target_gid IS NOT NULL;
CREATE INDEX notifications_broadcast ON notifications(broadcast) WHERE broadcast <> 0;
CREATE INDEX notifications_expires ON notifications(expires);
`
