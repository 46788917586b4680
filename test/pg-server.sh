#!/usr/bin/env bash
# A throwaway PostgreSQL server for the test suite (Debian's package), bound to 127.0.0.1 only, run as the
# unprivileged `postgres` OS user, with test-only durability settings (fsync, synchronous_commit and
# full_page_writes off: the data dies with DIR anyway). No systemd, no Docker.
#
#   test/pg-server.sh start DIR   installs Debian's postgresql when missing (needs root), initialises a cluster
#                                 in DIR, starts it on a free loopback port, writes DIR/env
#                                 (export QUARRY_TEST_DATABASE_URL=postgres://...) and prints it
#   test/pg-server.sh stop DIR    stops the server by PID and removes what start made in DIR
#
# Exits non-zero (after stopping whatever it started) when anything fails: callers must not carry on without it.
# Env: PG_USER_OS (postgres: the OS user that owns and runs the server when invoked as root).
set -euo pipefail
APT_GET="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/apt-get.sh" # apt-get, one install at a time (test/apt-get.sh)
cmd=${1:?usage: pg-server.sh start|stop DIR}
D=${2:?usage: pg-server.sh start|stop DIR}
D=$(mkdir -p "$D" && cd "$D" && pwd)
OS_USER=${PG_USER_OS:-postgres}

say() { echo "pg-server: $*" >&2; }
alive() { [ -r "/proc/$1/stat" ] && [ "$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" != Z ]; }

stop() { # the data is throwaway, so SIGQUIT (PostgreSQL's immediate shutdown), then SIGKILL if it lingers
  [ -f "$D/postgres.pid" ] || return 0
  local p
  p=$(cat "$D/postgres.pid")
  if alive "$p"; then kill -QUIT "$p" 2>/dev/null || true; fi
  for _ in $(seq 100); do alive "$p" || break; sleep 0.05; done
  if alive "$p"; then kill -9 "$p" 2>/dev/null || true; fi
  rm -f "$D/postgres.pid"
}

clean() { rm -rf "$D"/{data,sock,log,pw,env}; } # only what start made

if [ "$cmd" = stop ]; then
  stop
  clean
  exit 0
fi
[ "$cmd" = start ] || { say "unknown command $cmd"; exit 2; }

fail() {
  say "$*"
  [ -f "$D/log/server.log" ] && { echo "--- $D/log/server.log" >&2; tail -n 15 "$D/log/server.log" >&2; }
  stop
  exit 1
}

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }

install_packages() {
  [ -n "$(pg_bin)" ] && [ -x "$(pg_bin)/initdb" ] && return 0
  [ "$(id -u)" = 0 ] || fail "PostgreSQL is missing and installing it needs root: apt-get update && apt-get install -y postgresql"
  command -v apt-get >/dev/null || fail "PostgreSQL is missing and there is no apt-get"
  local t0=$SECONDS
  say "installing postgresql (once per machine)"
  bash "$APT_GET" update -qq >"$D/log/apt.log" 2>&1 || fail "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive bash "$APT_GET" install -y -qq postgresql >>"$D/log/apt.log" 2>&1 || fail "apt-get install failed"
  say "installed in $((SECONDS - t0)) s"
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# A random unused loopback port below the kernel's ephemeral range (ip_local_port_range, 32768-60999 by default): a
# port inside it can be the local end of any outgoing connection of the moment (the test servers make thousands),
# which a connect probe does not see and the bind then fails on ("Address already in use": one full run in five).
free_port() {
  local p low
  low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
  [ "$low" -gt 12000 ] || low=32768
  for _ in $(seq 50); do
    p=$((10000 + RANDOM % (low - 10000)))
    port_free "$p" && { echo "$p"; return 0; }
  done
  return 1
}

stop
clean
mkdir -p "$D"/{log,sock}
install_packages
BIN=$(pg_bin)
RUN=()
if [ "$(id -u)" = 0 ]; then
  id "$OS_USER" >/dev/null 2>&1 || fail "the OS user $OS_USER does not exist (set PG_USER_OS)"
  RUN=(runuser -u "$OS_USER" --)
  chown "$OS_USER" "$D" "$D/log" "$D/sock"
fi
t0=$(date +%s%N)
PW=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
(umask 077 && echo "$PW" >"$D/pw")
[ "$(id -u)" = 0 ] && chown "$OS_USER" "$D/pw"
"${RUN[@]}" "$BIN/initdb" -D "$D/data" -U quarry --pwfile="$D/pw" --auth-local=trust --auth-host=scram-sha-256 \
  -E UTF8 --locale=C.UTF-8 --no-sync >"$D/log/initdb.log" 2>&1 || fail "initdb failed: $(tail -3 "$D/log/initdb.log")"
# max_connections: every test server holds a small pool of its own, and test files run in parallel.
# Another process may still take the chosen port between the probe and the bind: then again on another one.
for attempt in 1 2 3; do
  PORT=$(free_port) || fail "no free port"
  "${RUN[@]}" "$BIN/pg_ctl" -D "$D/data" -l "$D/log/server.log" -w -t 60 start -o \
    "-p $PORT -c listen_addresses=127.0.0.1 -k $D/sock -c max_connections=400 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
    >/dev/null 2>&1 && break
  grep -q 'Address already in use' "$D/log/server.log" 2>/dev/null && [ "$attempt" -lt 3 ] || fail "the server did not start"
  say "port $PORT was taken meanwhile; trying another"
  : >"$D/log/server.log"
done
head -1 "$D/data/postmaster.pid" >"$D/postgres.pid"
"$BIN/pg_isready" -h 127.0.0.1 -p "$PORT" -t 30 >/dev/null || fail "the server does not answer on 127.0.0.1:$PORT"

cat >"$D/env" <<EOF
export QUARRY_TEST_DATABASE_URL=postgres://quarry:$PW@127.0.0.1:$PORT/postgres
EOF
say "ready on 127.0.0.1:$PORT in $((($(date +%s%N) - t0) / 1000000)) ms"
cat "$D/env"
