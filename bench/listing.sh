#!/usr/bin/env bash
# Benchmark: GET /api/dashboards and GET /api/library for a user who sees 100 items, on a store whose tables
# hold BENCH_OTHERS (1,000,000) dashboards and as many library entries of other users, next to a control store
# holding only what the user sees. See bench/README.md.
#
#   bash bench/listing.sh            appends a block to bench/results/listing.md
#   bash bench/listing.sh --strict   exit 1 when a p99 on the large store is 10 ms or more
#
# Tunables (environment): BENCH_OTHERS (1000000), BENCH_THREADS (1), BENCH_CONNECTIONS (4), BENCH_DURATION (10s),
# BENCH_WARMUP (3s), BENCH_ROUNDS (3), BENCH_TARGET_P99_MS (10), BENCH_NO_RECORD=1.
# Both servers run at once; each round loads the targets in turn (plus GET /api/info/whoami on the large
# store as a reference for the fixed cost of a request under the same load), one at a time, and each target is
# reported by its median round. Only loopback addresses are used; every load run is bounded.
set -Eeuo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUN=$ROOT/node_modules/.bin/bun
[ -x "$BUN" ] || { echo "bench/listing.sh: Bun is missing; run 'npm ci' first" >&2; exit 2; }

OTHERS=${BENCH_OTHERS:-1000000}
THREADS=${BENCH_THREADS:-1}
CONNS=${BENCH_CONNECTIONS:-4}
DURATION=${BENCH_DURATION:-10s}
WARMUP=${BENCH_WARMUP:-3s}
ROUNDS=${BENCH_ROUNDS:-3}
TARGET_MS=${BENCH_TARGET_P99_MS:-10}
RESULTS=$ROOT/bench/results/listing.md
STRICT=0
for a in "$@"; do
  case $a in
    --strict) STRICT=1 ;;
    *) echo "bench/listing.sh: unknown argument $a" >&2; exit 2 ;;
  esac
done

# shellcheck source=bench/common.sh
source bench/common.sh
need_packages wrk
bench_init listing
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)

# --- two stores: "large" with OTHERS items of other users per table, "control" with none -----------------
KEYS=()
declare -A LABEL URL AUTH STORE_OF SERVER_OF
PASSWORD=bench-$(date +%s)-password
SEED_SECONDS=
for store in large control; do
  others=$OTHERS
  [ "$store" = large ] || others=0
  port=$(free_port)
  data=$TMP/data-$store
  base=http://127.0.0.1:$port
  # The server creates the store and the admin; the measured user comes through the API; then, with the server
  # stopped, the rows go straight into the file; then the server serves that store.
  run_quarry() {
    QUARRY_DATA_DIR=$data QUARRY_LISTEN=127.0.0.1:$port QUARRY_ADMIN_PASSWORD=$PASSWORD QUARRY_LOG_LEVEL=warn \
      start_server "Quarry ($store)" "$TMP/quarry-$store.log" "$base/api/test" "$BUN" run server/main.ts
  }
  echo "== $store store: Quarry on 127.0.0.1:$port (data in $data)"
  run_quarry
  read -r uid gid <<<"$("$BUN" run bench/listing-seed.ts user "$base" "$PASSWORD")"
  stop_server "$SERVER_PID"
  echo "== $store store: seeding $others dashboards and $others library entries of other users, 100 + 100 for the measured user"
  started=$SECONDS
  bounded 1800 "$BUN" run bench/listing-seed.ts rows "$data/quarry.db" "$others" "$uid" "$gid"
  [ "$store" = control ] || SEED_SECONDS=$((SECONDS - started))
  run_quarry
  SERVER_OF[$store]=$SERVER_PID
  jwt=$("$BUN" run bench/listing-seed.ts login "$base")
  for what in dashboards library; do
    key=$store-$what
    KEYS+=("$key")
    LABEL[$key]="GET /api/$what, $store store"
    URL[$key]=http://127.0.0.1:$port/api/$what
    AUTH[$key]="Authorization: Bearer $jwt"
    STORE_OF[$key]=$store
    n=$("$BUN" run bench/lib.ts count "${URL[$key]}" "${AUTH[$key]}")
    [ "$n" = 100 ] || { echo "bench/listing.sh: GET /api/$what on the $store store answers $n items, not 100" >&2; exit 1; }
  done
  if [ "$store" = large ]; then
    # Reference: the fixed cost of an authenticated request (framework, auth) under the same machine load.
    KEYS+=(large-whoami)
    LABEL[large-whoami]="GET /api/info/whoami, large store (reference)"
    URL[large-whoami]=$base/api/info/whoami
    AUTH[large-whoami]="Authorization: Bearer $jwt"
    STORE_OF[large-whoami]=large
  fi
done
DB_MB=$(du -sm "$TMP/data-large" | cut -f1)

# cpu_ticks PID: user + system CPU time of a process so far, in clock ticks (/proc/PID/stat fields 14 and 15).
cpu_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)

