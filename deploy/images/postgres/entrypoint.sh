#!/bin/sh
# First start: a cluster in $PGDATA with POSTGRES_USER (its password POSTGRES_PASSWORD, required)
# as superuser and an empty POSTGRES_DB; connections from the network need that password. Then,
# and on every later start, PostgreSQL itself, as PID 1 (SIGINT from `docker stop` is a fast shutdown).
set -eu
: "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}"
user="${POSTGRES_USER:-postgres}"
db="${POSTGRES_DB:-$user}"

if [ ! -s "$PGDATA/PG_VERSION" ]; then
    pwfile="$(mktemp)"
    printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
    initdb --username="$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 \
        --encoding=UTF8 --locale=C.UTF-8 -D "$PGDATA" >/dev/null
    rm -f "$pwfile"
    echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
    if [ "$db" != postgres ]; then
        echo "CREATE DATABASE \"$db\" OWNER \"$user\"" | postgres --single -D "$PGDATA" -j postgres >/dev/null
    fi
fi
exec postgres -D "$PGDATA" -c listen_addresses='*'
