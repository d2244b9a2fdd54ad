#!/bin/sh
# What the official postgres image's entrypoint does on an empty data folder, with Debian's
# PostgreSQL: a cluster owned by POSTGRES_USER with POSTGRES_PASSWORD, a POSTGRES_DB database,
# password logins from the network; then the server as PID 1.
set -eu
bin=/usr/lib/postgresql/15/bin
mkdir -p "$PGDATA" /run/postgresql
chown postgres:postgres "$PGDATA" /run/postgresql
chmod 700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    pwfile=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
    chown postgres "$pwfile"
    runuser -u postgres -- "$bin/initdb" -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$pwfile" \
        --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8
    rm -f "$pwfile"
    echo "listen_addresses = '*'" >> "$PGDATA/postgresql.conf"
    echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
    if [ "$POSTGRES_DB" != postgres ]; then
        echo "CREATE DATABASE \"$POSTGRES_DB\" OWNER \"$POSTGRES_USER\";" |
            runuser -u postgres -- "$bin/postgres" --single -D "$PGDATA" postgres >/dev/null
    fi
fi
if [ "$1" = postgres ]; then
    shift
    exec setpriv --reuid=postgres --regid=postgres --init-groups "$bin/postgres" -D "$PGDATA" "$@"
fi
exec "$@"
