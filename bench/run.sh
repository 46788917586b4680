#!/usr/bin/env bash
# Runs every benchmark (`npm run bench`); arguments go to each (--strict: exit 1 when any misses a target).
# See bench/README.md.
set -uo pipefail
cd "$(dirname "$0")/.."
rc=0
bash bench/whoami.sh "$@" || rc=1
bash bench/compare/run.sh "$@" || rc=1
node_modules/.bin/bun run bench/coldstart.ts "$@" || rc=1
bash bench/resources.sh "$@" || rc=1
bash bench/search.sh "$@" || rc=1
bash bench/engine.sh "$@" || rc=1
bash bench/load.sh "$@" || rc=1
node_modules/.bin/bun run bench/search-archive.ts || rc=1
node_modules/.bin/bun run bench/search-scan.ts || rc=1
bash bench/listing.sh "$@" || rc=1
bash bench/cluster-search.sh "$@" || rc=1
bash bench/cluster.sh "$@" || rc=1
exit "$rc"
