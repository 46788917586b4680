// Per-user storage quotas (server/store/quota.ts) sum the sizes of a user's items on every write that adds bytes:
// covering indexes make each sum an index range scan, without reading the rows. Dashboards and library entries
// get a `stored_bytes` column (the bytes of their text members, set by their repos on every write, filled here
// for existing rows) so that they are summed the same way. Plain SQL that PostgreSQL runs as well.
export default /* sql */ `
CREATE INDEX resources_uid_size ON resources(uid, size);
CREATE INDEX user_files_uid_size ON user_files(uid, size);
CREATE INDEX saved_searches_uid_state_size ON saved_searches(uid, state, store_size, index_size);

ALTER TABLE dashboards ADD COLUMN stored_bytes INTEGER NOT NULL DEFAULT 0;
UPDATE dashboards SET stored_bytes = octet_length(name) + octet_length(description) + octet_length(labels) + octet_length(data);
CREATE INDEX dashboards_uid_bytes ON dashboards(uid, stored_bytes);

ALTER TABLE library ADD COLUMN stored_bytes INTEGER NOT NULL DEFAULT 0;
UPDATE library SET stored_bytes = octet_length(name) + octet_length(description) + octet_length(query) + octet_length(labels)
  + coalesce(octet_length(metadata), 0);
CREATE INDEX library_uid_bytes ON library(uid, stored_bytes);
`
