#!/bin/sh
# The stand-in's start (see Containerfile): the database made once on an empty data directory, then the server.
set -eu
BIN=/usr/lib/postgresql/15/bin
: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set}"
USER_NAME=${POSTGRES_USER:-postgres}
DB=${POSTGRES_DB:-$USER_NAME}
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pw=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pw"
  "$BIN/initdb" -D "$PGDATA" -U "$USER_NAME" --pwfile="$pw" --auth-local=trust --auth-host=scram-sha-256 \
    -E UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pw"
  echo "host all all 0.0.0.0/0 scram-sha-256" >>"$PGDATA/pg_hba.conf"
  echo "host all all ::/0 scram-sha-256" >>"$PGDATA/pg_hba.conf"
  if [ "$DB" != postgres ]; then
    "$BIN/postgres" --single -D "$PGDATA" postgres >/dev/null <<SQL
CREATE DATABASE "$DB" OWNER "$USER_NAME";
SQL
  fi
  echo "postgres-standin: database $DB made for $USER_NAME"
fi
exec "$BIN/postgres" -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/run/postgresql
