#!/usr/bin/env bash
# deploy/compose.yaml, really run (docs/cluster.md, "With containers"): Podman and Debian's podman-compose, the
# compose file as shipped, and the checks of test/compose-client.ts through its load balancer. Run by
# test/container.sh after its own checks (it builds the Quarry image this reuses); alone: `bash test/compose.sh`.
# Ends with one summary line ("compose: N passed, N failed"); exits 1 on any failure. Needs root (rootful Podman).
#
# No image registry is reachable here: an image the compose file names that is neither present nor pullable is built
# as a stand-in from the local base image with Debian's packages (test/compose/: PostgreSQL 15 for postgres:16,
# Ceph's RADOS Gateway for minio/minio, HAProxy 2.6 for haproxy:2.6), and tagged with the name the compose file
# uses, so that the file runs unchanged. Built once per machine (about 3 minutes), then found.
#
# What podman-compose 1.0.3 does not do, and how it is met here:
#   - `depends_on` conditions (service_healthy, service_completed_successfully) are ignored: every service starts
#     at once; replicas that find PostgreSQL not yet up exit and are restarted by their `restart` policy, and the
#     `migrate` service may fail for the same reason, so it is run again afterwards as docs/cluster.md's upgrade
#     step (`run --rm migrate`), which must exit 0.
#   - a network's `ipam` subnet is ignored: the network is made here first, with the compose file's subnet (the
#     one QUARRY_TRUSTED_PROXIES names), under the name podman-compose would give it.
#   - the top-level `name` is ignored: the project name is given with -p.
#
# Env: CONTAINER_IMAGE (localhost/quarry-ci:test, built by test/container.sh; built here when missing),
# COMPOSE_READY_WITHIN (seconds, 240).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUN=$ROOT/node_modules/.bin/bun
IMAGE=${CONTAINER_IMAGE:-localhost/quarry-ci:test}
PROJECT=quarrycheck$$
READY_WITHIN=${COMPOSE_READY_WITHIN:-240}
COMPOSE_FILE=$ROOT/deploy/compose.yaml
export POSTGRES_PASSWORD=pg-$RANDOM$RANDOM$RANDOM
export MINIO_ROOT_PASSWORD=s3-$RANDOM$RANDOM$RANDOM
export QUARRY_ADMIN_PASSWORD=admin-$RANDOM$RANDOM$RANDOM
export QUARRY_CLUSTER_SECRET=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d " \n")
REPLICAS=(quarry-a quarry-b quarry-c)

# shellcheck source=test/checks.sh
source test/checks.sh
abort() {
  fail "$1"
  summary compose
  exit 1
}
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
compose() { (cd "$ROOT/deploy" && command podman-compose -p "$PROJECT" -f "$COMPOSE_FILE" "$@"); }
NETWORK=${PROJECT}_quarry
# Everything the project made, removed at once (podman-compose down stops one container after the other: about 30 s).
teardown() {
  local label=io.podman.compose.project=$PROJECT
  podman ps -aq --filter "label=$label" | xargs -r podman rm -f -t 3 >/dev/null 2>&1
  podman volume ls -q --filter "label=$label" | xargs -r podman volume rm -f >/dev/null 2>&1
  podman network rm -f "$NETWORK" >/dev/null 2>&1
}
cleanup() { teardown; }
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" -eq 0 ] || abort "the compose check needs root (Podman, rootful)"
[ -x "$BUN" ] || abort "Bun is missing; run 'npm ci' first"
t0=$(now)
bash test/container-engine.sh setup >/dev/null || abort "the container engine could not be set up (test/container-engine.sh setup)"
if ! command -v podman-compose >/dev/null; then
  { bash test/apt-get.sh update -qq && DEBIAN_FRONTEND=noninteractive bash test/apt-get.sh install -y -qq podman-compose; } >/dev/null 2>&1 ||
    abort "podman-compose could not be installed (apt-get install podman-compose)"
fi
echo "compose: $(podman-compose version 2>/dev/null | grep -i 'podman-compose' | head -1)"

