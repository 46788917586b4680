#!/usr/bin/env bash
# The container, really built and run (docs/operations.md): builds the image from the Dockerfile as it is, runs it,
# and checks what an operator relies on. Ends with one plain summary line ("N passed, N failed"); exits 1 on any
# failure. Run by .ci/run after the README's test command.
#
# No Docker engine runs here and no image registry can be reached, so it uses Podman (root; installed and set up
# by test/container-engine.sh, the project's own copy) and, for a base image that is not there, builds a stand-in
# (Debian bookworm minbase + this checkout's Bun; the first debootstrap takes about 2 minutes and is cached in
# $CE_CACHE, /var/tmp/container-engine).
#
# What it checks:
#   the image keeps its HEALTHCHECK (built with --format docker) and has `quarry` on PATH, LICENSE and NOTICE;
#   the container becomes healthy (the image's own HEALTHCHECK, whatever it is, run by `podman healthcheck run`),
#   listening on a port other than the image's 8080 (QUARRY_LISTEN), which its HEALTHCHECK and `quarry` follow;
#   a fresh volume's /data is 0700 and the server logs no warning about its modes;
#   `quarry login` and `quarry whoami` inside the container reach its server without --server;
#   the backup of docs/container.md taken while it runs, restored into a new volume, serves what was written;
#   admin login, a dashboard and an uploaded file written, the container restarted, both read back (named volume);
#   no process in the container runs as root;
#   SIGTERM stops it within the shutdown grace (QUARRY_SHUTDOWN_GRACE, 10s unless set), exit code 0 or 143, with the
#   server's own shutdown line in its log (it drained rather than being killed).
# The container runs with --network none: its HEALTHCHECK and the API checks (test/container-client.ts, run inside it
# with `podman exec`) reach the server on the container's own loopback, so no host port is needed or can clash.
# Then test/compose.sh runs deploy/compose.yaml (podman-compose) and its lines count here too; COMPOSE=0 leaves
# it out.
#
# Env: CONTAINER_IMAGE (localhost/quarry-ci:test), QUARRY_SHUTDOWN_GRACE (10s), CE_CACHE.
set -uo pipefail
cd "$(dirname "$0")/.."

IMAGE=${CONTAINER_IMAGE:-localhost/quarry-ci:test}
GRACE=${QUARRY_SHUTDOWN_GRACE:-10s}
NAME=quarry-check-$$
VOLUME=quarry-check-data-$$
PASSWORD=container-check-$RANDOM$RANDOM
HEALTHY_WITHIN=90 # seconds from start to healthy: start-up is a few seconds, but the machine may be loaded

# shellcheck source=test/checks.sh
source test/checks.sh
BACKUP=$(mktemp -d)
cleanup() {
  podman rm -f -t 0 "$NAME" "$NAME-restored" >/dev/null 2>&1
  podman volume rm -f "$VOLUME" "$VOLUME-restored" >/dev/null 2>&1
  rm -rf "$BACKUP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
abort() {
  fail "$1"
  summary container
  exit 1
}

# Seconds of a QUARRY_* duration (as server/runtime/config.ts reads them: 500ms, 10s, 2m, 1h), rounded up.
seconds() {
  awk -v d="$1" 'BEGIN {
    if (match(d, /^[0-9]+(\.[0-9]+)?/) == 0) exit 1
    n = substr(d, 1, RLENGTH); u = substr(d, RLENGTH + 1)
    f = (u == "ms") ? 0.001 : (u == "s" || u == "") ? 1 : (u == "m") ? 60 : (u == "h") ? 3600 : -1
    if (f < 0) exit 1
    s = n * f; printf "%d", (s == int(s)) ? s : int(s) + 1
  }'
}
grace_s=$(seconds "$GRACE") || abort "QUARRY_SHUTDOWN_GRACE=$GRACE is not a duration"

