#!/usr/bin/env bash
# The long run of the generated-input test (issue 8, part 1): test/fuzz.test.ts with QUARRY_FUZZ_RUNS requests
# (default 50,000) and seed QUARRY_FUZZ_SEED (default: a fresh one, printed first so a failure can be replayed).
# Figures of the last run: bench/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
export QUARRY_FUZZ_RUNS=${QUARRY_FUZZ_RUNS:-50000}
export QUARRY_FUZZ_SEED=${QUARRY_FUZZ_SEED:-$((RANDOM * 32768 + RANDOM))}
echo "fuzz-long: $QUARRY_FUZZ_RUNS requests, QUARRY_FUZZ_SEED=$QUARRY_FUZZ_SEED ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs)"
start=$(date +%s)
node_modules/.bin/bun test test/fuzz.test.ts
echo "fuzz-long: passed in $(($(date +%s) - start)) s"