# The Quarry image the compose file builds (`build: ..`, image quarry:local): the one test/container.sh built from
# this Dockerfile, else built here, as podman-compose would but keeping its HEALTHCHECK (--format docker).
if podman image exists "$IMAGE"; then
  podman tag "$IMAGE" localhost/quarry:local || abort "the Quarry image could not be tagged quarry:local"
else
  podman build --pull=never --format docker -t localhost/quarry:local . >/dev/null 2>&1 || abort "the Quarry image builds"
fi

# standin IMAGE DIR: IMAGE when present or pullable, else built from test/compose/DIR and tagged IMAGE.
standin() {
  local image=$1 dir=$2 t
  podman image exists "$image" && return 0
  timeout 60 podman pull -q "$image" >/dev/null 2>&1 && return 0
  t=$(now)
  if ! podman build --pull=never -t "$image" "test/compose/$dir" >"${TMPDIR:-/tmp}/$PROJECT.$dir.log" 2>&1; then
    tail -20 "${TMPDIR:-/tmp}/$PROJECT.$dir.log"
    rm -f "${TMPDIR:-/tmp}/$PROJECT.$dir.log"
    return 1
  fi
  rm -f "${TMPDIR:-/tmp}/$PROJECT.$dir.log"
  echo "compose: stand-in for $image built from test/compose/$dir in $(since "$t") s"
}
standin docker.io/library/postgres:16 postgres || abort "postgres:16 is neither here nor pullable, and its stand-in did not build"
standin docker.io/minio/minio:latest s3 || abort "minio/minio is neither here nor pullable, and its stand-in did not build"
standin docker.io/library/haproxy:2.6 haproxy || abort "haproxy:2.6 is neither here nor pullable, and its stand-in did not build"

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for _ in $(seq 50); do
  PORT=$((10000 + RANDOM % 22000))
  port_free "$PORT" && break
done
export QUARRY_PORT=$PORT
SUBNET=$(awk '$1 == "-" && $2 == "subnet:" { print $3; exit }' "$COMPOSE_FILE")
[ -n "$SUBNET" ] || abort "the compose file names its network's subnet"
podman network create --subnet "$SUBNET" --label "io.podman.compose.project=$PROJECT" "$NETWORK" >/dev/null ||
  abort "the network $NETWORK ($SUBNET) could be made"

t=$(now)
if ! compose up -d >"${TMPDIR:-/tmp}/$PROJECT.up.log" 2>&1; then
  tail -30 "${TMPDIR:-/tmp}/$PROJECT.up.log"
  rm -f "${TMPDIR:-/tmp}/$PROJECT.up.log"
  abort "podman-compose up -d starts the compose file"
fi
rm -f "${TMPDIR:-/tmp}/$PROJECT.up.log"
pass "podman-compose up -d starts the compose file (project $PROJECT, load balancer on port $PORT)"

# Ready through the load balancer: HAProxy up, and a replica ready behind it (PostgreSQL, migrations).
deadline=$((SECONDS + READY_WITHIN))
until [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/api/health/ready")" = 200 ]; do
  if [ $SECONDS -ge $deadline ]; then
    for s in postgres minio lb "${REPLICAS[@]}"; do
      echo "--- ${PROJECT}_${s}_1: $(podman inspect --format '{{.State.Status}} exit {{.State.ExitCode}} restarts {{.RestartCount}}' "${PROJECT}_${s}_1" 2>&1)"
      podman logs --tail 8 "${PROJECT}_${s}_1" 2>&1
    done
    abort "ready through the load balancer within $READY_WITHIN s"
  fi
  sleep 1
done
pass "ready through the load balancer after $(since "$t") s"

# Every replica serves, by the image's own HEALTHCHECK (podman runs it here: no systemd timers).
for s in "${REPLICAS[@]}"; do
  ok=false
  for _ in $(seq 60); do
    if podman healthcheck run "${PROJECT}_${s}_1" >/dev/null 2>&1; then ok=true; break; fi
    sleep 1
  done
  check "replica $s is healthy (the image's HEALTHCHECK)" $ok