[ "$(id -u)" -eq 0 ] || abort "the container engine needs root (Podman, rootful)"
t0=$(now)
bash test/container-engine.sh setup >/dev/null || abort "the container engine could not be set up (test/container-engine.sh setup)"
echo "container: engine ready in $(since "$t0") s: $(podman --version)"

# Base images the Dockerfile names (not its own stages). One that is missing is built as a stand-in when it is
# oven/bun (with this checkout's Bun, which must be the version of the tag), else it must be pullable.
BUN=$(readlink -f node_modules/.bin/bun 2>/dev/null || true)
stages=$(awk 'toupper($1) == "FROM" { for (i = 2; i < NF; i++) if (toupper($i) == "AS") print $(i + 1) }' Dockerfile)
for ref in $(awk 'toupper($1) == "FROM" { for (i = 2; i <= NF; i++) if ($i !~ /^--/) { print $i; break } }' Dockerfile | sort -u); do
  grep -qxF "$ref" <<<"$stages" && continue
  full=$ref
  [[ $full == */*/* || $full == localhost/* ]] || full=docker.io/$full
  [[ $full == docker.io/*/* ]] || [[ $full != docker.io/* ]] || full=${full/docker.io\//docker.io/library/}
  podman image exists "$full" && continue
  if [[ $full == docker.io/oven/bun:* ]]; then
    tag=${full#*:}
    [ -x "$BUN" ] || abort "no Bun in node_modules to build the stand-in for $ref (run 'npm ci' first)"
    have=$("$BUN" --version)
    [[ $tag == "$have" || $tag == "$have"-* ]] || abort "the Dockerfile wants $ref but this checkout's Bun is $have"
    t=$(now)
    bash test/container-engine.sh base "$full" "$BUN" >/dev/null || abort "the stand-in base image $full could not be built"
    echo "container: stand-in base $full built in $(since "$t") s"
  else
    podman pull -q "$full" >/dev/null || abort "the base image $ref is not here and cannot be pulled"
  fi
done

t=$(now)
if ! podman build --pull=never --format docker -t "$IMAGE" . >"${TMPDIR:-/tmp}/$NAME.build.log" 2>&1; then
  tail -30 "${TMPDIR:-/tmp}/$NAME.build.log"
  rm -f "${TMPDIR:-/tmp}/$NAME.build.log"
  abort "the image builds from the Dockerfile"
fi
rm -f "${TMPDIR:-/tmp}/$NAME.build.log"
pass "the image builds from the Dockerfile"
size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
echo "container: image built in $(since "$t") s, $((size / 1000000)) MB"

healthcheck=$(podman image inspect --format '{{if .Config.Healthcheck}}{{json .Config.Healthcheck.Test}}{{end}}' "$IMAGE" 2>/dev/null)
[ -n "$healthcheck" ] && [ "$healthcheck" != null ] && pass "the image keeps its HEALTHCHECK: $healthcheck" || fail "the image keeps its HEALTHCHECK"
user=$(podman image inspect --format '{{.Config.User}}' "$IMAGE")
check "the image names a user other than root ($user)" test -n "$user" -a "$user" != root -a "$user" != 0

running() { [ "$(podman inspect --format '{{.State.Running}}' "$NAME" 2>/dev/null)" = true ]; }
# Waits until the image's own HEALTHCHECK passes (podman runs it on a timer only under systemd, so it is run here).
healthy() {
  local start deadline
  start=$(now)
  deadline=$((SECONDS + HEALTHY_WITHIN))
  while [ $SECONDS -lt $deadline ]; do
    if ! running; then
      podman logs --tail 20 "$NAME" 2>&1
      fail "$1: the container exited ($(podman inspect --format '{{.State.ExitCode}}' "$NAME" 2>/dev/null))"
      return 1
    fi
    if podman healthcheck run "$NAME" >/dev/null 2>&1; then
      pass "$1: healthy after $(since "$start") s"
      return 0
    fi
    sleep 1
  done
  podman logs --tail 20 "$NAME" 2>&1
  fail "$1: not healthy within ${HEALTHY_WITHIN} s"
  return 1
}
# Runs test/container-client.ts inside the container; counts its PASS/FAIL lines; keeps its STATE line's JSON.
STATE=''
client() {
  local out
  out=$(podman exec -i -e CHECK_PHASE="$1" -e CHECK_PASSWORD="$PASSWORD" -e CHECK_STATE="${2:-}" "$NAME" bun run - <test/container-client.ts 2>&1)
  local status=$?
  while IFS= read -r line; do
    case $line in
      PASS:*) passed=$((passed + 1)); echo "$line" ;;
      FAIL:*) failed=$((failed + 1)); echo "$line" ;;
      STATE\ *) STATE=${line#STATE } ;;
    esac
  done <<<"$out"
  if [ $status -ne 0 ] || ! grep -q '^PASS:' <<<"$out"; then
    failed=$((failed + 1))
    echo "FAIL: the API checks ($1) ran: exit $status"
    echo "$out" | tail -20
  fi
}
no_root_process() {
  # every process of the container, the server and anything it started; the Uid line is real, effective, saved, fs
  local uids
  uids=$(podman exec "$NAME" sh -c 'for s in /proc/[0-9]*/status; do awk "/^Uid:/ { print \$2, \$3 }" "$s" 2>/dev/null; done') || return 1
  echo "container: process uids: $(sort -u <<<"$uids" | tr '\n' ' ')"
  [ -n "$uids" ] && ! grep -qw 0 <<<"$uids"
}

podman volume create "$VOLUME" >/dev/null
t=$(now)
podman run -d --name "$NAME" --network none -v "$VOLUME:/data" \
  -e QUARRY_ADMIN_PASSWORD="$PASSWORD" -e QUARRY_SHUTDOWN_GRACE="$GRACE" -e QUARRY_LISTEN=0.0.0.0:8181 "$IMAGE" >/dev/null ||
  abort "the container starts"
healthy "first start" || abort "the container serves"
client write
check "the server runs as a user other than root" no_root_process
check "quarry is on PATH inside the container" podman exec "$NAME" sh -c 'command -v quarry >/dev/null && quarry --help >/dev/null'
check "quarry inside the container logs in to its own server (QUARRY_LISTEN 0.0.0.0:8181) and says who it is" \
  podman exec -e CHECK_PASSWORD="$PASSWORD" "$NAME" sh -c 'echo "$CHECK_PASSWORD" | quarry login admin --password-stdin >/dev/null && quarry whoami | grep -q admin'
check "/data on a fresh volume is 0700, owned by the server's user" \
  test "$(podman exec "$NAME" stat -c '%a %U' /data)" = "700 bun"
check "the server logged no warning about the data directory's modes" \
  sh -c "! podman logs '$NAME' 2>&1 | grep -q 'readable by other accounts'"
check "the image holds the licence (LICENSE, Apache-2.0) and NOTICE" \
  podman exec "$NAME" sh -c 'grep -q "Apache License" /app/LICENSE && test -s /app/NOTICE'
check "the web console is served at / with the files its page names (built into the image)" \
  podman exec "$NAME" bun -e '
    const page = await fetch("http://127.0.0.1:8181/")
    const html = await page.text()
    const files = [...html.matchAll(/\/assets\/main-[a-z0-9]+\.(?:js|css)/g)].map((m) => m[0])
    const served = await Promise.all(files.map(async (f) => (await fetch("http://127.0.0.1:8181" + f)).status))
    const ok = page.status === 200 && page.headers.get("content-security-policy").includes("script-src") && files.length === 2 && served.every((s) => s === 200)
    process.exit(ok ? 0 : 1)'

t=$(now)
podman restart -t $((grace_s + 5)) "$NAME" >/dev/null || fail "the container restarts"
echo "container: restart took $(since "$t") s"
if healthy "after a restart"; then
  if [ -n "$STATE" ]; then client read "$STATE"; else fail "something was written to read back"; fi
fi

# The online backup of docs/container.md, as written there (podman for docker): the store copied by SQLite itself,
# then the store copy and the blobs streamed out as one tar file.
backup_online() {
  local step
  for step in 1 2 3; do
    case $step in
      1) podman exec "$NAME" bun -e 'const db = new (require("bun:sqlite").Database)("/data/quarry.db", { readonly: true }); db.run("PRAGMA busy_timeout = 10000"); db.run("VACUUM INTO ?", ["/data/backup.db"])' ;;
      2) podman exec "$NAME" tar --ignore-failed-read -C /data -cf - backup.db blobs >"$BACKUP/quarry-backup.tar" ;;
      3) podman exec "$NAME" rm /data/backup.db ;;
    esac 2>"$BACKUP/step.err" || { echo "container: backup step $step failed (exit $?): $(tail -3 "$BACKUP/step.err")"; return 1; }
  done
  # (grep reads the whole listing: `grep -q` would end early, and pipefail count tar's SIGPIPE as a failure)
  tar -tf "$BACKUP/quarry-backup.tar" | grep -x backup.db >/dev/null
}
check "the online backup of docs/container.md runs in the container" backup_online

