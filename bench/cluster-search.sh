#!/usr/bin/env bash
# Benchmark (docs/cluster.md): a search launched on replica A and followed over the search WebSocket, on A itself
# (local) and through replica B (B relays the socket's requests to A over the internal route): the time from the launch
# to the first result, and the latency of one entries request, as ratios measured in the same run. See bench/README.md;
# the work is done by bench/cluster-search.ts. PostgreSQL and the S3 gateway are started here by the test scripts
# (test/pg-server.sh, test/s3-server.sh), on loopback, and removed on exit.
#
#   bash bench/cluster-search.sh     one run; appends a block to bench/results/cluster-search.md
#
# Tunables (environment): BENCH_ENTRIES (200000), BENCH_ROUNDS (15), BENCH_REQUESTS (200), BENCH_POLL_MS (5),
# BENCH_NO_RECORD=1.
set -Eeuo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUN=$ROOT/node_modules/.bin/bun
[ -x "$BUN" ] || { echo "bench/cluster-search.sh: Bun is missing; run 'npm ci' first" >&2; exit 2; }
# shellcheck source=bench/common.sh
source bench/common.sh
no_target_args cluster-search.sh "$@"
bench_init cluster-search
start_stores
"$BUN" run bench/cluster-search.ts | tee "$TMP/table.md"
if [ "${BENCH_NO_RECORD:-}" != 1 ]; then
  {
    echo
    echo "## $(date -u '+%Y-%m-%d %H:%M UTC'): bash bench/cluster-search.sh"
    echo "$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $(uname -r), Bun $("$BUN" --version), load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo
    cat "$TMP/table.md"
  } >>bench/results/cluster-search.md
fi
