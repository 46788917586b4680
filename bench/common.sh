# Shared by the benchmark scripts (sourced, not run): packages, the temporary directory, the processes a
# script starts and their cleanup, bounded waits, servers, and wrk runs (these need $BUN, and $THREADS,
# $CONNS, $WARMUP, $DURATION set by the script). Expects `set -Eeuo pipefail` and the repository root as
# the working directory.

# no_target_args NAME ARGS...: for a benchmark without a target to miss: accepts the flags bench/run.sh passes on
# (--strict, --variants) and refuses anything else, exit 2.
no_target_args() {
  local name=$1 a
  shift
  for a in "$@"; do
    case $a in
      --strict | --variants) ;;
      *) echo "bench/$name: unknown argument $a" >&2; exit 2 ;;
    esac
  done
}

# need_packages CMD...: installs, from Debian's packages, each command that is missing (package = command).
need_packages() {
  local missing=() c sudo=
  for c in "$@"; do command -v "$c" >/dev/null || missing+=("$c"); done
  [ "${#missing[@]}" -gt 0 ] || return 0
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  echo "== installing ${missing[*]} from Debian's packages"
  $sudo bash test/apt-get.sh update -qq
  DEBIAN_FRONTEND=noninteractive $sudo bash test/apt-get.sh install -y -qq "${missing[@]}" >/dev/null
  for c in "$@"; do command -v "$c" >/dev/null || { echo "bench: $c is not installed" >&2; exit 2; }; done
}

# bench_init NAME: a fresh $TMP, the $PIDS list, and a cleanup on exit that stops every process still listed,
# prints the end of each log in $TMP when the script failed, and removes $TMP.
bench_init() {
  BENCH_NAME=$1
  TMP=$(mktemp -d "${TMPDIR:-/tmp}/quarry-bench-$1.XXXXXX")
  PIDS=()
  trap bench_cleanup EXIT
  trap 'echo "bench/$BENCH_NAME.sh: failed (line $LINENO: $BASH_COMMAND)" >&2' ERR
  trap 'exit 130' INT TERM
}

bench_cleanup() {
  local rc=$? pid f
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 130 ]; then
    for f in "$TMP"/*.log; do
      [ -s "$f" ] || continue
      echo "--- last lines of ${f##*/}:" >&2
      tail -n 20 "$f" >&2
    done
  fi
  for pid in ${PIDS[@]+"${PIDS[@]}"}; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in ${PIDS[@]+"${PIDS[@]}"}; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  rm -rf "$TMP"
}

# forget PID: drops a process that has ended from the list the cleanup stops.
forget() {
  local keep=() p
  for p in ${PIDS[@]+"${PIDS[@]}"}; do [ "$p" = "$1" ] || keep+=("$p"); done
  PIDS=(${keep[@]+"${keep[@]}"})
}

# bounded SECONDS CMD...: runs CMD under `timeout` in the background and waits, so that a signal to this
# script is handled at once (bash defers traps while a foreground child runs).
bounded() {
  local secs=$1
  shift
  timeout "$secs" "$@" &
  local pid=$! rc=0
  PIDS+=("$pid")
  wait "$pid" || rc=$?
  forget "$pid"
  return "$rc"
}

# pct A B: A as a percentage of B, one decimal.
pct() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", 100 * a / b}'; }

# --- servers and wrk ------------------------------------------------------------------------------------

# stop_server PID: SIGTERM, then SIGKILL after 10 s.
stop_server() {
  local pid=$1
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  forget "$pid"
}

# start_server NAME LOG URL-TO-WAIT-FOR CMD...: starts a server in the background (env as given by the
# caller) and waits until it answers; sets SERVER_PID.
start_server() {
  local name=$1 log=$2 url=$3
  shift 3
  "$@" >"$log" 2>&1 &
  SERVER_PID=$!
  PIDS+=("$SERVER_PID")
  "$BUN" run bench/lib.ts wait "$url" 30 || { echo "bench/$BENCH_NAME.sh: $name did not start:" >&2; cat "$log" >&2; exit 1; }
}

