#!/usr/bin/env bash
# Issue 17's request table: Quarry against a raw Bun.serve + bun:sqlite (bench/compare/raw-bun.ts) and against
# Fastify + better-sqlite3 on Node (bench/compare/fastify.mjs), both doing Quarry's work per request
# (bench/compare/work.mjs), on the same database file with the same JWT. See bench/README.md ("Quarry against a
# raw server and Fastify").
#
#   bash bench/compare/run.sh            prints the table of ratios; appends it to bench/results/compare.md
#   bash bench/compare/run.sh --strict   exit 1 when a goal of the issue is missed
#   bash bench/compare/run.sh --before DIR   also another tree's Quarry (DIR, e.g. `git worktree add DIR main`, with
#                                        DIR/node_modules) on the same store, in the same rounds: an A/B of a change
#   bash bench/compare/run.sh --no-fastify   without the Fastify baseline (no better-sqlite3 build)
#   bash bench/compare/run.sh --elysia   also bench/compare/elysia-floor.ts: the raw work in a hookless Elysia app
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

THREADS=1
CONNS_SMALL=${BENCH_CONNECTIONS:-32}
# The listing answers 88 KB; like bench/listing.sh it is loaded with 4 connections.
CONNS_LIST=${BENCH_LIST_CONNECTIONS:-4}
DURATION=${BENCH_DURATION:-5s}
WARMUP=${BENCH_WARMUP:-3s}
ROUNDS=${BENCH_ROUNDS:-5}
RESULTS=$ROOT/bench/results/compare.md
STRICT=0
BEFORE=
FASTIFY=1
ELYSIA=0
while [ $# -gt 0 ]; do
  case $1 in
    --strict) STRICT=1 ;;
    --no-fastify) FASTIFY=0 ;;
    --elysia) ELYSIA=1 ;;
    --before)
      BEFORE=$(cd "${2:?--before needs a directory}" && pwd)
      [ -e "$BEFORE/server/main.ts" ] && [ -x "$BEFORE/node_modules/.bin/bun" ] || { echo "bench/compare/run.sh: $BEFORE is no Quarry tree with node_modules" >&2; exit 2; }
      shift ;;
    *) echo "bench/compare/run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
[ "$FASTIFY" -eq 0 ] || command -v node >/dev/null || { echo "bench/compare/run.sh: node is missing (the Fastify baseline runs on Node)" >&2; exit 2; }

