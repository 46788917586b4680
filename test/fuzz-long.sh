#!/usr/bin/env bash
# The long run of the generated-input test (bench/README.md, "Robustness"): QUARRY_FUZZ_TOTAL requests (default 50,000)
# through test/fuzz.test.ts, in chunks of QUARRY_FUZZ_CHUNK (default 10,000), each on a fresh store with its own seed
# (QUARRY_FUZZ_SEED, default a fresh one, then +1 per chunk), so a failure is replayed by one chunk's seed:
#   QUARRY_FUZZ_SEED=<seed> QUARRY_FUZZ_RUNS=<chunk> node_modules/.bin/bun test test/fuzz.test.ts
# Stops at the first failing chunk. Figures of the last run: bench/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
total=${QUARRY_FUZZ_TOTAL:-50000}
chunk=${QUARRY_FUZZ_CHUNK:-10000}
seed=${QUARRY_FUZZ_SEED:-$((RANDOM * 32768 + RANDOM))}
echo "fuzz-long: $total requests in chunks of $chunk from QUARRY_FUZZ_SEED=$seed ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs)"
start=$(date +%s)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for ((done = 0; done < total; done += chunk, seed++)); do
  status=0
  QUARRY_FUZZ_SEED=$seed QUARRY_FUZZ_RUNS=$chunk node_modules/.bin/bun test test/fuzz.test.ts >"$log" 2>&1 || status=$?
  if [ "$status" -ne 0 ]; then
    grep -Ev '^ *[0-9]+ \|' "$log" | head -40 # the failure without the source excerpt
    echo "fuzz-long: chunk with QUARRY_FUZZ_SEED=$seed failed" >&2
    exit 1
  fi
  grep -E '^(fuzz:|socket floods:|\(pass\))' "$log"

done
echo "fuzz-long: $total requests passed in $(($(date +%s) - start)) s"
