#!/usr/bin/env bash
# One program from Debian's packages for the tests that need it, installed the way test/pg-server.sh and
# test/s3-server.sh install their servers: nothing to do when PROGRAM is on the PATH (or in /usr/sbin), else
# `apt-get install PACKAGE...`, as root or through sudo, with no package service started. Prints the program's path.
# Exits non-zero with the reason when it cannot: the tests that need it fail, they never skip.
#   bash test/debian-package.sh PROGRAM PACKAGE...      (test/haproxy-install.sh, test/chromium-install.sh)
set -euo pipefail
APT_GET="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/apt-get.sh" # apt-get, one install at a time (test/apt-get.sh)

[ $# -ge 2 ] || { echo "usage: test/debian-package.sh PROGRAM PACKAGE..." >&2; exit 2; }
program=$1
shift
say() { echo "$program-install: $*" >&2; }
found() { PATH=$PATH:/usr/sbin:/usr/local/sbin command -v "$program"; }

if bin=$(found); then
  echo "$bin"
  exit 0
fi
command -v apt-get >/dev/null || { say "$program is missing and there is no apt-get: install Debian's $*"; exit 1; }
SUDO=()
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || { say "$program is missing and installing it needs root: apt-get install -y $*"; exit 1; }
  SUDO=(sudo -n)
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
t0=$SECONDS
say "installing $* (once per machine)"
# No package's service may start on a test machine: policy-rc.d refuses every start while it installs (Debian's
# invoke-rc.d honours it), and is removed again.
policy=/usr/sbin/policy-rc.d
made_policy=false
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | "${SUDO[@]}" tee "$policy" >/dev/null && "${SUDO[@]}" chmod 0755 "$policy" && made_policy=true
fi
status=0
{ "${SUDO[@]}" bash "$APT_GET" update -qq && "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive bash "$APT_GET" install -y -qq "$@"; } >"$log" 2>&1 || status=$?
if $made_policy; then "${SUDO[@]}" rm -f "$policy"; fi
if [ "$status" -ne 0 ]; then
  tail -n 15 "$log" >&2
  say "apt-get install $* failed (exit $status)"
  exit 1
fi
bin=$(found) || { say "$program was installed but is not found"; exit 1; }
say "installed in $((SECONDS - t0)) s"
echo "$bin"
