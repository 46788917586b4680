#!/usr/bin/env bash
# Benchmark: syslog over TCP into Quarry against a plain Bun server writing the same rows (bench/syslog-floor.ts), in
# one interleaved run; and the time from sending a message to a search finding it. See bench/README.md.
#
#   bash bench/syslog.sh            appends a block to bench/results/syslog.md
#
# Tunables (environment): BENCH_LINES (300000 per round), BENCH_ROUNDS (3), BENCH_NO_RECORD=1 (do not append).
set -Eeuo pipefail
cd "$(dirname "$0")/.."
BUN=$PWD/node_modules/.bin/bun
[ -x "$BUN" ] || { echo "bench/syslog.sh: Bun is missing; run 'npm ci' first" >&2; exit 2; }
for a in "$@"; do
  case $a in
    --strict | --variants) ;;
    *) echo "bench/syslog.sh: unknown argument $a" >&2; exit 2 ;;
  esac
done
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$BUN" run bench/syslog.ts >"$out"
cat "$out"
if [ -z "${BENCH_NO_RECORD:-}" ]; then
  mkdir -p bench/results
  { echo; echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"; echo; cat "$out"; } >>bench/results/syslog.md
fi
