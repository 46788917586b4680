#!/usr/bin/env bash
# Runs every benchmark (`npm run bench`); arguments go to each. See bench/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bash bench/whoami.sh "$@"
