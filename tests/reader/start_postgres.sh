#!/usr/bin/env bash
# Start a throwaway PostgreSQL cluster on 127.0.0.1 for the reader tests (Debian's postgresql package);
# print its URL for CXREVAL_TEST_POSTGRES_URL. Usage: start_postgres.sh [PORT]. Stop: pg_ctl -D DIR/data stop.
set -euo pipefail
PORT=${1:-54329}
BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$BIN/initdb" ] || { echo "no PostgreSQL server binaries under /usr/lib/postgresql" >&2; exit 1; }
DIR=$(mktemp -d /tmp/cxreval-pg-XXXXXX)
if [ "$(id -u)" = 0 ]; then
  chown postgres: "$DIR"
  as_pg() { su postgres -s /bin/sh -c "$1"; }
else
  as_pg() { sh -c "$1"; }
fi
as_pg "'$BIN/initdb' -D '$DIR/data' -A trust -U postgres -E UTF8 --no-sync" >"$DIR/initdb.log" 2>&1
as_pg "'$BIN/pg_ctl' -D '$DIR/data' -l '$DIR/server.log' -w -t 60 \
  -o \"-c listen_addresses=127.0.0.1 -p $PORT -k '$DIR' -c max_connections=200\" start" >/dev/null
echo "postgresql://postgres@127.0.0.1:$PORT/postgres"
