#!/usr/bin/env bash
# Benchmark (docs/cluster.md): GET /api/info/whoami (JWT) and GET /api/dashboards/{id} on
#   sqlite     one replica on SQLite with the disk blob store (no cluster variables),
#   pg         one replica on PostgreSQL + S3, started as a cluster replica, loaded directly,
#   pg-proxy   the same replica through HAProxy (round-robin over one server: the proxy's own cost),
#   pg-3       three replicas on the same PostgreSQL + S3, round-robin through the same HAProxy;
# in one run, each round loading every configuration in turn (one at a time, the others idle), each reported by
# its median round. Ratios: pg / sqlite, and pg-3 / pg-proxy (same path, one vs three replicas). See bench/README.md.
#
#   bash bench/cluster.sh      one run; appends a block to bench/results/cluster.md
#
# Tunables (environment): BENCH_THREADS (1), BENCH_CONNECTIONS (32), BENCH_DURATION (3s), BENCH_WARMUP (2s),
# BENCH_ROUNDS (5), BENCH_NO_RECORD=1. Everything listens on loopback only; every load run is bounded by `timeout`.
set -Eeuo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUN=$ROOT/node_modules/.bin/bun
[ -x "$BUN" ] || { echo "bench/cluster.sh: Bun is missing; run 'npm ci' first" >&2; exit 2; }
THREADS=${BENCH_THREADS:-1}
CONNS=${BENCH_CONNECTIONS:-32}
DURATION=${BENCH_DURATION:-3s}
WARMUP=${BENCH_WARMUP:-2s}
ROUNDS=${BENCH_ROUNDS:-5}
RESULTS=$ROOT/bench/results/cluster.md
PASSWORD=bench-$(date +%s)-password
CLUSTER_SECRET=bench-cluster-secret-0123456789abcdef

# shellcheck source=bench/common.sh
source bench/common.sh
no_target_args cluster.sh "$@"
need_packages wrk haproxy
bench_init cluster
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
start_stores
DB=bench_cluster_$(date +%s)
PGURL=$("$BUN" run bench/lib.ts database "$QUARRY_TEST_DATABASE_URL" "$DB")
trap 'for p in ${PIDS[@]+"${PIDS[@]}"}; do stop_server "$p"; done; "$BUN" run bench/lib.ts drop-database "$QUARRY_TEST_DATABASE_URL" "$DB" || true; stop_stores; bench_cleanup' EXIT

# replica NAME [pg]: starts Quarry (on PostgreSQL + S3 as a cluster replica with `pg`, else SQLite + disk); sets BASE.
replica() {
  local port env=()
  port=$(free_port)
  BASE=http://127.0.0.1:$port
  # The test stores' variables are this script's, not the server's (it would warn about each).
  env=(-u QUARRY_TEST_DATABASE_URL -u QUARRY_TEST_S3_ENDPOINT -u QUARRY_TEST_S3_BUCKET -u QUARRY_TEST_S3_ACCESS_KEY
    -u QUARRY_TEST_S3_SECRET_KEY -u QUARRY_TEST_S3_REGION QUARRY_DATA_DIR="$TMP/$1" QUARRY_LISTEN="127.0.0.1:$port" QUARRY_ADMIN_PASSWORD="$PASSWORD" QUARRY_LOG_LEVEL=warn)
  if [ "${2:-}" = pg ]; then
    env+=(QUARRY_DATABASE_URL="$PGURL" QUARRY_CLUSTER_SECRET="$CLUSTER_SECRET" QUARRY_ADVERTISE="$BASE"
      QUARRY_S3_ENDPOINT="$QUARRY_TEST_S3_ENDPOINT" QUARRY_S3_BUCKET="$QUARRY_TEST_S3_BUCKET"
      QUARRY_S3_ACCESS_KEY="$QUARRY_TEST_S3_ACCESS_KEY" QUARRY_S3_SECRET_KEY="$QUARRY_TEST_S3_SECRET_KEY"
      QUARRY_S3_REGION="${QUARRY_TEST_S3_REGION:-us-east-1}")
  fi
  echo "== starting $1 on $BASE"
  start_server "$1" "$TMP/$1.log" "$BASE/api/test" env "${env[@]}" "$BUN" run server/main.ts
}