free_port() { "$BUN" run bench/lib.ts free-port; }

# Latency as wrk prints it (850.00us, 1.23ms, 1.02s) in milliseconds.
to_ms() {
  awk -v v="$1" 'BEGIN {
    n = v + 0; u = v; sub(/^[0-9.]+/, "", u)
    if (u == "us") n /= 1000; else if (u == "s") n *= 1000; else if (u == "m") n *= 60000
    printf "%.2f", n }'
}

wrk_args() { # URL [HEADER]
  WRK_ARGS=(-t"$THREADS" -c"$CONNS")
  [ -z "${2:-}" ] || WRK_ARGS+=(-H "$2")
}

warm() { # NAME URL [HEADER]
  wrk_args "$2" "${3:-}"
  echo "== $1: warm-up ($WARMUP)"
  bounded 120 wrk "${WRK_ARGS[@]}" -d"$WARMUP" "$2" >/dev/null
}

# measure NAME URL [HEADER]: one measured run; sets RPS, P50, P99 (ms).
measure() {
  local out=$TMP/wrk-$1.txt
  wrk_args "$2" "${3:-}"
  bounded 300 wrk "${WRK_ARGS[@]}" -d"$DURATION" --latency "$2" >"$out"
  if grep -q 'Non-2xx or 3xx responses\|Socket errors' "$out"; then
    sed 's/^/   /' "$out"
    echo "bench/$BENCH_NAME.sh: $1 had errors during the run" >&2
    exit 1
  fi
  RPS=$(awk '/^Requests\/sec:/ {printf "%.0f", $2}' "$out")
  P50=$(to_ms "$(awk '$1 == "50%" {print $2}' "$out")")
  P99=$(to_ms "$(awk '$1 == "99%" {print $2}' "$out")")
  [ -n "$RPS" ] || { echo "bench/$BENCH_NAME.sh: could not read wrk's output for $1" >&2; cat "$out" >&2; exit 1; }
  printf '   %-34s %8s req/s   p50 %6s ms   p99 %6s ms\n' "$1" "$RPS" "$P50" "$P99"
}

# median_round "rps:p50:p99" ...: prints the triple with the median requests/s.
median_round() { printf '%s\n' "$@" | sort -t: -k1,1n | awk '{ a[NR] = $0 } END { print a[int((NR + 1) / 2)] }'; }

# --- PostgreSQL and the S3 gateway ----------------------------------------------------------------------

# start_stores: PostgreSQL and the S3 gateway from the test scripts (test/pg-server.sh, test/s3-server.sh), on
# loopback, in directories of their own as test/run.sh makes them (the database server's account must reach its
# directory); exports QUARRY_TEST_DATABASE_URL and QUARRY_TEST_S3_*. Replaces the EXIT trap with one that stops
# both and then runs bench_cleanup (call it after bench_init).
start_stores() {
  PGDIR=$(mktemp -d)
  S3DIR=$(mktemp -d)
  trap 'stop_stores; bench_cleanup' EXIT
  echo "== starting PostgreSQL and the S3 gateway (test/pg-server.sh, test/s3-server.sh)"
  bash test/pg-server.sh start "$PGDIR" >"$TMP/pg.log" 2>&1
  bash test/s3-server.sh start "$S3DIR" >"$TMP/s3.log" 2>&1
  # shellcheck disable=SC1091
  source "$PGDIR/env"
  # shellcheck disable=SC1091
  source "$S3DIR/env"
}

stop_stores() {
  bash test/s3-server.sh stop "$S3DIR" >/dev/null 2>&1 || true
  bash test/pg-server.sh stop "$PGDIR" >/dev/null 2>&1 || true
  rm -rf "$PGDIR" "$S3DIR"
}
