// The PostgreSQL twin of server/store/migrations/013_leases.ts (same version, table, columns and meaning). Times are
// BIGINT ms, taken from the database server's clock, so replicas whose clocks differ agree on when a lease expires.
export default /* sql */ `
CREATE TABLE leases (
  name       TEXT COLLATE "C" PRIMARY KEY,
  holder     TEXT NOT NULL,
  expires_at BIGINT NOT NULL,
  last_run   BIGINT NOT NULL DEFAULT 0
);
`
