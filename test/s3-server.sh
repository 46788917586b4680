#!/usr/bin/env bash
# A throwaway S3 server for the test suite: a one-node Ceph RADOS Gateway (a real, SigV4-checking S3
# implementation) bound to 127.0.0.1 only, objects kept in the OSD's RAM (memstore). No systemd, no Docker.
#
#   test/s3-server.sh start DIR   installs Debian's radosgw ceph-mon ceph-osd when missing (needs root),
#                                 starts monitor, OSD and gateway on free loopback ports, creates the bucket,
#                                 writes DIR/env (export QUARRY_TEST_S3_*=...) and prints it
#   test/s3-server.sh stop DIR    stops the three daemons by PID and removes DIR
#
# Exits non-zero (after stopping whatever it started) when anything fails: callers must not carry on
# without it. Env: QUARRY_TEST_S3_BUCKET (quarry-test), MEM_BYTES (memstore cap, 1 GiB).
set -euo pipefail
APT_GET="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/apt-get.sh" # apt-get, one install at a time (test/apt-get.sh)
cmd=${1:?usage: s3-server.sh start|stop DIR}
D=${2:?usage: s3-server.sh start|stop DIR}
D=$(mkdir -p "$D" && cd "$D" && pwd)
BUCKET=${QUARRY_TEST_S3_BUCKET:-quarry-test}
AK=quarry-test-access-key
SK=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')

say() { echo "s3-server: $*" >&2; }
alive() { [ -r "/proc/$1/stat" ] && [ "$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" != Z ]; }

stop() { # the data is throwaway, so SIGKILL (a graceful stop takes about 2 s per daemon)
  for n in rgw osd mon; do
    [ -f "$D/$n.pid" ] || continue
    p=$(cat "$D/$n.pid")
    if alive "$p"; then kill -9 "$p" 2>/dev/null || true; fi
    for _ in $(seq 100); do alive "$p" || break; sleep 0.05; done
    rm -f "$D/$n.pid"
  done
}

clean() { rm -rf "$D"/{run,log,mon.a,osd.0,ceph.conf,monmap,keyring,env}; } # only what start made

if [ "$cmd" = stop ]; then
  stop
  clean
  exit 0
fi
[ "$cmd" = start ] || { say "unknown command $cmd"; exit 2; }

