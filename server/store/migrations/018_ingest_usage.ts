// Entries count toward the quota of the user who ingested them (server/store/quota.ts). Entries are shared by every
// searcher and are never changed or deleted (a compaction moves them into segments, which keep no owner), so what a
// user ingested is kept as a running total per user, added in the transaction that stores each batch: exact without
// an owner on every entry, and summed by the quota with one primary-key probe. Entries ingested before this
// migration count for nobody. Plain SQL that PostgreSQL runs as well (its twin sizes bytes as BIGINT).
export default /* sql */ `
CREATE TABLE ingest_usage (
  uid   INTEGER PRIMARY KEY REFERENCES users(uid) ON DELETE CASCADE,
  bytes INTEGER NOT NULL
);
`
