#!/usr/bin/env bash
# Debian's rsyslog (with its GnuTLS driver) and syslog-ng for the tests that forward through them to Quarry's syslog
# listeners (test/syslog-daemons.test.ts), installed the way test/debian-package.sh installs a package: nothing to do
# when they are there, else apt-get, as root or through sudo. Neither runs as a service: the tests start each as a
# process of their own with a config file in a temporary directory.
# The two packages conflict in Debian (each is "the" system logger), so rsyslog is installed and syslog-ng-core is
# unpacked beside it (dpkg-deb -x into a cache directory, its libraries installed as packages).
# Prints two lines: `rsyslogd <path>` and `syslog-ng <path> <module directory>`. Exits non-zero with the reason when
# it cannot: the tests that need them fail, they never skip.
set -euo pipefail
APT_GET="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/apt-get.sh" # apt-get, one install at a time (test/apt-get.sh)

say() { echo "syslog-install: $*" >&2; }
CACHE=${QUARRY_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/quarry-test}
NG_ROOT=$CACHE/syslog-ng-core
rsyslogd_bin() { PATH=$PATH:/usr/sbin:/usr/local/sbin command -v rsyslogd; }
gtls_present() { ls /usr/lib/x86_64-linux-gnu/rsyslog/lmnsd_gtls.so /usr/lib/*/rsyslog/lmnsd_gtls.so >/dev/null 2>&1; }
ng_bin() { [ -x "$NG_ROOT/usr/sbin/syslog-ng" ] && LD_LIBRARY_PATH=$NG_ROOT/usr/lib/syslog-ng "$NG_ROOT/usr/sbin/syslog-ng" --version >/dev/null 2>&1 && echo "$NG_ROOT/usr/sbin/syslog-ng"; }

SUDO=()
if [ "$(id -u)" != 0 ]; then SUDO=(sudo -n); fi
apt() {
  command -v apt-get >/dev/null || { say "$* is missing and there is no apt-get: install rsyslog (with rsyslog-gnutls) and syslog-ng 3.38 or newer"; exit 1; }
  if [ "${#SUDO[@]}" -gt 0 ] && ! command -v sudo >/dev/null; then say "installing $* needs root: apt-get install -y $*"; exit 1; fi
  local log status=0 policy=/usr/sbin/policy-rc.d made_policy=false
  log=$(mktemp)
  # The packages' own services are not wanted on a test machine: policy-rc.d refuses every start while they install.
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | "${SUDO[@]}" tee "$policy" >/dev/null && "${SUDO[@]}" chmod 0755 "$policy" && made_policy=true
  fi
  { "${SUDO[@]}" bash "$APT_GET" update -qq && "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive bash "$APT_GET" install -y -qq "$@"; } >"$log" 2>&1 || status=$?
  if $made_policy; then "${SUDO[@]}" rm -f "$policy"; fi
  if [ "$status" -ne 0 ]; then
    tail -n 15 "$log" >&2
    rm -f "$log"
    say "apt-get install $* failed (exit $status)"
    exit 1
  fi
  rm -f "$log"
}

t0=$SECONDS
if ! rsyslogd_bin >/dev/null || ! gtls_present; then
  say "installing rsyslog and rsyslog-gnutls (once per machine)"
  apt rsyslog rsyslog-gnutls
fi
if ! ng_bin >/dev/null; then
  say "unpacking syslog-ng-core into $NG_ROOT (once per machine)"
  apt libivykis0 libnet1 libjson-c5 libpcre3 libwrap0 libglib2.0-0 libcap2 libssl3
  dl=$(mktemp -d)
  # apt-get download runs as the _apt user where it can: the directory must be writable by it.
  chmod 0777 "$dl"
  (cd "$dl" && apt-get download -qq syslog-ng-core >/dev/null 2>&1) || { rm -rf "$dl"; say "apt-get download syslog-ng-core failed"; exit 1; }
  rm -rf "$NG_ROOT"
  mkdir -p "$NG_ROOT"
  dpkg-deb -x "$dl"/syslog-ng-core_*.deb "$NG_ROOT"
  rm -rf "$dl"
fi
rs=$(rsyslogd_bin) || { say "rsyslog was installed but rsyslogd is not found"; exit 1; }
ng=$(ng_bin) || { say "syslog-ng was unpacked but does not run"; exit 1; }
modules=$(ls -d "$NG_ROOT"/usr/lib/syslog-ng/3.* | head -1)
[ $((SECONDS - t0)) -gt 1 ] && say "ready in $((SECONDS - t0)) s"
echo "rsyslogd $rs"
echo "syslog-ng $ng $modules"
