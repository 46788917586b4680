// Leases of the periodic jobs (docs/cluster.md): one row per job, naming the process that runs it and until when.
// A job runs only in the process holding its lease; a holder that dies stops renewing it, and another takes it once
// `expires_at` has passed. `last_run` (when the job last ran, on any replica) keeps one cadence for the whole
// cluster whichever replica holds the lease. Times in ms since the epoch, by the store's clock.
export default /* sql */ `
CREATE TABLE leases (
  name       TEXT PRIMARY KEY,
  holder     TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  last_run   INTEGER NOT NULL DEFAULT 0
);
`
