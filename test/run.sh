#!/usr/bin/env bash
# Runs the whole test suite with Bun and ends with one plain summary line ("N passed, N failed").
# Anything the tests need that is not an npm package is started here, by the project itself.
set -uo pipefail
cd "$(dirname "$0")/.."
BUN=node_modules/.bin/bun
[ -x "$BUN" ] || { echo "test/run.sh: Bun is missing; run 'npm ci' first" >&2; exit 2; }
log=$(mktemp)
s3dir=$(mktemp -d)
trap 'bash test/s3-server.sh stop "$s3dir" >/dev/null 2>&1; rm -rf "$log" "$s3dir"' EXIT
trap 'exit 130' INT TERM # run the EXIT trap (and stop the S3 server) on Ctrl-C too

# The S3 blob-store tests need a real S3 server; if it cannot start, the run fails here (the tests never skip).
if ! bash test/s3-server.sh start "$s3dir" >/dev/null; then
  echo "test/run.sh: the S3 test server did not start (see above)" >&2
  echo "tests: 0 passed, 0 failed"
  exit 1
fi
# shellcheck disable=SC1091
source "$s3dir/env" # exports QUARRY_TEST_S3_ENDPOINT, _BUCKET, _ACCESS_KEY, _SECRET_KEY, _REGION

# bunfig.toml's [test] timeout is not read by Bun 1.4.5 (a 6 s test failed at the 5 s default), so it is given here.
"$BUN" test --timeout 30000 "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
passed=$(grep -Eo '^ *[0-9]+ pass$' "$log" | tail -1 | grep -Eo '[0-9]+')
failed=$(grep -Eo '^ *[0-9]+ fail$' "$log" | tail -1 | grep -Eo '[0-9]+')
echo "tests: ${passed:-0} passed, ${failed:-0} failed"
if [ "${passed:-0}" -eq 0 ] && [ "$status" -eq 0 ]; then echo "test/run.sh: no test ran" >&2; exit 1; fi
exit "$status"
