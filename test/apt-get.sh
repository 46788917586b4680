#!/usr/bin/env bash
# apt-get for the project's install scripts, one at a time. The test files run in two worker processes, and two of
# them installing at once (rsyslog for test/syslog-daemons.test.ts while Chromium went in for the browser tests, in a
# fresh-clone CI run) made the second fail on dpkg's lock (apt-get exit 100). Every script of ours that installs from
# Debian's packages runs apt-get through this: a lock of ours held for the whole command (update or install), and
# apt's own wait for dpkg's lock (DPkg::Lock::Timeout) for any other apt on the machine.
#   bash test/apt-get.sh ARGS...      (the arguments of apt-get; as root, or through sudo)
set -euo pipefail
exec flock -w 1800 /tmp/quarry-apt-get.lock apt-get -o DPkg::Lock::Timeout=600 "$@"
