// The allocator setting the server runs with, reported in its `listening` line. Bun's allocator (its fork of
// mimalloc) hands the pages a garbage collection freed back to the system within about 100 ms, and a server that
// reads request bodies and socket reads of 64 KiB to 1 MiB takes every 4 KiB of them from the system again, a page
// fault each. `MIMALLOC_PURGE_DELAY=-1` keeps them instead. Measured on a 2-core VM, where a fault costs tens of
// microseconds: syslog over TCP 26,000 faults and 1.5 s of server CPU per 300,000 messages, 2,700-13,700 and 0.6-0.9 s
// with it; Elasticsearch bulk 130,000-145,000 -> 220,000-230,000 documents/s; bench/load.sh's mix 1,955 -> 3,100
// requests/s. The price: the process keeps the most memory it ever used; under bench/load.sh's mix RSS climbed from
// 287 to 691 MiB in a minute and stayed there (255 MiB, flat, with Bun's own setting). So it is not the default: an
// operator with the memory to spare sets it (docs/operations.md, "Starting and stopping"). A delay of 10 s gave
// none of the gain (2,025 requests/s). The test suite does not run with it either: its socket-flood test bounds what
// the test process keeps (test/fuzz.ts), and with it the process kept 179 MiB (bound 160).
const ALLOCATOR_VARIABLES = ['MIMALLOC_PURGE_DELAY'] as const

/** The allocator setting in effect, for the start line: `MIMALLOC_PURGE_DELAY=-1`, or `default`. */
export function allocatorSetting(env: Record<string, string | undefined> = process.env): string {
  const set = ALLOCATOR_VARIABLES.filter((k) => env[k] !== undefined)
  return set.length === 0 ? 'default' : set.map((k) => `${k}=${env[k]}`).join(' ')
}

/** The allocator variables of `env` that are set (a bench passes its own on to what it starts). */
export function allocatorEnv(env: Record<string, string | undefined> = process.env): Record<string, string> {
  const out: Record<string, string> = {}
  for (const k of ALLOCATOR_VARIABLES) if (env[k] !== undefined) out[k] = env[k]!
  return out
}
