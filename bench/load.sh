#!/usr/bin/env bash
# Load test: 200 concurrent clients for 60 s over a realistic mix of the API (logins, lists and gets, resource
# uploads and downloads, user files, dashboards, library, tokens, searches running), with per-endpoint
# throughput and p50/p99, errors (target: none) and the server's RSS over time (target: flat). See
# bench/README.md ("bench/load.sh"); the work is done by bench/load.ts.
#
#   bash bench/load.sh              one run; appends a block to bench/results/load.md
#   bash bench/load.sh --strict     exit 1 when there was any error or the RSS was not flat
#
# Tunables (environment): BENCH_CLIENTS (200), BENCH_DURATION (60, seconds), BENCH_USERS (50), BENCH_ENTRIES
# (100000), BENCH_SEARCH_EVERY (3, seconds), BENCH_WARMUP_S (10), BENCH_FLAT_PCT (10), BENCH_THINK_MS (0),
# BENCH_NO_RECORD=1 (do not append to the results file).
set -Eeuo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUN=$ROOT/node_modules/.bin/bun
[ -x "$BUN" ] || { echo "bench/load.sh: Bun is missing; run 'npm ci' first" >&2; exit 2; }
RESULTS=$ROOT/bench/results/load.md
STRICT=()
for a in "$@"; do
  case $a in
    --strict) STRICT=(--strict) ;;
    --variants) ;; # bench/run.sh passes this on: this benchmark has no variants
    *) echo "bench/load.sh: unknown argument $a" >&2; exit 2 ;;
  esac
done

# shellcheck source=bench/common.sh
source bench/common.sh
bench_init load
load() { cut -d' ' -f1-3 /proc/loadavg; }

PASSWORD=bench-$(date +%s)-password
PORT=$("$BUN" run bench/lib.ts free-port)
BASE=http://127.0.0.1:$PORT
echo "== starting Quarry on 127.0.0.1:$PORT (data in $TMP/data)"
# The server as shipped, at log level warn (every 5xx and every warning still logged, and shown below).
QUARRY_DATA_DIR=$TMP/data QUARRY_LISTEN=127.0.0.1:$PORT QUARRY_ADMIN_PASSWORD=$PASSWORD QUARRY_LOG_LEVEL=warn \
  "$BUN" run server/main.ts >"$TMP/quarry.log" 2>&1 &
SERVER_PID=$!
PIDS+=("$SERVER_PID")
"$BUN" run bench/lib.ts wait "$BASE/api/test" 30 || { echo "bench/load.sh: Quarry did not start" >&2; exit 1; }

LOAD_START=$(load)
echo "== load average at the start: $LOAD_START"
rc=0
bounded 900 "$BUN" run bench/load.ts "$BASE" "$PASSWORD" "$SERVER_PID" ${STRICT[@]+"${STRICT[@]}"} >"$TMP/report.md" || rc=$?
[ -s "$TMP/report.md" ] || { echo "bench/load.sh: the driver failed (exit $rc)" >&2; exit 1; }
kill -0 "$SERVER_PID" 2>/dev/null || { echo "bench/load.sh: Quarry is no longer running" >&2; exit 1; }
LOG_LINES=$(wc -l <"$TMP/quarry.log")
echo
cat "$TMP/report.md"
echo
if [ "$LOG_LINES" -gt 0 ]; then
  echo "Quarry logged $LOG_LINES lines at warn and above (first 20):"
  head -20 "$TMP/quarry.log" | cut -c1-400 | sed 's/^/   | /'
else
  echo "Quarry logged nothing at warn and above."
fi

if [ "${BENCH_NO_RECORD:-0}" != 1 ]; then
  CPU=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
  [ -s "$RESULTS" ] || printf '# Load test: 200 concurrent clients, a realistic mix, errors and RSS over time\n\nAppended by `bash bench/load.sh`, newest last.\n' >"$RESULTS"
  {
    echo
    echo "## $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "- machine: $(nproc) CPUs (nproc), $CPU, $(uname -sr), $(free -g | awk '/^Mem:/ {print $2}') GiB RAM; shared with other work"
    echo "- Bun $("$BUN" --version); Quarry with QUARRY_LOG_LEVEL=warn on the disk blob store; command \`bash bench/load.sh${*:+ $*}\`$( [ -n "${BENCH_CLIENTS:-}${BENCH_DURATION:-}" ] && echo " (BENCH_CLIENTS=${BENCH_CLIENTS:-200} BENCH_DURATION=${BENCH_DURATION:-60})"); load generator (one Bun process) and server on the same machine"
    echo "- load average before seeding: $LOAD_START; server log at warn and above: $LOG_LINES lines"
    echo
    cat "$TMP/report.md"
    if [ "$LOG_LINES" -gt 0 ]; then
      echo
      echo "Server log (first 10 lines):"
      echo
      head -10 "$TMP/quarry.log" | cut -c1-300 | sed 's/^/    /'
    fi
  } >>"$RESULTS"
  echo "appended to ${RESULTS#"$ROOT"/}"
fi
exit "$rc"