fail() {
  say "$*"
  for f in "$D"/log/*; do [ -f "$f" ] && { echo "--- $f" >&2; tail -n 15 "$f" >&2; }; done
  stop
  exit 1
}

install_packages() {
  command -v radosgw >/dev/null && command -v ceph-mon >/dev/null && command -v ceph-osd >/dev/null && return 0
  [ "$(id -u)" = 0 ] || fail "radosgw, ceph-mon and ceph-osd are missing and installing them needs root:
  apt-get update && apt-get install -y --no-install-recommends radosgw ceph-mon ceph-osd"
  command -v apt-get >/dev/null || fail "radosgw, ceph-mon and ceph-osd are missing and there is no apt-get"
  local t0=$SECONDS
  say "installing radosgw ceph-mon ceph-osd (once per machine)"
  bash "$APT_GET" update -qq >"$D/log/apt.log" 2>&1 || fail "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive bash "$APT_GET" install -y -qq --no-install-recommends radosgw ceph-mon ceph-osd \
    >>"$D/log/apt.log" 2>&1 || fail "apt-get install failed"
  say "installed in $((SECONDS - t0)) s"
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# A random unused loopback port below the kernel's ephemeral range (ip_local_port_range, 32768-60999 by default): a
# port inside it can be the local end of any outgoing connection of the moment (the test servers make thousands),
# which a connect probe does not see and the bind then fails on ("Address already in use": one full run in five).
free_port() {
  local p low
  low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
  [ "$low" -gt 12000 ] || low=32768
  for _ in $(seq 50); do
    p=$((10000 + RANDOM % (low - 10000)))
    port_free "$p" && { echo "$p"; return 0; }
  done
  return 1
}

wait_for() { # seconds, description, command...
  local end=$((SECONDS + $1)) what=$2; shift 2
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -ge "$end" ] && fail "timed out waiting for $what"
    sleep 0.1
  done
}

stop
clean; mkdir -p "$D"/{run,log,mon.a,osd.0}
install_packages
t0=$(date +%s%N)
MON_PORT=$(free_port) || fail "no free port"
S3_PORT=$(free_port) || fail "no free port"
[ "$MON_PORT" != "$S3_PORT" ] || S3_PORT=$((MON_PORT + 1))
FSID=$(cat /proc/sys/kernel/random/uuid)

# Settings that matter (see docs): without auth "none" + "crc secure" the gateway loops on auth (S3 requests
# are still SigV4-checked); fast paxos makes the monitor ready in ~1 s instead of ~13 s; tcp_nodelay avoids
# ~45 ms per small GET; pool size 1 and chooseleaf type 0 let a single OSD hold everything.
cat >"$D/ceph.conf" <<EOF
[global]
fsid = $FSID
mon host = v2:127.0.0.1:$MON_PORT
public addr = 127.0.0.1
ms bind ipv6 = false
auth cluster required = none
auth service required = none
auth client required = none
ms mon client mode = crc secure
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
mon allow pool size one = true
mon max pg per osd = 1000
mon warn on pool no redundancy = false
osd crush chooseleaf type = 0
paxos propose interval = 0.01
paxos min wait = 0.001
run dir = $D/run
admin socket = $D/run/\$name.asok
pid file = $D/run/\$name.pid
log file = $D/log/\$name.log
[mon]
mon data = $D/mon.\$id
[osd]
osd data = $D/osd.\$id
osd objectstore = memstore
memstore device bytes = ${MEM_BYTES:-1073741824}
osd memory target = 939524096
[client.rgw.a]
rgw frontends = beast endpoint=127.0.0.1:$S3_PORT tcp_nodelay=1
EOF
C=(-c "$D/ceph.conf")

monmaptool --create --addv a "[v2:127.0.0.1:$MON_PORT]" --fsid "$FSID" "$D/monmap" >/dev/null || fail "monmaptool failed"
ceph-authtool --create-keyring "$D/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null || fail "ceph-authtool failed"
ceph-mon "${C[@]}" --mkfs -i a --monmap "$D/monmap" --keyring "$D/keyring" >"$D/log/mon-mkfs.out" 2>&1 || fail "ceph-mon --mkfs failed"
ceph-mon "${C[@]}" -i a -f >"$D/log/mon.out" 2>&1 &
echo $! >"$D/mon.pid"
wait_for 30 "the monitor" timeout 5 ceph "${C[@]}" mon stat

OSD_UUID=$(cat /proc/sys/kernel/random/uuid)
OSD_ID=$(timeout 20 ceph "${C[@]}" osd new "$OSD_UUID") || fail "ceph osd new failed"
ceph-osd "${C[@]}" -i "$OSD_ID" --mkfs --osd-uuid "$OSD_UUID" >"$D/log/osd-mkfs.out" 2>&1 || fail "ceph-osd --mkfs failed"
ceph-osd "${C[@]}" -i "$OSD_ID" -f >"$D/log/osd.out" 2>&1 &
echo $! >"$D/osd.pid"
wait_for 60 "the OSD" bash -c "timeout 5 ceph -c '$D/ceph.conf' osd stat | grep -q '1 up'"

radosgw "${C[@]}" -n client.rgw.a -f >"$D/log/rgw.out" 2>&1 &
echo $! >"$D/rgw.pid"
wait_for 60 "the gateway" curl -fsS -o /dev/null "http://127.0.0.1:$S3_PORT/"
radosgw-admin "${C[@]}" user create --uid=quarry-test --display-name=quarry-test \
  --access-key="$AK" --secret="$SK" >"$D/log/user.json" 2>&1 || fail "radosgw-admin user create failed"
# CreateBucket, SigV4-signed; rgw wants the x-amz-content-sha256 header
curl -fsS -o /dev/null -X PUT --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AK:$SK" \
  -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "http://127.0.0.1:$S3_PORT/$BUCKET" || fail "creating bucket $BUCKET failed"

cat >"$D/env" <<EOF
export QUARRY_TEST_S3_ENDPOINT=http://127.0.0.1:$S3_PORT
export QUARRY_TEST_S3_BUCKET=$BUCKET
export QUARRY_TEST_S3_ACCESS_KEY=$AK
export QUARRY_TEST_S3_SECRET_KEY=$SK
export QUARRY_TEST_S3_REGION=us-east-1
EOF
say "ready on 127.0.0.1:$S3_PORT in $((($(date +%s%N) - t0) / 1000000)) ms"
cat "$D/env"
