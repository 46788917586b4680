// The embedded engine's entries (POST /api/ingest/json): each entry has a time, a tag, a source address and
// its bytes. Tags are interned in ingest_tags. One index on (ts, tag_id) serves every search: a search walks it
// in time order and reads the tag from the index itself, so entries of other tags cost an index step, not a
// row read. Times are integer milliseconds since the epoch.
export default /* sql */ `
CREATE TABLE ingest_tags (
  id   INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE
);

CREATE TABLE entries (
  id     INTEGER PRIMARY KEY,
  ts     INTEGER NOT NULL,
  tag_id INTEGER NOT NULL REFERENCES ingest_tags(id),
  src    TEXT NOT NULL,
  data   BLOB NOT NULL
);
CREATE INDEX entries_time_tag ON entries(ts, tag_id);
`
