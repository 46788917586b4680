// The allocator setting the server runs with. Bun's allocator (its fork of mimalloc) hands the pages a garbage
// collection freed back to the system after 100 ms, keeping at most 4 MiB of recently used large pages; a server that
// reads request bodies and socket reads of 64 KiB to 1 MiB, decodes them into strings and encodes segments takes every
// 4 KiB of those buffers from the system again, a page fault each. Measured on a 2-core VM, where a fault costs tens
// of microseconds (/proc/PID/stat, 3 rounds each): syslog over TCP, 300,000 messages, 26,000 faults and 1.5 s of
// server CPU per round, 2,700-13,700 and 0.6-0.9 s with the purge off; Elasticsearch bulk 130,000-145,000 ->
// 220,000-230,000 documents/s; three test files 26 -> 19 s. With the purge off the process keeps the most memory it
// ever used, reused rather than grown (RSS after the same bulk runs 156-168 -> 230 MB). Every way this repository
// starts a server sets it (npm start, the `quarry` launcher, the container image, the benches, the test suite); an
// operator's own value wins. docs/operations.md, "Starting and stopping".
export const ALLOCATOR_ENV: Readonly<Record<string, string>> = { MIMALLOC_PURGE_DELAY: '-1' }

/** The allocator setting in effect, for the start line: `MIMALLOC_PURGE_DELAY=-1`, or `default`. */
export function allocatorSetting(env: Record<string, string | undefined> = process.env): string {
  const set = Object.keys(ALLOCATOR_ENV).filter((k) => env[k] !== undefined)
  return set.length === 0 ? 'default' : set.map((k) => `${k}=${env[k]}`).join(' ')
}
