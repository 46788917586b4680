#!/usr/bin/env bash
# The long run of the generated-query test (docs/query-language.md): QUARRY_QFUZZ_TOTAL queries (default 20,000) through
# test/query-fuzz.test.ts, in chunks of QUARRY_QFUZZ_CHUNK (default 2,000), each on a fresh store with its own seed
# (QUARRY_QFUZZ_SEED, default a fresh one, then +1 per chunk), so a failure is replayed by one chunk's seed:
#   QUARRY_QFUZZ_SEED=<seed> QUARRY_QFUZZ_RUNS=<chunk> node_modules/.bin/bun test test/query-fuzz.test.ts
# Stops at the first failing chunk.
set -euo pipefail
cd "$(dirname "$0")/.."
total=${QUARRY_QFUZZ_TOTAL:-20000}
chunk=${QUARRY_QFUZZ_CHUNK:-2000}
seed=${QUARRY_QFUZZ_SEED:-$((RANDOM * 32768 + RANDOM))}
echo "query-fuzz-long: $total queries in chunks of $chunk from QUARRY_QFUZZ_SEED=$seed ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs)"
start=$(date +%s)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for ((done = 0; done < total; done += chunk, seed++)); do
  status=0
  QUARRY_QFUZZ_SEED=$seed QUARRY_QFUZZ_RUNS=$chunk node_modules/.bin/bun test --timeout 30000 test/query-fuzz.test.ts >"$log" 2>&1 || status=$?
  if [ "$status" -ne 0 ]; then
    grep -Ev '^ *[0-9]+ \|' "$log" | head -40 # the failure without the source excerpt
    echo "query-fuzz-long: chunk with QUARRY_QFUZZ_SEED=$seed failed" >&2
    exit 1
  fi
  grep -E '^(query fuzz:|\(pass\))' "$log"
done
echo "query-fuzz-long: $total queries passed in $(($(date +%s) - start)) s"
