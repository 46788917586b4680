# Shared by the benchmark scripts (sourced, not run): packages, the temporary directory, the processes a
# script starts and their cleanup, and bounded waits. Expects `set -Eeuo pipefail` and the repository root as
# the working directory.

# need_packages CMD...: installs, from Debian's packages, each command that is missing (package = command).
need_packages() {
  local missing=() c sudo=
  for c in "$@"; do command -v "$c" >/dev/null || missing+=("$c"); done
  [ "${#missing[@]}" -gt 0 ] || return 0
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  echo "== installing ${missing[*]} from Debian's packages"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
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
