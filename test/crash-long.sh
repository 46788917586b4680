#!/usr/bin/env bash
# The long run of the crash-safety test (bench/README.md, "Robustness"): test/crash.test.ts with QUARRY_CRASH_ROUNDS
# rounds (default 50) from seed QUARRY_CRASH_SEED (default: a fresh one, printed first so a failure can be replayed).
# Figures of the last run: bench/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
export QUARRY_CRASH_ROUNDS=${QUARRY_CRASH_ROUNDS:-50}
export QUARRY_CRASH_SEED=${QUARRY_CRASH_SEED:-$((RANDOM * 32 + RANDOM % 32))}
echo "crash-long: $QUARRY_CRASH_ROUNDS rounds from QUARRY_CRASH_SEED=$QUARRY_CRASH_SEED ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs)"
start=$(date +%s)
node_modules/.bin/bun test test/crash.test.ts
echo "crash-long: passed in $(($(date +%s) - start)) s"
