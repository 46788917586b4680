// The servers outside Bun that a test run has: test/run.sh starts a PostgreSQL server and an S3 server for the
// suite, except when QUARRY_TEST_STORES names the sqlite store alone (a laptop, no root, nothing installed): it then
// sets QUARRY_TEST_SERVICES=none and the tests that need those servers are left out of the run by this selection
// (not registered, and named in run.sh's summary), as run.sh leaves test/cluster/ out. A run with the servers
// configured, and any run without QUARRY_TEST_SERVICES=none, registers them all: without the servers they fail.
import { describe, test } from 'bun:test'

/** Whether this run has the test PostgreSQL and S3 servers (false only when run.sh says it started none). */
export const withServers = process.env.QUARRY_TEST_SERVICES !== 'none'

/** describe, for tests that need the PostgreSQL or S3 test server: left out of a run without them. */
export const describeWithServers = (name: string, body: () => void): void => {
  if (withServers) describe(name, body)
}

/** test, for a test that needs the PostgreSQL or S3 test server: left out of a run without them. */
export const testWithServers = (name: string, body: () => Promise<unknown> | unknown, timeout?: number): void => {
  if (withServers) test(name, body as () => Promise<void>, timeout)
}
