#!/bin/sh
# As the official redis image: the server runs as redis, in /data, with protected mode off
# (that image builds Redis with it off by default).
set -eu
if [ "$1" = redis-server ]; then
    shift
    chown redis:redis /data
    exec setpriv --reuid=redis --regid=redis --init-groups redis-server "$@" --protected-mode no
fi
exec "$@"
