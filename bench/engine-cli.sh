#!/usr/bin/env bash
# The CLI rows of bench/engine.sh on their own: a fresh Quarry of this tree with 1,000,000 access-log lines in
# segments, then `quarry search run ... --json` of each CLI tree against the server's own time for the same searches
# (grep, count, grep | count, regex with a literal), interleaved, with the load average. See bench/README.md, "The CLI
# against the server's time"; the work is done by bench/engine-cli.ts.
#
#   bash bench/engine-cli.sh                          the CLI of this tree
#   BENCH_CLI_TREES="/tmp/old $PWD" bash bench/engine-cli.sh   an older tree's CLI beside this one (A/B, same data)
#
# Tunables (environment): BENCH_ENTRIES (1000000), BENCH_ROUNDS (5), BENCH_SETTLE_S (600).
set -Eeuo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUN=$ROOT/node_modules/.bin/bun
[ -x "$BUN" ] || { echo "bench/engine-cli.sh: Bun is missing; run 'npm ci' first" >&2; exit 2; }

# shellcheck source=bench/common.sh
source bench/common.sh
no_target_args engine-cli.sh "$@"
bench_init engine-cli
read -r -a TREES <<<"${BENCH_CLI_TREES:-$ROOT}"

PASSWORD=bench-$(date +%s)-password
PORT=$("$BUN" run bench/lib.ts free-port)
BASE=http://127.0.0.1:$PORT
echo "== starting Quarry on 127.0.0.1:$PORT (data in $TMP/data)"
mkdir -p "$TMP/data"
QUARRY_DATA_DIR=$TMP/data QUARRY_LISTEN=127.0.0.1:$PORT QUARRY_ADMIN_PASSWORD=$PASSWORD QUARRY_LOG_LEVEL=warn \
  QUARRY_COMPACT_INTERVAL=${QUARRY_COMPACT_INTERVAL:-1s} "$BUN" run server/main.ts >"$TMP/quarry.log" 2>&1 &
SERVER=$!
PIDS+=("$SERVER")
"$BUN" run bench/lib.ts wait "$BASE/api/test" 30 || { echo "bench/engine-cli.sh: Quarry did not start" >&2; exit 1; }
echo "== Bun $("$BUN" --version), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) CPUs"
bounded 3600 "$BUN" run bench/engine-cli.ts "$BASE" "$PASSWORD" "$TMP/data" "${TREES[@]}"