# shellcheck source=bench/common.sh
source bench/common.sh
# As common.sh's, with a 10 s timeout: on a loaded machine a 100-dashboard listing can take over wrk's default 2 s.
wrk_args() { # URL [HEADER]
  WRK_ARGS=(-t"$THREADS" -c"$CONNS" --timeout 10s)
  [ -z "${2:-}" ] || WRK_ARGS+=(-H "$2")
}
need_packages wrk
if [ "$FASTIFY" -eq 1 ] && { [ ! -e bench/compare/node_modules/better-sqlite3/build/Release/better_sqlite3.node ] || [ ! -d bench/compare/node_modules/fastify ]; }; then
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
if [ -n "$BEFORE" ]; then
  # A data directory serves one server: the before tree's Quarry gets a copy of the seeded one (same signing key,
  # sessions and rows), made while Quarry is stopped.
  stop_server "${PIDS[0]}"
  cp -a "$DATA" "$TMP/data-before"
  rm -f "$TMP"/data-before/*.lock "$TMP"/data-before/*.pid 2>/dev/null || true
  QUARRY_DATA_DIR=$DATA QUARRY_LISTEN=127.0.0.1:$QPORT QUARRY_LOG_LEVEL=warn \
    start_server Quarry "$TMP/quarry.log" "http://127.0.0.1:$QPORT/api/test" "$BUN" run server/main.ts
fi
QPID=$SERVER_PID
RPORT=$(free_port)
COMPARE_DB=$DATA/quarry.db COMPARE_PORT=$RPORT start_server raw "$TMP/raw.log" "http://127.0.0.1:$RPORT/api/test" "$BUN" run bench/compare/raw-bun.ts
SERVERS=(quarry raw)
declare -A PORT=([quarry]=$QPORT [raw]=$RPORT)
declare -A SPID=([quarry]=$QPID [raw]=$SERVER_PID)
if [ "$FASTIFY" -eq 1 ]; then
  FPORT=$(free_port)
  COMPARE_DB=$DATA/quarry.db COMPARE_PORT=$FPORT start_server fastify "$TMP/fastify.log" "http://127.0.0.1:$FPORT/api/test" node bench/compare/fastify.mjs
  SERVERS+=(fastify) PORT[fastify]=$FPORT SPID[fastify]=$SERVER_PID
fi
if [ "$ELYSIA" -eq 1 ]; then
  EPORT=$(free_port)
  COMPARE_DB=$DATA/quarry.db COMPARE_PORT=$EPORT start_server elysia "$TMP/elysia.log" "http://127.0.0.1:$EPORT/api/test" "$BUN" run bench/compare/elysia-floor.ts
  SERVERS+=(elysia) PORT[elysia]=$EPORT SPID[elysia]=$SERVER_PID
fi
if [ -n "$BEFORE" ]; then
  # The other tree's Quarry on the same store (the same JWT signing key and sessions): only the code differs.
  BPORT=$(free_port)
  echo "== starting Quarry from $BEFORE (commit $(git -C "$BEFORE" rev-parse --short HEAD 2>/dev/null || echo '?')) on 127.0.0.1:$BPORT"
  (cd "$BEFORE" && QUARRY_DATA_DIR=$TMP/data-before QUARRY_LISTEN=127.0.0.1:$BPORT QUARRY_LOG_LEVEL=warn \
    exec "$BEFORE/node_modules/.bin/bun" run server/main.ts) >"$TMP/before.log" 2>&1 &
  SERVER_PID=$!
  PIDS+=("$SERVER_PID")
  "$BUN" run bench/lib.ts wait "http://127.0.0.1:$BPORT/api/test" 30 || { echo "bench/compare/run.sh: the before tree's Quarry did not start:" >&2; cat "$TMP/before.log" >&2; exit 1; }
  SERVERS+=(before) PORT[before]=$BPORT SPID[before]=$SERVER_PID
fi
# CPU time (user + system, all threads) of a server so far, in clock ticks: per request it moves far less with the
# machine's load than requests/s does.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
TICK_US=$(awk -v t="$(getconf CLK_TCK)" 'BEGIN {print 1000000 / t}')
read -r -a PATHS <<<"${BENCH_PATHS:-whoami dashboard dashboards}"
declare -A ROUTE=([whoami]=/api/info/whoami [dashboard]=/api/dashboards/$DASHBOARD_ID [dashboards]=/api/dashboards)
declare -A TITLE=([whoami]='`GET /api/info/whoami` (JWT)' [dashboard]='`GET /api/dashboards/{id}`' [dashboards]='`GET /api/dashboards`, 100 visible')
declare -A GOAL_RAW=([whoami]=0.85 [dashboard]=0.85 [dashboards]=0.90)
declare -A GOAL_FASTIFY=([whoami]=2.5 [dashboard]=2.5 [dashboards]=2.0)
AUTH="Authorization: Bearer $JWT"

# Every answer must be Quarry's, byte for byte (whoami's TS aside: the last activity moves while Quarry serves), and
# carry the same headers (the security headers, the JSON type, the request id the check sends: bench/lib.ts answer).
for p in "${PATHS[@]}"; do
  "$BUN" run bench/lib.ts answer "http://127.0.0.1:$QPORT${ROUTE[$p]}" "$AUTH" >"$TMP/q-$p.json"
  for s in "${SERVERS[@]:1}"; do
    "$BUN" run bench/lib.ts answer "http://127.0.0.1:${PORT[$s]}${ROUTE[$p]}" "$AUTH" >"$TMP/$s-$p.json"
    cmp -s "$TMP/q-$p.json" "$TMP/$s-$p.json" || {
      echo "bench/compare/run.sh: $s answers $p differently from Quarry:" >&2
      diff <(tr ',' '\n' <"$TMP/q-$p.json") <(tr ',' '\n' <"$TMP/$s-$p.json") | head -20 >&2
      exit 1
    }
  done
  echo "   $p: the three answers are equal ($(wc -c <"$TMP/q-$p.json") bytes)"
done

# --- load ---------------------------------------------------------------------------------------------
declare -A RUNS CPUS
conns_for() { if [ "$1" = dashboards ]; then CONNS=$CONNS_LIST; else CONNS=$CONNS_SMALL; fi; }
for p in "${PATHS[@]}"; do conns_for "$p"; for s in "${SERVERS[@]}"; do warm "$s $p" "http://127.0.0.1:${PORT[$s]}${ROUTE[$p]}" "$AUTH"; done; done
LOADS=()
for r in $(seq "$ROUNDS"); do
  echo "== round $r of $ROUNDS: wrk -t$THREADS -c$CONNS_SMALL (listing -c$CONNS_LIST) -d$DURATION (load average $(cut -d' ' -f1 /proc/loadavg))"
  LOADS+=("$(cut -d' ' -f1 /proc/loadavg)")
  for p in "${PATHS[@]}"; do
    conns_for "$p"
    for s in "${SERVERS[@]}"; do
      c0=$(cpu_ticks "${SPID[$s]}")
      measure "$s $p" "http://127.0.0.1:${PORT[$s]}${ROUTE[$p]}" "$AUTH"
      c1=$(cpu_ticks "${SPID[$s]}")
      RUNS[$s-$p]+="$RPS "
      # µs of server CPU per request: ticks over the run / (requests/s × seconds)
      CPUS[$s-$p]+="$(awk -v a="$c0" -v b="$c1" -v t="$TICK_US" -v r="$RPS" -v d="${DURATION%s}" 'BEGIN {printf "%.1f", (b - a) * t / (r * d)}') "
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
has() { [[ " ${SERVERS[*]} " == *" $1 "* ]]; }
# cpu A B: median µs of server CPU per request of A, and B's median over A's ("raw/quarry": the CPU ratio, read like the
# requests/s ratio: 1.00 when Quarry costs the raw server's CPU per request)
TABLE='| path | Quarry req/s | raw Bun req/s | Quarry / raw Bun (rounds) | CPU µs/request Quarry, raw | raw CPU / Quarry CPU |'
SEP='| --- | ---: | ---: | --- | --- | ---: |'
if has fastify; then TABLE+=' Fastify req/s | Quarry / Fastify (rounds) |'; SEP+=' ---: | --- |'; fi
if has elysia; then TABLE+=' Elysia floor req/s | Quarry / Elysia floor (rounds) | Elysia floor CPU µs/request |'; SEP+=' ---: | --- | ---: |'; fi
if has before; then TABLE+=' before req/s | before / raw Bun (rounds) | before CPU µs/request | raw CPU / before CPU | after / before (rounds) |'; SEP+=' ---: | --- | ---: | ---: | --- |'; fi
TABLE+=' goal | verdict |'; SEP+=' --- | --- |'
TABLE+=$'\n'"$SEP"
for p in "${PATHS[@]}"; do
  # shellcheck disable=SC2086 # one word per round
  q=$(median ${RUNS[quarry-$p]}) rw=$(median ${RUNS[raw-$p]})
  # shellcheck disable=SC2086
  qc=$(median ${CPUS[quarry-$p]}) rc=$(median ${CPUS[raw-$p]})
  qr=$(ratio "$q" "$rw") qf=99
  row="| ${TITLE[$p]} | $q | $rw | **$qr** ($(spread "${RUNS[quarry-$p]}" "${RUNS[raw-$p]}")) | $qc, $rc | $(ratio "$rc" "$qc") |"
  if has fastify; then
    # shellcheck disable=SC2086
    f=$(median ${RUNS[fastify-$p]}); qf=$(ratio "$q" "$f")
    row+=" $f | **$qf** ($(spread "${RUNS[quarry-$p]}" "${RUNS[fastify-$p]}")) |"
  fi
  if has elysia; then
    # shellcheck disable=SC2086
    e=$(median ${RUNS[elysia-$p]}) ec=$(median ${CPUS[elysia-$p]})
    row+=" $e | $(ratio "$q" "$e") ($(spread "${RUNS[quarry-$p]}" "${RUNS[elysia-$p]}")) | $ec |"
  fi
  if has before; then
    # shellcheck disable=SC2086
    b=$(median ${RUNS[before-$p]}) bc=$(median ${CPUS[before-$p]})
    row+=" $b | $(ratio "$b" "$rw") ($(spread "${RUNS[before-$p]}" "${RUNS[raw-$p]}")) | $bc | $(ratio "$rc" "$bc") | $(ratio "$q" "$b") ($(spread "${RUNS[quarry-$p]}" "${RUNS[before-$p]}")) |"
  fi
  if awk -v a="$qr" -v b="$qf" -v ga="${GOAL_RAW[$p]}" -v gb="${GOAL_FASTIFY[$p]}" 'BEGIN {exit !(a >= ga && b >= gb)}'; then v=met; else v='**not met**'; ok=0; fi
  has fastify || v="$v (raw Bun only)"
  TABLE+=$'\n'"$row ≥ ${GOAL_RAW[$p]} and ≥ ${GOAL_FASTIFY[$p]}× | $v |"
done
NOTE="${BEFORE:+before: $BEFORE at commit $(git -C "$BEFORE" rev-parse --short HEAD 2>/dev/null || echo '?'); }wrk -t$THREADS -c$CONNS_SMALL (the listing -c$CONNS_LIST), $ROUNDS rounds of $DURATION per (path, server), interleaved; medians, per-round range in brackets. 1-min load average: $LOAD_START at the start, ${LOADS[*]} at each round, $LOAD_END at the end."
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
    echo "- machine: $(nproc) CPUs, $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo), Bun $("$BUN" --version), Node $(node --version 2>/dev/null || echo '-'), wrk $({ wrk -v 2>&1 || true; } | awk 'NR == 1 {print $2}')"
    echo
    echo "$TABLE"
    echo
    echo "$NOTE"
  } >>"$RESULTS"
  echo "appended to ${RESULTS#"$ROOT"/}"
fi
if [ "$STRICT" -eq 1 ] && [ "$ok" -ne 1 ]; then exit 1; fi
exit 0
