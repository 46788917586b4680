#!/usr/bin/env bash
# Benchmark: ingest rate of the embedded engine (1 KiB entries, batches of 1,000) and a grep search over
# 1,000,000 entries, with the time to the first result and to the finish, and the p99 of other requests
# (GET /api/info/whoami) while the search runs. See bench/README.md; the work is done by bench/search.ts.
#
#   bash bench/search.sh            one run; appends a block to bench/results/search.md
#
# Tunables (environment): BENCH_ENTRIES (1000000), BENCH_BATCH (1000), BENCH_ENTRY_BYTES (1024), BENCH_BASELINE_S (5),
# BENCH_POLL_MS (10), BENCH_STAGE (grep NEEDLE-7f3a: the search's stage, see bench/search.ts), BENCH_SETTLE_S (0:
# seconds to wait after the ingest for the compaction into segments; the server takes QUARRY_COMPACT_INTERVAL and
# QUARRY_SEGMENT_SIZE from the environment),
# BENCH_NO_RECORD=1 (do not append to the results file).
set -Eeuo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUN=$ROOT/node_modules/.bin/bun
[ -x "$BUN" ] || { echo "bench/search.sh: Bun is missing; run 'npm ci' first" >&2; exit 2; }
RESULTS=$ROOT/bench/results/search.md

# shellcheck source=bench/common.sh
source bench/common.sh
no_target_args search.sh "$@"
bench_init search
load() { cut -d' ' -f1-3 /proc/loadavg; }

ENTRIES=${BENCH_ENTRIES:-1000000}
ENTRY_BYTES=${BENCH_ENTRY_BYTES:-1024}
need_kb=$((ENTRIES * ENTRY_BYTES / 1024 * 3 + 512 * 1024))
avail_kb=$(df -k --output=avail "$TMP" | awk 'NR == 2 {print $1}')
[ "$avail_kb" -ge "$need_kb" ] || { echo "bench/search.sh: needs $((need_kb / 1024)) MiB free in $TMP, has $((avail_kb / 1024))" >&2; exit 1; }

PASSWORD=bench-$(date +%s)-password
PORT=$("$BUN" run bench/lib.ts free-port)
BASE=http://127.0.0.1:$PORT
echo "== starting Quarry on 127.0.0.1:$PORT (data in $TMP/data)"
QUARRY_DATA_DIR=$TMP/data QUARRY_LISTEN=127.0.0.1:$PORT QUARRY_ADMIN_PASSWORD=$PASSWORD QUARRY_LOG_LEVEL=warn \
  "$BUN" run server/main.ts >"$TMP/quarry.log" 2>&1 &
PIDS+=("$!")
"$BUN" run bench/lib.ts wait "$BASE/api/test" 30 || { echo "bench/search.sh: Quarry did not start" >&2; exit 1; }

LOAD_START=$(load)
echo "== load average at the start: $LOAD_START"
bounded 3600 "$BUN" run bench/search.ts "$BASE" "$PASSWORD" >"$TMP/result.json"
LOAD_END=$(load)
DB_MIB=$(du -sm "$TMP/data" | cut -f1)
f() { "$BUN" -e "const r = JSON.parse(await Bun.file('$TMP/result.json').text()); console.log($1)"; }

TABLE="| measure | value |"$'\n'"| --- | ---: |"
TABLE+=$'\n'"| ingest: entries/s ($(f r.entries) entries of $(f r.entryBytes) B, batches of $(f r.batch), one request at a time) | $(f r.ingestEntriesPerSecond) |"
TABLE+=$'\n'"| ingest: MB/s of entry data / total seconds | $(f r.ingestMBPerSecond) / $(f r.ingestSeconds) |"
TABLE+=$'\n'"| search \`tag=bench ${BENCH_STAGE:-grep NEEDLE-7f3a}\` over $(f r.entries) entries: time to first result (ms) | $(f r.firstResultMs) |"
TABLE+=$'\n'"| search: time to finish (ms) | $(f r.finishMs) |"
TABLE+=$'\n'"| search: entries scanned per second / results / stored bytes | $(f r.scannedEntriesPerSecond) / $(f r.results) / $(f r.storeSize) |"
TABLE+=$'\n'"| whoami alone, one at a time: requests / p50 / p99 / max (ms) | $(f 'r.whoamiAlone.count') / $(f 'r.whoamiAlone.p50') / $(f 'r.whoamiAlone.p99') / $(f 'r.whoamiAlone.max') |"
TABLE+=$'\n'"| whoami during the search: requests / p50 / p99 / max (ms) | $(f 'r.whoamiDuringSearch.count') / $(f 'r.whoamiDuringSearch.p50') / $(f 'r.whoamiDuringSearch.p99') / $(f 'r.whoamiDuringSearch.max') |"
echo
echo "$TABLE"
echo
echo "load average (1, 5, 15 min): $LOAD_START at the start, $LOAD_END at the end; data directory $DB_MIB MiB"
if [ -s "$TMP/quarry.log" ]; then echo "Quarry logged (warn and above):"; sed 's/^/   | /' "$TMP/quarry.log" | head -20; fi

if [ "${BENCH_NO_RECORD:-0}" != 1 ]; then
  CPU=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
  [ -s "$RESULTS" ] || printf '# Embedded engine: ingest rate and a grep search over 1,000,000 entries\n\nAppended by `bash bench/search.sh`, newest last.\n' >"$RESULTS"
  {
    echo
    echo "## $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "- machine: $(nproc) CPUs (nproc), $CPU, $(uname -sr), $(free -g | awk '/^Mem:/ {print $2}') GiB RAM; disk $(df --output=source,fstype "$TMP" | awk 'NR == 2 {print $1 " (" $2 ")"}'); shared with other work"
    echo "- Bun $("$BUN" --version); Quarry with QUARRY_LOG_LEVEL=warn; command \`bash bench/search.sh\`; client and server on the same machine"
    echo "- load average (1, 5, 15 min): $LOAD_START at the start, $LOAD_END at the end; data directory $DB_MIB MiB after the run"
    echo
    echo "$TABLE"
  } >>"$RESULTS"
  echo "appended to ${RESULTS#"$ROOT"/}"
fi