# The stop an orchestrator does: SIGTERM, then wait for the grace.
t=$(now)
podman kill --signal TERM "$NAME" >/dev/null
code=$(timeout $((grace_s + 30)) podman wait "$NAME" 2>/dev/null)
took=$(since "$t")
if awk -v a="$took" -v b="$grace_s" 'BEGIN { exit !(a <= b) }'; then pass "SIGTERM stopped the container in $took s (grace ${grace_s} s)"
else fail "SIGTERM stopped the container in $took s, more than the grace of ${grace_s} s (exit code ${code:-none})"; fi
case $code in
  0 | 143) pass "the container exited with code $code after SIGTERM" ;;
  *) fail "the container exited with code ${code:-none} after SIGTERM (0 or 143 expected)" ;;
esac
# two starts, two stops: the restart's and this one
shutdowns=$(podman logs "$NAME" 2>&1 | grep -c 'shutting down')
check "the server logged its own shutdown at both stops ($shutdowns): it drained rather than being killed" test "$shutdowns" -ge 2
# The restore of docs/container.md, into a new volume, and a container on it: what was written is there.
restore() {
  podman volume create "$VOLUME-restored" >/dev/null &&
    podman run --rm -i -v "$VOLUME-restored:/data" "$IMAGE" sh -c 'cd /data && rm -rf quarry.db quarry.db-wal quarry.db-shm blobs && tar -xf - && mv backup.db quarry.db' <"$BACKUP/quarry-backup.tar"
}
if check "the backup is restored into a new volume (docs/container.md)" restore; then
  podman run -d --name "$NAME-restored" --network none -v "$VOLUME-restored:/data" -e QUARRY_ADMIN_PASSWORD="$PASSWORD" "$IMAGE" >/dev/null
  NAME_BEFORE=$NAME
  NAME=$NAME-restored
  if healthy "restored from the backup"; then client read "$STATE"; fi
  podman rm -f -t 5 "$NAME" >/dev/null 2>&1
  NAME=$NAME_BEFORE
fi
echo "container: single-container checks took $(since "$t0") s"

if [ "${COMPOSE:-1}" != 0 ]; then
  out=$(bash test/compose.sh 2>&1)
  status=$?
  while IFS= read -r line; do
    case $line in
      PASS:*) passed=$((passed + 1)) ;;
      FAIL:*) failed=$((failed + 1)) ;;
    esac
    echo "$line"
  done <<<"$out"
  if [ $status -ne 0 ] && ! grep -q '^FAIL:' <<<"$out"; then fail "test/compose.sh ran: exit $status"; fi
fi
echo "container: whole check took $(since "$t0") s"

summary container
