#!/usr/bin/env bash
# Start a throwaway PostgreSQL cluster on 127.0.0.1 for the reader tests (Debian's postgresql package);
# print "URL DATADIR" (URL for CXREVAL_TEST_POSTGRES_URL; stop with: pg_ctl -D DATADIR stop -m fast, as the
# owner). Usage: start_postgres.sh [PORT] (default: a free port).
set -euo pipefail
PORT=${1:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
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
echo "postgresql://postgres@127.0.0.1:$PORT/postgres $DIR/data"
