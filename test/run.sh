#!/usr/bin/env bash
# Runs the whole test suite with Bun and ends with one plain summary line ("N passed, N failed").
# Anything the tests need that is not an npm package is started here, by the project itself.
set -uo pipefail
cd "$(dirname "$0")/.."
BUN=node_modules/.bin/bun
[ -x "$BUN" ] || { echo "test/run.sh: Bun is missing; run 'npm ci' first" >&2; exit 2; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$BUN" test "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
passed=$(grep -Eo '^ *[0-9]+ pass$' "$log" | tail -1 | grep -Eo '[0-9]+')
failed=$(grep -Eo '^ *[0-9]+ fail$' "$log" | tail -1 | grep -Eo '[0-9]+')
echo "tests: ${passed:-0} passed, ${failed:-0} failed"
if [ "${passed:-0}" -eq 0 ] && [ "$status" -eq 0 ]; then echo "test/run.sh: no test ran" >&2; exit 1; fi
exit "$status"
