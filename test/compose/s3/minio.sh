#!/bin/sh
# `minio server DIR [options]` of the stand-in (see Containerfile): a one-node Ceph (monitor, OSD on memstore, RADOS
# Gateway on 0.0.0.0:9000) with one S3 user whose keys are MINIO_ROOT_USER and MINIO_ROOT_PASSWORD. The options
# after DIR (MinIO's console) have no counterpart and are ignored. Ends the daemons on SIGTERM or SIGINT.
set -eu
[ "${1:-}" = server ] || { echo "minio (stand-in): only 'server DIR' is known" >&2; exit 2; }
: "${MINIO_ROOT_USER:?MINIO_ROOT_USER must be set}" "${MINIO_ROOT_PASSWORD:?MINIO_ROOT_PASSWORD must be set}"
D=/run/s3-standin
rm -rf "$D" && mkdir -p "$D/run" "$D/log" "$D/mon.a" "$D/osd.0"
FSID=$(cat /proc/sys/kernel/random/uuid)
# The settings of test/s3-server.sh (one node, no cephx between the daemons; S3 requests are still SigV4-checked).
cat >"$D/ceph.conf" <<CONF
[global]
fsid = $FSID
mon host = v2:127.0.0.1:3300
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
memstore device bytes = 536870912
osd memory target = 939524096
[client.rgw.a]
rgw frontends = beast endpoint=0.0.0.0:9000 tcp_nodelay=1
CONF
C="-c $D/ceph.conf"
pids=""
stop() { for p in $pids; do kill "$p" 2>/dev/null || true; done; wait; exit 0; }
trap stop TERM INT
wait_for() { # seconds, what, command...
  n=$(($1 * 10)); what=$2; shift 2
  until "$@" >/dev/null 2>&1; do
    n=$((n - 1)); [ "$n" -gt 0 ] || { echo "minio (stand-in): timed out waiting for $what" >&2; tail -n 20 "$D"/log/*.log >&2; exit 1; }
    sleep 0.1
  done
}
monmaptool --create --addv a "[v2:127.0.0.1:3300]" --fsid "$FSID" "$D/monmap" >/dev/null
ceph-authtool --create-keyring "$D/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
ceph-mon $C --mkfs -i a --monmap "$D/monmap" --keyring "$D/keyring" >/dev/null 2>&1
ceph-mon $C -i a -f >"$D/log/mon.out" 2>&1 &
pids="$pids $!"
wait_for 30 "the monitor" timeout 5 ceph $C mon stat
OSD_UUID=$(cat /proc/sys/kernel/random/uuid)
OSD_ID=$(timeout 20 ceph $C osd new "$OSD_UUID")
ceph-osd $C -i "$OSD_ID" --mkfs --osd-uuid "$OSD_UUID" >/dev/null 2>&1
ceph-osd $C -i "$OSD_ID" -f >"$D/log/osd.out" 2>&1 &
pids="$pids $!"
wait_for 60 "the OSD" sh -c "timeout 5 ceph $C osd stat | grep -q '1 up'"
radosgw $C -n client.rgw.a -f >"$D/log/rgw.out" 2>&1 &
pids="$pids $!"
wait_for 60 "the gateway" curl -fsS -o /dev/null http://127.0.0.1:9000/
radosgw-admin $C user create --uid=root --display-name=root \
  --access-key="$MINIO_ROOT_USER" --secret="$MINIO_ROOT_PASSWORD" >"$D/log/user.json" 2>&1
touch "$D/ready"
echo "minio (stand-in): Ceph RADOS Gateway ready on :9000"
wait
