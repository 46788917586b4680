// Retention and deletion of ingested entries (server/search/retention.ts).
// - retention_rules: the rules the admin API stored (tag '' is the store-wide rule). A NULL column is "not set here"
//   (the variable's value applies); 0 is "no limit" (it overrides a variable).
// - entry_segment_tags: per registered segment and tag, how many entries, their bytes (as the quota counts them) and their first and last
//   time; filled by the retention sweep once per segment, so sweeps and deletions pick segments without reading them.
// - entry_segment_removals: one row per segment unregistered (removed or replaced by a rewrite), written in the
//   transaction that unregisters it. Its blob is deleted afterwards (blob_gone marks it done; a crash in between
//   leaves the row, and the next sweep deletes the blob). Its id, never reused, is also what tells a search walking
//   the segment list that a segment went (server/search/segments.ts).
// - entry_deletions: a deletion's intent, written before any of it is done: one cut off by a crash is finished by
//   the next sweep.
// - ingest_usage_tags: ingest_usage split by tag, so the bytes of deleted entries leave their owners' usage.
export default /* sql */ `
CREATE TABLE retention_rules (
  tag        TEXT PRIMARY KEY,
  max_age_ms INTEGER,
  max_bytes  INTEGER,
  updated    INTEGER NOT NULL
);

CREATE TABLE entry_segment_tags (
  seq    INTEGER NOT NULL,
  tag_id INTEGER NOT NULL,
  count  INTEGER NOT NULL,
  bytes  INTEGER NOT NULL,
  min_ts INTEGER NOT NULL,
  max_ts INTEGER NOT NULL,
  PRIMARY KEY (seq, tag_id)
);

CREATE TABLE entry_segment_removals (
  id        INTEGER PRIMARY KEY AUTOINCREMENT,
  key       TEXT NOT NULL,
  removed   INTEGER NOT NULL,
  blob_gone INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX entry_segment_removals_pending ON entry_segment_removals(id) WHERE blob_gone = 0;

CREATE TABLE entry_deletions (
  id       INTEGER PRIMARY KEY AUTOINCREMENT,
  tag      TEXT NOT NULL,
  start_ts INTEGER NOT NULL,
  end_ts   INTEGER NOT NULL,
  uid      INTEGER,
  created  INTEGER NOT NULL,
  finished INTEGER,
  deleted  INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE ingest_usage_tags (
  uid    INTEGER NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  tag_id INTEGER NOT NULL,
  bytes  INTEGER NOT NULL,
  PRIMARY KEY (uid, tag_id)
);
`
