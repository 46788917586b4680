// Per-user storage quotas (server/quota.ts) sum the sizes of a user's items on every upload: covering indexes
// make each sum an index range scan, without reading the rows. Plain CREATE INDEX, as PostgreSQL runs it too.
export default /* sql */ `
CREATE INDEX resources_uid_size ON resources(uid, size);
CREATE INDEX user_files_uid_size ON user_files(uid, size);
CREATE INDEX saved_searches_uid_state_size ON saved_searches(uid, state, store_size, index_size);
`
