# Counted checks for the shell tests that run a container engine (test/container.sh, test/compose.sh), sourced by
# both: `check WHAT COMMAND...` runs the command and counts it as passed or failed, `pass`/`fail WHAT` count directly
# (lines `PASS: what` / `FAIL: what`), and `summary NAME` prints "NAME: N passed, N failed" and fails unless every
# check passed and there was one at least.

# Podman without systemd says on every run/restart that it cannot add healthcheck timers: true, and expected here
# (the tests run the checks themselves), so that line is left out; everything else it says stays.
podman() { command podman "$@" 2> >(grep -v 'unable to get systemd connection' >&2); }

passed=0
failed=0
pass() { passed=$((passed + 1)); echo "PASS: $1"; }
fail() { failed=$((failed + 1)); echo "FAIL: $1"; }
check() { # check WHAT COMMAND...
  local what=$1
  shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}
summary() { # summary NAME
  echo "$1: ${passed} passed, ${failed} failed"
  [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
}
