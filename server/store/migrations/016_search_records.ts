// Search records of a cluster (docs/cluster.md): the record of every search a replica holds in memory (running, kept or
// saved), written by that replica (`owner`) so that every replica lists it and knows where to forward requests
// that need it. A record whose owner is no longer live is ignored (and swept): its unsaved search is gone, as on a
// restart; a saved one is still in saved_searches and is taken over by the first replica that needs it.
// `data` is the JSON of the record and the state facts (background, save, attached clients).
export default /* sql */ `
CREATE TABLE search_records (
  id      TEXT PRIMARY KEY,
  owner   TEXT NOT NULL,
  uid     INTEGER NOT NULL,
  gid     INTEGER NOT NULL,
  started INTEGER NOT NULL,
  data    TEXT NOT NULL,
  updated INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX search_records_owner ON search_records(owner);
`
