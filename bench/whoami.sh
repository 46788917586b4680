#!/usr/bin/env bash
# Benchmark: GET /api/info/whoami on Quarry against a bare Bun.serve that answers the same JSON from the
# same SQLite file without a framework or authentication (bench/bare-whoami.ts). See bench/README.md.
#
#   bash bench/whoami.sh               Quarry vs bare; appends a block to bench/results/whoami.md
#   bash bench/whoami.sh --variants    also variants that locate the gap: bare servers doing part of Quarry's
#                                      auth work
#   bash bench/whoami.sh --strict      exit 1 when Quarry is below the target
#
# Tunables (environment): BENCH_THREADS (1), BENCH_CONNECTIONS (32), BENCH_DURATION (10s), BENCH_WARMUP (5s),
# BENCH_ROUNDS (5), BENCH_TARGET_PCT (60), BENCH_NO_RECORD=1 (do not append to the results file).
# All servers run at once on the same store; each round loads them in turn (Quarry, bare, variants) and
# each is reported by its median round, so that drift of a shared machine hits all alike. Only one is
# loaded at a time; the others sit idle. Only loopback addresses are used; every load run is bounded by
# its duration and `timeout`.
set -Eeuo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUN=$ROOT/node_modules/.bin/bun
[ -x "$BUN" ] || { echo "bench/whoami.sh: Bun is missing; run 'npm ci' first" >&2; exit 2; }

THREADS=${BENCH_THREADS:-1}
CONNS=${BENCH_CONNECTIONS:-32}
DURATION=${BENCH_DURATION:-10s}
WARMUP=${BENCH_WARMUP:-5s}
ROUNDS=${BENCH_ROUNDS:-5}
TARGET=${BENCH_TARGET_PCT:-60}
RESULTS=$ROOT/bench/results/whoami.md
VARIANTS=0
STRICT=0
for a in "$@"; do
  case $a in
    --variants) VARIANTS=1 ;;
    --strict) STRICT=1 ;;
    *) echo "bench/whoami.sh: unknown argument $a" >&2; exit 2 ;;
  esac
done

# --- wrk, the temporary directory, cleanup ------------------------------------------------------------
# shellcheck source=bench/common.sh
source bench/common.sh
need_packages wrk
bench_init whoami

# check_body NAME URL [HEADER]: the server's whoami answer must equal Quarry's (TS aside).
check_body() {
  local got
  got=$("$BUN" run bench/lib.ts body "$2" "${3:-}")
  [ "$got" = "$QBODY" ] || {
    echo "bench/whoami.sh: $1 answers differently from Quarry:" >&2
    echo "  quarry: $QBODY" >&2
    echo "  $1: $got" >&2
    exit 1
  }
}



# --- servers: Quarry, the bare baseline and, with --variants, the variants; all on one store -----------
DATA=$TMP/data
PASSWORD=bench-$(date +%s)-password
QPORT=$(free_port)
echo "== starting Quarry on 127.0.0.1:$QPORT (data in $DATA)"
QUARRY_DATA_DIR=$DATA QUARRY_LISTEN=127.0.0.1:$QPORT QUARRY_ADMIN_PASSWORD=$PASSWORD QUARRY_LOG_LEVEL=warn \
  start_server Quarry "$TMP/quarry.log" "http://127.0.0.1:$QPORT/api/test" "$BUN" run server/main.ts
JWT=$("$BUN" run bench/lib.ts seed "http://127.0.0.1:$QPORT" "$PASSWORD")
SECRET=$("$BUN" run bench/lib.ts token "http://127.0.0.1:$QPORT" "$JWT")
QBODY=$("$BUN" run bench/lib.ts body "http://127.0.0.1:$QPORT/api/info/whoami" "Authorization: Bearer $JWT")
echo "   whoami: $QBODY"

# Targets, in the order each round measures them: key, table label, URL, the auth header sent (or none).
KEYS=()
declare -A LABEL URL AUTH
add_target() { KEYS+=("$1"); LABEL[$1]=$2; URL[$1]=$3; AUTH[$1]=$4; }
add_target quarry "Quarry" "http://127.0.0.1:$QPORT/api/info/whoami" "Authorization: Bearer $JWT"
add_target quarry-token "Quarry, API token" "http://127.0.0.1:$QPORT/api/info/whoami" "Service-Token: $SECRET"

# start_bare KEY LABEL AUTH-MODE: a bench/bare-whoami.ts on the store.
start_bare() {
  local port url auth="Authorization: Bearer $JWT"
  port=$(free_port)
  url=http://127.0.0.1:$port/api/info/whoami
  echo "== starting $1 on 127.0.0.1:$port"
  BARE_DB=$DATA/quarry.db BARE_PORT=$port BARE_AUTH=$3 \
    start_server "$1" "$TMP/$1.log" "$url" "$BUN" run bench/bare-whoami.ts
  [ "$3" != none ] || auth=''
  add_target "$1" "$2" "$url" "$auth"
}
start_bare bare "bare Bun.serve" none