done

# The published port is the stack's own HAProxy: it refuses the internal routes itself.
body=$(curl -s -w ' %{http_code}' "http://127.0.0.1:$PORT/api/internal/forward/api/info/whoami")
check "the published port $PORT is the stack's HAProxy (its own 404 for /api/internal/*)" \
  test "${body##* }" = 404 -a -n "$(grep -F '<html>' <<<"$body")"

# The API checks from a container on the stack's network, through the load balancer's service name: what they see
# does not depend on the host's ports.
podman run --rm -i --network "$NETWORK" -e COMPOSE_URL=http://lb:8080 -e COMPOSE_PASSWORD="$QUARRY_ADMIN_PASSWORD" \
  -e COMPOSE_SECRET="$QUARRY_CLUSTER_SECRET" -e COMPOSE_REPLICAS=${#REPLICAS[@]} localhost/quarry:local bun run - \
  <test/compose-client.ts >"${TMPDIR:-/tmp}/$PROJECT.client.log" 2>&1
client_status=$?
while IFS= read -r line; do
  case $line in
    PASS:*) passed=$((passed + 1)); echo "$line" ;;
    FAIL:*) failed=$((failed + 1)); echo "$line" ;;
  esac
done <"${TMPDIR:-/tmp}/$PROJECT.client.log"
if [ $client_status -ne 0 ] && ! grep -q '^FAIL:' "${TMPDIR:-/tmp}/$PROJECT.client.log"; then
  tail -20 "${TMPDIR:-/tmp}/$PROJECT.client.log"
  fail "the API checks (test/compose-client.ts) ran: exit $client_status"
fi
rm -f "${TMPDIR:-/tmp}/$PROJECT.client.log"

# The upgrade step of docs/cluster.md: the migrate service, run once more, finds nothing left to apply.
out=$(compose run --rm migrate 2>&1)
status=$?
if [ $status -eq 0 ] && grep -q 'nothing applied' <<<"$out"; then pass "podman-compose run --rm migrate exits 0: nothing applied"
else fail "podman-compose run --rm migrate exits 0 with nothing applied (exit $status: $(tail -3 <<<"$out" | tr '\n' ' '))"; fi

# The backup of docs/container.md for this stack: pg_dump through the database's container (the custom format,
# which pg_restore reads).
dump=$(mktemp)
podman exec "${PROJECT}_postgres_1" pg_dump -U quarry -Fc quarry >"$dump" 2>/dev/null
check "pg_dump in the postgres container backs up the store (pg_restore lists its users table)" \
  sh -c "podman exec -i '${PROJECT}_postgres_1' pg_restore -l <'$dump' 2>/dev/null | grep -q 'TABLE public users'"
rm -f "$dump"

# On a failure, what each container was doing, for its reason (the replicas' request lines left out).
if [ "$failed" -gt 0 ]; then
  echo "--- listening on port $PORT: $(ss -ltnp "sport = :$PORT" 2>/dev/null | tail -n +2 | tr -s ' ' | tr '\n' ';')"
  echo "--- load: $(cut -d' ' -f1-3 /proc/loadavg)"
  for s in postgres minio lb "${REPLICAS[@]}"; do
    echo "--- ${PROJECT}_${s}_1: $(podman inspect --format '{{.State.Status}}, exit {{.State.ExitCode}}, restarts {{.RestartCount}}, started {{.State.StartedAt}}' "${PROJECT}_${s}_1" 2>&1)"
    podman logs -t "${PROJECT}_${s}_1" 2>&1 | grep -v '"msg":"request"' | tail -n 8
  done
fi

t=$(now)
teardown
check "the project's containers, volumes and network are gone" \
  test -z "$(podman ps -aq --filter "label=io.podman.compose.project=$PROJECT")$(podman volume ls -q --filter "label=io.podman.compose.project=$PROJECT")"
echo "compose: removal took $(since "$t") s; whole check $(since "$t0") s"
summary compose
