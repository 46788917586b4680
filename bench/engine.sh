#!/usr/bin/env bash
# Benchmark of the engine (docs/query-language.md): 1,000,000 generated entries each of access-log lines, JSON lines and
# key=value lines in a fresh Quarry, then the time to answer (launch to last result) of stats, chart and regex queries
# and of the searches that exist today, against a plain Bun loop over the same bytes (the floor), jq, gawk and GNU grep,
# in interleaved rounds; and the server's RSS under `stats count by` over 1,000,000 distinct keys. See bench/README.md;
# the work is done by bench/engine.ts.
#
#   bash bench/engine.sh            one run; appends a block to bench/results/engine.md
#
# Tunables (environment): BENCH_ENTRIES (1000000), BENCH_ROUNDS (3), BENCH_CASES (a regex over
# case names), BENCH_SETTLE_S (600), BENCH_NO_RECORD=1 (do not append to the results file). The server compacts every
# second (QUARRY_COMPACT_INTERVAL=1s) so that the entries are in segments when the rounds start.
set -Eeuo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUN=$ROOT/node_modules/.bin/bun
[ -x "$BUN" ] || { echo "bench/engine.sh: Bun is missing; run 'npm ci' first" >&2; exit 2; }
RESULTS=$ROOT/bench/results/engine.md

# shellcheck source=bench/common.sh
source bench/common.sh
no_target_args engine.sh "$@"
need_packages gawk jq grep
bench_init engine
load() { cut -d' ' -f1-3 /proc/loadavg; }

ENTRIES=${BENCH_ENTRIES:-1000000}
# Three files of about 200 bytes a line, the database rows and then the segments: about 6 times the files.
need_kb=$((ENTRIES * 3 * 200 * 6 / 1024 + 512 * 1024))
avail_kb=$(df -k --output=avail "$TMP" | awk 'NR == 2 {print $1}')
[ "$avail_kb" -ge "$need_kb" ] || { echo "bench/engine.sh: needs $((need_kb / 1024)) MiB free in $TMP, has $((avail_kb / 1024))" >&2; exit 1; }

PASSWORD=bench-$(date +%s)-password
PORT=$("$BUN" run bench/lib.ts free-port)
BASE=http://127.0.0.1:$PORT
echo "== starting Quarry on 127.0.0.1:$PORT (data in $TMP/data)"
mkdir -p "$TMP/data" "$TMP/work"
QUARRY_DATA_DIR=$TMP/data QUARRY_LISTEN=127.0.0.1:$PORT QUARRY_ADMIN_PASSWORD=$PASSWORD QUARRY_LOG_LEVEL=warn \
  QUARRY_COMPACT_INTERVAL=${QUARRY_COMPACT_INTERVAL:-1s} "$BUN" run server/main.ts >"$TMP/quarry.log" 2>&1 &
SERVER=$!
PIDS+=("$SERVER")
"$BUN" run bench/lib.ts wait "$BASE/api/test" 30 || { echo "bench/engine.sh: Quarry did not start" >&2; exit 1; }

LOAD_START=$(load)
echo "== load average at the start: $LOAD_START"
bounded 7200 "$BUN" run bench/engine.ts "$BASE" "$PASSWORD" "$TMP/work" "$SERVER" "$TMP/data" >"$TMP/result.txt"
LOAD_END=$(load)
echo
head -n -1 "$TMP/result.txt"
echo
echo "load average (1, 5, 15 min): $LOAD_START at the start, $LOAD_END at the end"
if [ -s "$TMP/quarry.log" ]; then echo "Quarry logged (warn and above):"; sed 's/^/   | /' "$TMP/quarry.log" | head -20; fi

if [ "${BENCH_NO_RECORD:-0}" != 1 ]; then
  CPU=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
  [ -s "$RESULTS" ] || printf '# Engine: stats, chart and regex queries and the searches of today against a Bun loop, jq, gawk and grep\n\nAppended by `bash bench/engine.sh`, newest last.\n' >"$RESULTS"
  {
    echo
    echo "## $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "- machine: $(nproc) CPUs (nproc), $CPU, $(uname -sr), $(free -g | awk '/^Mem:/ {print $2}') GiB RAM; shared with other work"
    echo "- Bun $("$BUN" --version), jq $(jq --version), $(gawk --version | head -1), $(grep --version | head -1); commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
    echo "- load average (1, 5, 15 min): $LOAD_START at the start, $LOAD_END at the end"
    echo
    head -n -1 "$TMP/result.txt"
    echo
    echo '```json'
    tail -n 1 "$TMP/result.txt"
    echo '```'
  } >>"$RESULTS"
  echo "appended to ${RESULTS#"$ROOT"/}"
fi
