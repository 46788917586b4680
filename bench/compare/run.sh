#!/usr/bin/env bash
# Issue 17's request table: Quarry against a raw Bun.serve + bun:sqlite (bench/compare/raw-bun.ts) and against
# Fastify + better-sqlite3 on Node (bench/compare/fastify.mjs), both doing Quarry's work per request
# (bench/compare/work.mjs), on the same database file with the same JWT. See bench/README.md ("Quarry against a
# raw server and Fastify").
#
#   bash bench/compare/run.sh            prints the table of ratios; appends it to bench/results/compare.md
#   bash bench/compare/run.sh --strict   exit 1 when a goal of the issue is missed
#
# Tunables (environment): BENCH_CONNECTIONS (32; whoami and one dashboard), BENCH_LIST_CONNECTIONS (4; the listing), BENCH_DURATION (5s), BENCH_WARMUP (3s), BENCH_ROUNDS (5),
# BENCH_NO_RECORD=1. The three servers run at once on one store; each round loads every (path, server) pair in
# turn, one at a time, so that the machine's drift hits all alike; ratios are of median rounds, and the spread is
# the range of the per-round ratios. The baselines' dependencies (bench/compare/package.json, exact versions) are
# installed on first use into bench/compare/node_modules: better-sqlite3 builds from source here (minutes).
set -Eeuo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUN=$ROOT/node_modules/.bin/bun
[ -x "$BUN" ] || { echo "bench/compare/run.sh: Bun is missing; run 'npm ci' first" >&2; exit 2; }
command -v node >/dev/null || { echo "bench/compare/run.sh: node is missing (the Fastify baseline runs on Node)" >&2; exit 2; }

THREADS=1
CONNS_SMALL=${BENCH_CONNECTIONS:-32}
# The listing answers 88 KB; like bench/listing.sh it is loaded with 4 connections.
CONNS_LIST=${BENCH_LIST_CONNECTIONS:-4}
DURATION=${BENCH_DURATION:-5s}
WARMUP=${BENCH_WARMUP:-3s}
ROUNDS=${BENCH_ROUNDS:-5}
RESULTS=$ROOT/bench/results/compare.md
STRICT=0
for a in "$@"; do
  case $a in
    --strict) STRICT=1 ;;
    *) echo "bench/compare/run.sh: unknown argument $a" >&2; exit 2 ;;
  esac
done

# shellcheck source=bench/common.sh
source bench/common.sh
# As common.sh's, with a 10 s timeout: on a loaded machine a 100-dashboard listing can take over wrk's default 2 s.
wrk_args() { # URL [HEADER]
  WRK_ARGS=(-t"$THREADS" -c"$CONNS" --timeout 10s)
  [ -z "${2:-}" ] || WRK_ARGS+=(-H "$2")
}
need_packages wrk
if [ ! -e bench/compare/node_modules/better-sqlite3/build/Release/better_sqlite3.node ] || [ ! -d bench/compare/node_modules/fastify ]; then
  echo "== installing bench/compare's packages (better-sqlite3 builds from source: a few minutes)"
  (cd bench/compare && npm ci --no-audit --no-fund)
fi
bench_init compare
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)

# --- Quarry, seeded; then the baselines on the same file ------------------------------------------------
DATA=$TMP/data
PASSWORD=bench-$(date +%s)-password
QPORT=$(free_port)
echo "== starting Quarry on 127.0.0.1:$QPORT (data in $DATA)"
QUARRY_DATA_DIR=$DATA QUARRY_LISTEN=127.0.0.1:$QPORT QUARRY_ADMIN_PASSWORD=$PASSWORD QUARRY_LOG_LEVEL=warn \
  start_server Quarry "$TMP/quarry.log" "http://127.0.0.1:$QPORT/api/test" "$BUN" run server/main.ts
eval "$("$BUN" run bench/compare/seed.ts "http://127.0.0.1:$QPORT" "$PASSWORD")"
RPORT=$(free_port)
COMPARE_DB=$DATA/quarry.db COMPARE_PORT=$RPORT start_server raw "$TMP/raw.log" "http://127.0.0.1:$RPORT/api/test" "$BUN" run bench/compare/raw-bun.ts
FPORT=$(free_port)
COMPARE_DB=$DATA/quarry.db COMPARE_PORT=$FPORT start_server fastify "$TMP/fastify.log" "http://127.0.0.1:$FPORT/api/test" node bench/compare/fastify.mjs

SERVERS=(quarry raw fastify)
declare -A PORT=([quarry]=$QPORT [raw]=$RPORT [fastify]=$FPORT)
PATHS=(whoami dashboard dashboards)
declare -A ROUTE=([whoami]=/api/info/whoami [dashboard]=/api/dashboards/$DASHBOARD_ID [dashboards]=/api/dashboards)
declare -A TITLE=([whoami]='`GET /api/info/whoami` (JWT)' [dashboard]='`GET /api/dashboards/{id}`' [dashboards]='`GET /api/dashboards`, 100 visible')
declare -A GOAL_RAW=([whoami]=0.85 [dashboard]=0.85 [dashboards]=0.90)
declare -A GOAL_FASTIFY=([whoami]=2.5 [dashboard]=2.5 [dashboards]=2.0)
AUTH="Authorization: Bearer $JWT"

