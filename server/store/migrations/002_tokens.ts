// API tokens: only a hash of each secret is kept; capabilities are a JSON array of permission names.
// The table is keyed by the secret's hash, so authenticating a request is one b-tree search; the id
// that the token API uses is a secondary unique key.
export default /* sql */ `
CREATE TABLE tokens (
  secret_hash  TEXT PRIMARY KEY,
  id           TEXT NOT NULL UNIQUE,
  uid          INTEGER NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  name         TEXT NOT NULL,
  description  TEXT NOT NULL DEFAULT '',
  capabilities TEXT NOT NULL,
  created      INTEGER NOT NULL,
  expires      INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX tokens_uid ON tokens(uid);
`