# proxy NAME BASE...: HAProxy on a free loopback port, round-robin over BASE...; sets BASE to the proxy.
proxy() {
  local name=$1 port i=0 b
  shift
  port=$(free_port)
  {
    printf 'global\n  maxconn 4096\n  nbthread 1\ndefaults\n  mode http\n  timeout connect 5s\n  timeout client 60s\n  timeout server 60s\n'
    printf 'frontend f\n  bind 127.0.0.1:%s\n  default_backend replicas\nbackend replicas\n  balance roundrobin\n' "$port"
    for b in "$@"; do i=$((i + 1)); printf '  server r%s %s\n' "$i" "${b#http://}"; done
  } >"$TMP/$name.cfg"
  BASE=http://127.0.0.1:$port
  echo "== starting HAProxy $name on $BASE over $*"
  start_server "$name" "$TMP/$name.log" "$BASE/api/test" haproxy -db -f "$TMP/$name.cfg"
}

replica sqlite
SQLITE=$BASE
replica pg1 pg
PG1=$BASE
replica pg2 pg
PG2=$BASE
replica pg3 pg
PG3=$BASE
proxy proxy1 "$PG1"
PROXY1=$BASE
proxy proxy3 "$PG1" "$PG2" "$PG3"
PROXY3=$BASE

# Same seed on both stores: admin in two groups, one dashboard.
SJWT=$("$BUN" run bench/lib.ts seed "$SQLITE" "$PASSWORD")
SDASH=$("$BUN" run bench/lib.ts dashboard "$SQLITE" "$SJWT")
PJWT=$("$BUN" run bench/lib.ts seed "$PG1" "$PASSWORD")
PDASH=$("$BUN" run bench/lib.ts dashboard "$PG1" "$PJWT")

KEYS=()
declare -A URL AUTH EXPECT
# add_target KEY BASE JWT DASHBOARD-ID: KEY.whoami and KEY.dashboard.
add_target() {
  KEYS+=("$1.whoami" "$1.dashboard")
  URL[$1.whoami]=$2/api/info/whoami
  URL[$1.dashboard]=$2/api/dashboards/$4
  AUTH[$1.whoami]="Authorization: Bearer $3"
  AUTH[$1.dashboard]="Authorization: Bearer $3"
}
add_target sqlite "$SQLITE" "$SJWT" "$SDASH"
add_target pg "$PG1" "$PJWT" "$PDASH"
add_target pg-proxy "$PROXY1" "$PJWT" "$PDASH"
add_target pg-3 "$PROXY3" "$PJWT" "$PDASH"

# Answers before load: 200 and the expected body. Every PostgreSQL path (each replica directly, each proxy, several
# times through the round-robin) answers what replica 1 answers; SQLite's whoami answers the same user and groups.
echo "== checking the answers"
body() { "$BUN" run bench/lib.ts body "$1" "$2"; }
check() { # NAME URL HEADER EXPECTED
  local got
  got=$(body "$2" "$3")
  [ "$got" = "$4" ] || { printf 'bench/cluster.sh: %s answers differently:\n  expected: %s\n  got:      %s\n' "$1" "$4" "$got" >&2; exit 1; }
}
for what in whoami dashboard; do
  EXPECT[$what]=$(body "${URL[pg.$what]}" "${AUTH[pg.$what]}")
  echo "   $what: ${EXPECT[$what]:0:160}"
  for b in "$PG2" "$PG3" "$PROXY1" "$PROXY3" "$PROXY3" "$PROXY3"; do
    check "$b ($what)" "${URL[pg.$what]/$PG1/$b}" "${AUTH[pg.$what]}" "${EXPECT[$what]}"
  done
  body "${URL[sqlite.$what]}" "${AUTH[sqlite.$what]}" >/dev/null
done
check "SQLite (whoami)" "${URL[sqlite.whoami]}" "${AUTH[sqlite.whoami]}" "${EXPECT[whoami]}"