# Every answer must be Quarry's, byte for byte (whoami's TS aside: the last activity moves while Quarry serves).
for p in "${PATHS[@]}"; do
  "$BUN" run bench/lib.ts body "http://127.0.0.1:$QPORT${ROUTE[$p]}" "$AUTH" >"$TMP/q-$p.json"
  for s in raw fastify; do
    "$BUN" run bench/lib.ts body "http://127.0.0.1:${PORT[$s]}${ROUTE[$p]}" "$AUTH" >"$TMP/$s-$p.json"
    cmp -s "$TMP/q-$p.json" "$TMP/$s-$p.json" || {
      echo "bench/compare/run.sh: $s answers $p differently from Quarry:" >&2
      diff <(tr ',' '\n' <"$TMP/q-$p.json") <(tr ',' '\n' <"$TMP/$s-$p.json") | head -20 >&2
      exit 1
    }
  done
  echo "   $p: the three answers are equal ($(wc -c <"$TMP/q-$p.json") bytes)"
done

# --- load ---------------------------------------------------------------------------------------------
declare -A RUNS
conns_for() { if [ "$1" = dashboards ]; then CONNS=$CONNS_LIST; else CONNS=$CONNS_SMALL; fi; }
for p in "${PATHS[@]}"; do conns_for "$p"; for s in "${SERVERS[@]}"; do warm "$s $p" "http://127.0.0.1:${PORT[$s]}${ROUTE[$p]}" "$AUTH"; done; done
LOADS=()
for r in $(seq "$ROUNDS"); do
  echo "== round $r of $ROUNDS: wrk -t$THREADS -c$CONNS_SMALL (listing -c$CONNS_LIST) -d$DURATION (load average $(cut -d' ' -f1 /proc/loadavg))"
  LOADS+=("$(cut -d' ' -f1 /proc/loadavg)")
  for p in "${PATHS[@]}"; do
    conns_for "$p"
    for s in "${SERVERS[@]}"; do
      measure "$s $p" "http://127.0.0.1:${PORT[$s]}${ROUTE[$p]}" "$AUTH"
      RUNS[$s-$p]+="$RPS "
    done
  done
done
for pid in ${PIDS[@]+"${PIDS[@]}"}; do stop_server "$pid"; done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

# --- report -------------------------------------------------------------------------------------------
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $0 } END { print a[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
# spread A-RUNS B-RUNS: min–max of the per-round ratios
spread() {
  local -a a b
  read -r -a a <<<"$1"
  read -r -a b <<<"$2"
  local i out=()
  for i in "${!a[@]}"; do out+=("$(ratio "${a[$i]}" "${b[$i]}")"); done
  printf '%s\n' "${out[@]}" | sort -n | awk 'NR == 1 {lo = $0} {hi = $0} END {printf "%s–%s", lo, hi}'
}
ok=1
TABLE='| path | Quarry req/s | raw Bun req/s | Fastify req/s | Quarry / raw Bun (rounds) | Quarry / Fastify (rounds) | goal | verdict |'$'\n''| --- | ---: | ---: | ---: | --- | --- | --- | --- |'
for p in "${PATHS[@]}"; do
  # shellcheck disable=SC2086 # one word per round
  q=$(median ${RUNS[quarry-$p]}) rw=$(median ${RUNS[raw-$p]}) f=$(median ${RUNS[fastify-$p]})
  qr=$(ratio "$q" "$rw") qf=$(ratio "$q" "$f")
  if awk -v a="$qr" -v b="$qf" -v ga="${GOAL_RAW[$p]}" -v gb="${GOAL_FASTIFY[$p]}" 'BEGIN {exit !(a >= ga && b >= gb)}'; then v=met; else v='**not met**'; ok=0; fi
  TABLE+=$'\n'"| ${TITLE[$p]} | $q | $rw | $f | **$qr** ($(spread "${RUNS[quarry-$p]}" "${RUNS[raw-$p]}")) | **$qf** ($(spread "${RUNS[quarry-$p]}" "${RUNS[fastify-$p]}")) | ≥ ${GOAL_RAW[$p]} and ≥ ${GOAL_FASTIFY[$p]}× | $v |"
done
NOTE="wrk -t$THREADS -c$CONNS_SMALL (the listing -c$CONNS_LIST), $ROUNDS rounds of $DURATION per (path, server), interleaved; medians, per-round range in brackets. 1-min load average: $LOAD_START at the start, ${LOADS[*]} at each round, $LOAD_END at the end."
echo
echo "$TABLE"
echo
echo "$NOTE"
if [ "${BENCH_NO_RECORD:-0}" != 1 ]; then
  [ -s "$RESULTS" ] || printf '# Quarry against a raw Bun.serve and Fastify (bench/compare/run.sh)\n\nNewest last.\n' >"$RESULTS"
  {
    echo
    echo "## $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
    echo
    echo "- machine: $(nproc) CPUs, $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo), Bun $("$BUN" --version), Node $(node --version), wrk $({ wrk -v 2>&1 || true; } | awk 'NR == 1 {print $2}')"
    echo
    echo "$TABLE"
    echo
    echo "$NOTE"
  } >>"$RESULTS"
  echo "appended to ${RESULTS#"$ROOT"/}"
fi
if [ "$STRICT" -eq 1 ] && [ "$ok" -ne 1 ]; then exit 1; fi
exit 0
