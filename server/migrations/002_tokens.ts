// API tokens: only a hash of each secret is kept; capabilities are a JSON array of permission names.
export default /* sql */ `
CREATE TABLE tokens (
  id           TEXT PRIMARY KEY,
  uid          INTEGER NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  name         TEXT NOT NULL,
  description  TEXT NOT NULL DEFAULT '',
  secret_hash  TEXT NOT NULL UNIQUE,
  capabilities TEXT NOT NULL,
  created      INTEGER NOT NULL,
  expires      INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX tokens_uid ON tokens(uid);
`