# --- load ------------------------------------------------------------------------------------------------
declare -A RUNS
for k in "${KEYS[@]}"; do warm "$k" "${URL[$k]}" "${AUTH[$k]}"; done
LOADS=()
for r in $(seq "$ROUNDS"); do
  echo "== round $r of $ROUNDS: wrk -t$THREADS -c$CONNS -d$DURATION --latency (load $(cut -d' ' -f1 /proc/loadavg))"
  LOADS+=("$(cut -d' ' -f1 /proc/loadavg)")
  for k in "${KEYS[@]}"; do
    measure "$k" "${URL[$k]}" "${AUTH[$k]}"
    RUNS[$k]+="$RPS:$P50:$P99 "
  done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
for f in "$TMP"/sqlite.log "$TMP"/pg?.log; do
  if [ -s "$f" ]; then echo "   ${f##*/} (warn and above):"; sed 's/^/   | /' "$f" | head -10; fi
done

# --- report ------------------------------------------------------------------------------------------------
declare -A MED
# spread KEY: min-max of the rounds' requests/s.
spread() { tr ' ' '\n' <<<"${RUNS[$1]}" | awk -F: 'NF { if (min == "" || $1 < min) min = $1; if ($1 > max) max = $1 } END { print min "-" max }'; }
# ratios A B: the per-round ratios A/B of requests/s, and their median.
ratios() {
  local a b i out=()
  read -r -a a <<<"${RUNS[$1]}"
  read -r -a b <<<"${RUNS[$2]}"
  for i in "${!a[@]}"; do out+=("$(awk -v x="${a[$i]%%:*}" -v y="${b[$i]%%:*}" 'BEGIN {printf "%.2f", x / y}')"); done
  printf '%s\n' "${out[@]}" | sort -n | awk '{ v[NR] = $0; all = all (NR > 1 ? ", " : "") $0 } END { printf "**%s** (rounds, sorted: %s)", v[int((NR + 1) / 2)], all }'
}
TABLE='| configuration | request | requests/s (median) | rounds min-max | p50 (ms) | p99 (ms) |'$'\n''| --- | --- | ---: | ---: | ---: | ---: |'
for k in "${KEYS[@]}"; do
  # shellcheck disable=SC2086 # one word per round
  MED[$k]=$(median_round ${RUNS[$k]})
  IFS=: read -r rps p50 p99 <<<"${MED[$k]}"
  TABLE+=$'\n'"| ${k%.*} | ${k#*.} | $rps | $(spread "$k") | $p50 | $p99 |"
done
SUMMARY=''
for what in whoami dashboard; do
  SUMMARY+="- $what: PostgreSQL / SQLite (one replica, direct) $(ratios "pg.$what" "sqlite.$what"); "
  SUMMARY+="3 replicas / 1 replica (both through HAProxy) $(ratios "pg-3.$what" "pg-proxy.$what"); "
  SUMMARY+="HAProxy / direct (one replica) $(ratios "pg-proxy.$what" "pg.$what")"$'\n'
done
echo
echo "$TABLE"
echo
echo "$SUMMARY"

if [ "${BENCH_NO_RECORD:-0}" != 1 ]; then
  [ -s "$RESULTS" ] || printf '# whoami and a dashboard GET: SQLite vs PostgreSQL, 1 vs 3 replicas (docs/cluster.md)\n\nAppended by `bash bench/cluster.sh`, newest last.\n' >"$RESULTS"
  {
    echo
    echo "## $(date -u '+%Y-%m-%d %H:%M UTC'): bash bench/cluster.sh"
    echo
    echo "- machine: $(nproc) CPUs ($(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)), $(uname -sr); Bun $("$BUN" --version), $(haproxy -v | awk 'NR == 1 {print $1, $2, $3}')"
    echo "- load average (1, 5, 15 min): $LOAD_BEFORE before, $LOAD_AFTER after; 1-min at each round's start: ${LOADS[*]}"
    echo "- command: \`wrk -t$THREADS -c$CONNS -d$DURATION --latency -H 'Authorization: Bearer <JWT>' <url>\`, $WARMUP warm-up each, $ROUNDS rounds taking the 8 targets in turn; medians"
    echo "- PostgreSQL (test/pg-server.sh) and the S3 gateway (test/s3-server.sh) on the same machine; HAProxy nbthread 1, roundrobin"
    echo
    echo "$TABLE"
    echo
    echo "$SUMMARY"
  } >>"$RESULTS"
  echo "appended to ${RESULTS#"$ROOT"/}"
fi
