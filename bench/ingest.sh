#!/usr/bin/env bash
# Benchmark of ingest speed (bench/README.md, "bench/ingest.sh"): the same generated access-log lines stored by the
# sqlite3 CLI in one transaction (the floor), through POST /api/ingest/json and by `quarry ingest`, in interleaved
# rounds, with the rows waiting for compaction sampled during the route's runs; then the data directory's size after
# 1,000,000 access + 1,000,000 JSON lines and their compaction. The work is done by bench/ingest.ts.
#
#   bash bench/ingest.sh            one run; appends a block to bench/results/ingest.md
#
# Tunables (environment): BENCH_ENTRIES (1000000), BENCH_ROUNDS (3), BENCH_NO_SIZE=1 (skip the size run),
# BENCH_NO_RECORD=1 (do not append to the results file). Installs Debian's sqlite3 when it is missing.
set -Eeuo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUN=$ROOT/node_modules/.bin/bun
[ -x "$BUN" ] || { echo "bench/ingest.sh: Bun is missing; run 'npm ci' first" >&2; exit 2; }
RESULTS=$ROOT/bench/results/ingest.md

# shellcheck source=bench/common.sh
source bench/common.sh
no_target_args ingest.sh "$@"
need_packages sqlite3
bench_init ingest
load() { cut -d' ' -f1-3 /proc/loadavg; }

mkdir -p "$TMP/work"
LOAD_START=$(load)
echo "== load average at the start: $LOAD_START"
bounded 7200 "$BUN" run bench/ingest.ts "$TMP/work" >"$TMP/result.txt"
LOAD_END=$(load)
echo
cat "$TMP/result.txt"
echo
echo "load average (1, 5, 15 min): $LOAD_START at the start, $LOAD_END at the end"

if [ "${BENCH_NO_RECORD:-0}" != 1 ]; then
  CPU=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
  [ -s "$RESULTS" ] || printf '# Ingest: the JSON route and `quarry ingest` against a sqlite3 bulk insert\n\nAppended by `bash bench/ingest.sh`, newest last.\n' >"$RESULTS"
  {
    echo
    echo "## $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "- machine: $(nproc) CPUs (nproc), $CPU, $(uname -sr), $(free -g | awk '/^Mem:/ {print $2}') GiB RAM"
    echo "- Bun $("$BUN" --version), $(sqlite3 --version | cut -d' ' -f1-2 | sed 's/^/sqlite3 /'); commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
    echo "- load average (1, 5, 15 min): $LOAD_START at the start, $LOAD_END at the end"
    echo
    cat "$TMP/result.txt"
  } >>"$RESULTS"
  echo "appended to ${RESULTS#"$ROOT"/}"
fi
