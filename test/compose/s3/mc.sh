#!/bin/sh
# `mc ready local`, the one MinIO client command deploy/compose.yaml runs (its health check): true once the gateway
# answers and the access key works (minio.sh marks it after making the user).
[ "$*" = "ready local" ] || { echo "mc (stand-in): only 'mc ready local' is known" >&2; exit 2; }
[ -f /run/s3-standin/ready ] && curl -fsS -o /dev/null http://127.0.0.1:9000/