# --- load: a warm-up each, then rounds taking the targets in turn ---------------------------------------
# Each run also notes the server's CPU time per request (µs): unlike latency, it hardly moves when other jobs
# load the machine, so it shows the cost of a request itself.
declare -A RUNS CPU_RUNS
for k in "${KEYS[@]}"; do warm "$k" "${URL[$k]}" "${AUTH[$k]}"; done
for r in $(seq "$ROUNDS"); do
  echo "== round $r of $ROUNDS: wrk -t$THREADS -c$CONNS -d$DURATION --latency"
  for k in "${KEYS[@]}"; do
    pid=${SERVER_OF[${STORE_OF[$k]}]}
    before=$(cpu_ticks "$pid")
    measure "$k" "${URL[$k]}" "${AUTH[$k]}"
    after=$(cpu_ticks "$pid")
    requests=$(awk '/requests in/ {print $1}' "$TMP/wrk-$k.txt")
    cpu_us=$(awk -v t=$((after - before)) -v hz="$HZ" -v n="$requests" 'BEGIN {printf "%.0f", t * 1e6 / hz / n}')
    echo "      server CPU per request: $cpu_us µs"
    RUNS[$k]+="$RPS:$P50:$P99 "
    CPU_RUNS[$k]+="$cpu_us "
  done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
for pid in ${PIDS[@]+"${PIDS[@]}"}; do stop_server "$pid"; done
for store in large control; do
  if [ -s "$TMP/quarry-$store.log" ]; then echo "   Quarry ($store) logged (warn and above):"; sed 's/^/   | /' "$TMP/quarry-$store.log" | head -20; fi
done

# --- report ------------------------------------------------------------------------------------------
declare -A MED_RPS MED_P50 MED_P99
for k in "${KEYS[@]}"; do
  # shellcheck disable=SC2086 # one word per round
  IFS=: read -r "MED_RPS[$k]" "MED_P50[$k]" "MED_P99[$k]" <<<"$(median_round ${RUNS[$k]})"
done
VERDICT=met
declare -A MED_CPU
TABLE='| target | requests/s | p50 (ms) | p99 (ms) | p99 per round (ms) | server CPU per request (µs, median) |'$'\n''| --- | ---: | ---: | ---: | --- | ---: |'
for k in "${KEYS[@]}"; do
  per_round=$(for run in ${RUNS[$k]}; do echo "${run##*:}"; done | paste -sd' ')
  # shellcheck disable=SC2086 # one word per round
  MED_CPU[$k]=$(printf '%s\n' ${CPU_RUNS[$k]} | sort -n | awk '{ a[NR] = $0 } END { print a[int((NR + 1) / 2)] }')
  TABLE+=$'\n'"| ${LABEL[$k]} | ${MED_RPS[$k]} | ${MED_P50[$k]} | ${MED_P99[$k]} | $per_round | ${MED_CPU[$k]} |"
  if [[ $k == large-dashboards || $k == large-library ]] && ! awk -v p="${MED_P99[$k]}" -v t="$TARGET_MS" 'BEGIN {exit !(p < t)}'; then VERDICT="NOT met"; fi
done
SUMMARY="Target p99 under $TARGET_MS ms on the large store (median round): **$VERDICT**. Large / control store, server CPU per request: dashboards $(pct "${MED_CPU[large-dashboards]}" "${MED_CPU[control-dashboards]}") %, library $(pct "${MED_CPU[large-library]}" "${MED_CPU[control-library]}") %; p50: dashboards $(pct "${MED_P50[large-dashboards]}" "${MED_P50[control-dashboards]}") %, library $(pct "${MED_P50[large-library]}" "${MED_P50[control-library]}") %."
CPU=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
WRKV=$({ wrk -v 2>&1 || true; } | awk 'NR == 1 {print $2}')
BUNV=$("$BUN" --version)
CMD="wrk -t$THREADS -c$CONNS -d$DURATION --latency -H 'Authorization: Bearer <JWT of the measured user>' http://127.0.0.1:<port>/api/{dashboards,library}"

echo
echo "$TABLE"
echo
echo "$SUMMARY"
echo "load average before: $LOAD_BEFORE; after: $LOAD_AFTER"

if [ "${BENCH_NO_RECORD:-0}" != 1 ]; then
  mkdir -p "$(dirname "$RESULTS")"
  [ -s "$RESULTS" ] || printf '# GET /api/dashboards and GET /api/library for a user who sees 100 items\n\nAppended by `bash bench/listing.sh`, newest last.\n' >"$RESULTS"
  {
    echo
    echo "## $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "- machine: $(nproc) CPUs (nproc), $CPU, $(uname -sr); load average (1, 5, 15 min) before: $LOAD_BEFORE, after: $LOAD_AFTER (shared with other jobs)"
    echo "- Bun $BUNV, wrk $WRKV; Quarry with QUARRY_LOG_LEVEL=warn"
    echo "- data: large store: $OTHERS dashboards and $OTHERS library entries of 1,000 other users (half shared with other groups, 1 % of the entries global), seeded in ${SEED_SECONDS} s, $DB_MB MB on disk; control store: none. Both: the measured user sees 100 dashboards (40 own, 30 shared with its group, 30 global) and owns 100 library entries"
    echo "- command: \`$CMD\`, $WARMUP warm-up per target, then $ROUNDS rounds taking the targets in turn; medians shown"
    echo
    echo "$TABLE"
    echo
    echo "$SUMMARY"
  } >>"$RESULTS"
  echo "appended to ${RESULTS#"$ROOT"/}"
fi

if [ "$STRICT" -eq 1 ] && [ "$VERDICT" != met ]; then exit 1; fi
