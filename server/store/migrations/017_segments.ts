// Sealed segments of the embedded engine (server/search/segments.ts): each row names a blob in the blob
// store holding a time-ordered run of entries that were rows of `entries` (with their row ids), and the first and
// last (ts, tag_id, id) it holds. A segment is registered in the transaction that deletes its rows, so every
// entry is either a row or in exactly one registered segment. Segments are never changed; `seq` orders them by
// registration.
export default /* sql */ `
CREATE TABLE entry_segments (
  seq     INTEGER PRIMARY KEY,
  key     TEXT NOT NULL UNIQUE,
  count   INTEGER NOT NULL,
  bytes   INTEGER NOT NULL,
  min_ts  INTEGER NOT NULL,
  min_tag INTEGER NOT NULL,
  min_id  INTEGER NOT NULL,
  max_ts  INTEGER NOT NULL,
  max_tag INTEGER NOT NULL,
  max_id  INTEGER NOT NULL,
  created INTEGER NOT NULL
);
`
