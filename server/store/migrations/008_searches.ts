// Saved searches (the only ones that outlive the process: running and backgrounded searches live in memory and
// in the search working directory) and the search history of POST /api/searchctrl/launch.
// A saved search's results live in the blob store under results_key and index_key; `state` is 'saving' from
// the moment PATCH .../save is acknowledged until its results are in the blob store, then 'saved'.
export default /* sql */ `
CREATE TABLE saved_searches (
  id              TEXT PRIMARY KEY,
  uid             INTEGER NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  gid             INTEGER NOT NULL DEFAULT 0,
  state           TEXT NOT NULL CHECK (state IN ('saving', 'saved')),
  user_query      TEXT NOT NULL,
  effective_query TEXT NOT NULL,
  start_range     INTEGER NOT NULL,
  end_range       INTEGER NOT NULL,
  started         INTEGER NOT NULL,
  finished        INTEGER NOT NULL,
  last_update     INTEGER NOT NULL,
  store_size      INTEGER NOT NULL,
  index_size      INTEGER NOT NULL,
  item_count      INTEGER NOT NULL,
  metadata        TEXT,
  import          TEXT,
  launch_info     TEXT NOT NULL,
  no_history      INTEGER NOT NULL,
  error           TEXT NOT NULL DEFAULT '',
  results_key     TEXT,
  index_key       TEXT
) WITHOUT ROWID;
CREATE INDEX saved_searches_uid ON saved_searches(uid);

CREATE TABLE search_history (
  id              INTEGER PRIMARY KEY,
  uid             INTEGER NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  gid             INTEGER NOT NULL DEFAULT 0,
  user_query      TEXT NOT NULL,
  effective_query TEXT NOT NULL,
  launched        INTEGER NOT NULL
);
CREATE INDEX search_history_uid ON search_history(uid, launched);
`
