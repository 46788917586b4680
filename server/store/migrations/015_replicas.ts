// The replica registry (docs/cluster.md): one row per running server process, written at its start and refreshed by its
// heartbeat; a replica is live while its heartbeat is recent (server/cluster). `id` is random per start, so a
// restarted process is a new replica and never inherits the searches of its previous run. `name` is its key in the
// status objects (host:port), `address` the origin other replicas reach it at, `description` its sysDesc (JSON).
export default /* sql */ `
CREATE TABLE replicas (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  address     TEXT NOT NULL,
  description TEXT NOT NULL,
  started     INTEGER NOT NULL,
  heartbeat   INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX replicas_heartbeat ON replicas(heartbeat);
`