if [ "$VARIANTS" -eq 1 ]; then
  for mode in jose hmac full; do start_bare "bare-$mode" "bare + auth \`$mode\`" "$mode"; done
fi

auth_of() { echo "${AUTH[$1]}"; }

# Every target must answer what Quarry answers (TS aside).
for k in "${KEYS[@]}"; do check_body "$k" "${URL[$k]}" "$(auth_of "$k")"; done

# --- load: a warm-up each, then rounds taking the targets in turn ---------------------------------------
declare -A RUNS # key -> "rps:p50:p99 ..." over the rounds
for k in "${KEYS[@]}"; do warm "$k" "${URL[$k]}" "$(auth_of "$k")"; done
for r in $(seq "$ROUNDS"); do
  echo "== round $r of $ROUNDS: wrk -t$THREADS -c$CONNS -d$DURATION --latency"
  for k in "${KEYS[@]}"; do
    measure "$k" "${URL[$k]}" "$(auth_of "$k")"
    RUNS[$k]+="$RPS:$P50:$P99 "
  done
done
for pid in ${PIDS[@]+"${PIDS[@]}"}; do stop_server "$pid"; done
if [ -s "$TMP/quarry.log" ]; then echo "   Quarry logged (warn and above):"; sed 's/^/   | /' "$TMP/quarry.log" | head -20; fi

declare -A MED_RPS MED_P50 MED_P99
for k in "${KEYS[@]}"; do
  # shellcheck disable=SC2086 # one word per round
  IFS=: read -r "MED_RPS[$k]" "MED_P50[$k]" "MED_P99[$k]" <<<"$(median_round ${RUNS[$k]})"
done
Q_RPS=${MED_RPS[quarry]}
B_RPS=${MED_RPS[bare]}
read -r -a QRUNS <<<"${RUNS[quarry]}"
read -r -a BRUNS <<<"${RUNS[bare]}"
ROUND_PCTS=()
for i in "${!QRUNS[@]}"; do ROUND_PCTS+=("$(pct "${QRUNS[$i]%%:*}" "${BRUNS[$i]%%:*}") %"); done

# --- report ------------------------------------------------------------------------------------------
PCT=$(pct "$Q_RPS" "$B_RPS")
if awk -v p="$PCT" -v t="$TARGET" 'BEGIN {exit !(p >= t)}'; then VERDICT="met"; else VERDICT="NOT met"; fi
CPU=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
WRKV=$({ wrk -v 2>&1 || true; } | awk 'NR == 1 {print $2}')
BUNV=$("$BUN" --version)
CMD="wrk -t$THREADS -c$CONNS -d$DURATION --latency [-H 'Authorization: Bearer <JWT>' | -H 'Service-Token: <secret>'] http://127.0.0.1:<port>/api/info/whoami"

TABLE='| server | requests/s | p50 (ms) | p99 (ms) | of bare |'$'\n''| --- | ---: | ---: | ---: | ---: |'
for k in "${KEYS[@]}"; do
  TABLE+=$'\n'"| ${LABEL[$k]} | ${MED_RPS[$k]} | ${MED_P50[$k]} | ${MED_P99[$k]} | $(pct "${MED_RPS[$k]}" "$B_RPS") % |"
done
SUMMARY="Quarry / bare: **$PCT %** (medians of $ROUNDS rounds; Quarry / bare per round: ${ROUND_PCTS[*]}). Target at least $TARGET %: **$VERDICT**."
TOKEN_PCT=$(pct "${MED_RPS[quarry-token]}" "$Q_RPS")
if awk -v p="$TOKEN_PCT" 'BEGIN {exit !(p >= 90 && p <= 110)}'; then TOKEN_VERDICT="met"; else TOKEN_VERDICT="NOT met"; VERDICT="NOT met"; fi
SUMMARY+=$'\n\n'"API token / JWT: **$TOKEN_PCT %** of the JWT's requests/s. Target within 10 % of each other: **$TOKEN_VERDICT**."

echo
echo "$TABLE"
echo
echo "$SUMMARY"

if [ "${BENCH_NO_RECORD:-0}" != 1 ]; then
  mkdir -p "$(dirname "$RESULTS")"
  [ -s "$RESULTS" ] || printf '# GET /api/info/whoami: Quarry vs bare Bun.serve\n\nAppended by `bash bench/whoami.sh`, newest last.\n' >"$RESULTS"
  {
    echo
    echo "## $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "- machine: $(nproc) CPUs (nproc), $CPU, $(uname -sr)"
    echo "- Bun $BUNV, wrk $WRKV; Quarry with QUARRY_LOG_LEVEL=warn"
    echo "- command: \`$CMD\`, $WARMUP warm-up per server, then $ROUNDS rounds taking the servers in turn; medians shown"
    echo "- data: admin (UID 1) in 2 groups; all servers up at once on the same store, one loaded at a time"
    echo
    echo "$TABLE"
    echo
    echo "$SUMMARY"
  } >>"$RESULTS"
  echo "appended to ${RESULTS#"$ROOT"/}"
fi

if [ "$STRICT" -eq 1 ] && [ "$VERDICT" != met ]; then exit 1; fi
