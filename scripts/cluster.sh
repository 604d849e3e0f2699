#!/usr/bin/env bash
# scripts/cluster.sh start|restart|stop [DIR]
#
# Several Weatherboard nodes on one PostgreSQL, behind nginx, all on loopback: what
# docs/operations.md describes, small enough to run on one machine.
#   start:   initdb a PostgreSQL into DIR (default /tmp/weatherboard-cluster) on PG_PORT (55432),
#            create the site's own role and database (owned by the role, as on PostgreSQL 15),
#            migrate it and import the cities as that role, start one node per port in NODE_PORTS
#            ("8091 8092") and nginx on PORT (8080) balancing over them; returns when nginx
#            answers /healthz.
#   restart: the documented rolling restart: one node at a time, drained at nginx first (marked
#            `down`, nginx reloaded), stopped with SIGTERM, started, and marked up again once
#            it answers /healthz.
#   node P:  starts the node of port P again (after it was killed) and waits for its /healthz.
#   stop:    stops nginx, the nodes and PostgreSQL, and removes DIR.
# Environment: NODE_ARGS (extra `serve` settings, e.g. "--weather demo"), NODE_PREFIX (e.g.
# "taskset -c 0" to pin the nodes), BIN (a built weatherboard; default: builds release),
# REPLICA=1 (a streaming replica made with pg_basebackup on PG_PORT+1, docs/operations.md
# section 3, that the nodes read from with --database-replica-url).
# As root, PostgreSQL runs as the `postgres` user (it refuses root).
# Needs: postgresql, nginx, curl.
set -euo pipefail
cd "$(dirname "$0")/.."
COMMAND=${1:?usage: $0 start|restart|node PORT|stop [DIR]}
if [[ $COMMAND == node ]]; then NODE=${2:?usage: $0 node PORT [DIR]}; shift; fi
DIR=${2:-/tmp/weatherboard-cluster}
PORT=${PORT:-8080}
PG_PORT=${PG_PORT:-55432}
read -r -a NODE_PORTS <<<"${NODE_PORTS:-8091 8092}"
read -r -a EXTRA <<<"${NODE_ARGS:-}"
read -r -a PREFIX <<<"${NODE_PREFIX:-}"
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
URL="postgresql://weatherboard@127.0.0.1:$PG_PORT/weatherboard"
REPLICA_PORT=$((PG_PORT + 1))
[[ -z ${REPLICA:-} && ! -e $DIR/replica ]] || EXTRA+=(--database-replica-url "postgresql://weatherboard@127.0.0.1:$REPLICA_PORT/weatherboard")
FAIL_TIMEOUT=10 # nginx's fail_timeout for each node, as docs/operations.md has it

as_postgres() { # pinned like the nodes (NODE_PREFIX): affinity passes on to the server
    if [[ $(id -u) == 0 ]]; then "${PREFIX[@]}" su postgres -s /bin/sh -c "$*"; else "${PREFIX[@]}" sh -c "$*"; fi
}

start_node() { # PORT: one node, its pid in DIR/node-PORT.pid, its log in DIR/node-PORT.log
    "${PREFIX[@]}" "$(cat "$DIR/bin")" serve --database-url "$URL" --port "$1" --trusted-proxies 127.0.0.1 "${EXTRA[@]}" >>"$DIR/node-$1.log" 2>&1 &
    echo $! >"$DIR/node-$1.pid"
}

wait_healthy() { # URL
    for _ in $(seq 1 300); do curl -fs "$1/healthz" >/dev/null 2>&1 && return 0; sleep 0.2; done
    echo "$1 did not come up" >&2; return 1
}

case $COMMAND in
start)
    [[ -n $PG_BIN ]] || { echo "missing PostgreSQL (apt-get install -y postgresql)" >&2; exit 1; }
    command -v nginx >/dev/null || { echo "missing nginx (apt-get install -y nginx)" >&2; exit 1; }
    [[ ! -e $DIR ]] || { echo "$DIR exists: stop the running cluster first ($0 stop $DIR)" >&2; exit 1; }
    mkdir -p "$DIR/nginx/logs"
    [[ $(id -u) != 0 ]] || chown postgres "$DIR" # the server runs as postgres: its folder must be reachable
    as_postgres "$PG_BIN/initdb -D $DIR/pg --no-locale -E UTF8 -A trust -U postgres" >/dev/null
    as_postgres "$PG_BIN/pg_ctl -D $DIR/pg -l $DIR/pg.log -w -o '-p $PG_PORT -k $DIR -c listen_addresses=127.0.0.1 -c max_connections=200' start" >/dev/null
    # The site's own role, never the superuser (docs/operations.md, section 2; trust auth on loopback here).
    as_postgres "$PG_BIN/psql -h 127.0.0.1 -p $PG_PORT -U postgres -v ON_ERROR_STOP=1 -q -c 'CREATE ROLE weatherboard LOGIN' -c 'CREATE DATABASE weatherboard OWNER weatherboard'"

    if [[ -z ${BIN:-} ]]; then
        swift build -c release --product weatherboard >/dev/null
        BIN=.build/release/weatherboard
    fi
    "$BIN" migrate --database-url "$URL"
    "$BIN" import-cities --database-url "$URL"
    if [[ -n ${REPLICA:-} ]]; then
        touch "$DIR/replica" # `restart` and `node` start nodes with it too
        # As docs/operations.md has it, on loopback: -R makes it a standby of the primary.
        as_postgres "$PG_BIN/pg_basebackup -h 127.0.0.1 -p $PG_PORT -U postgres -D $DIR/pg-replica -X stream -R -c fast" >/dev/null
        as_postgres "$PG_BIN/pg_ctl -D $DIR/pg-replica -l $DIR/pg-replica.log -w -o '-p $REPLICA_PORT -k $DIR -c listen_addresses=127.0.0.1 -c max_connections=200 -c hot_standby_feedback=on' start" >/dev/null
    fi
    upstreams=""
    echo "$BIN" >"$DIR/bin"
    for node in "${NODE_PORTS[@]}"; do
        start_node "$node"
        upstreams+="        server 127.0.0.1:$node max_fails=3 fail_timeout=${FAIL_TIMEOUT}s;"$'\n'
    done
    cat >"$DIR/nginx/nginx.conf" <<CONF
daemon on;
worker_processes 1;
error_log $DIR/nginx/logs/error.log warn;
pid $DIR/nginx/nginx.pid;
events { worker_connections 4096; }
http {
    access_log off;
    upstream weatherboard {
$upstreams        keepalive 64;
    }
    server {
        listen 127.0.0.1:$PORT;
        client_max_body_size 19m;          # a post's photo (docs/operations.md)
        location / {
            proxy_pass http://weatherboard;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host \$host;
            proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
            proxy_next_upstream error timeout;
        }
        location ~ ^/(city/[^/]+|posts/[0-9]+)/live\$ {
            proxy_pass http://weatherboard;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host \$host;
            proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
            proxy_buffering off;
            proxy_read_timeout 75s;
        }
    }
}
CONF
    for node in "${NODE_PORTS[@]}"; do wait_healthy "http://127.0.0.1:$node"; done
    "${PREFIX[@]}" nginx -p "$DIR/nginx" -c "$DIR/nginx/nginx.conf"
    wait_healthy "http://127.0.0.1:$PORT"
    echo "cluster up: http://127.0.0.1:$PORT → nodes ${NODE_PORTS[*]} → $URL"
    ;;
restart)
    # nginx first stops sending the node anything (`down`, then a reload: old workers finish their
    # requests and close their own keepalive connections to it). Stopping a node nginx still uses
    # races nginx's reuse of an idle connection against the node closing it, and a POST caught in
    # that race is a 502 (nginx never resends a POST). SIGTERM then drains what is left.
    for node in "${NODE_PORTS[@]}"; do
        sed -i "s/server 127.0.0.1:$node max_fails/server 127.0.0.1:$node down max_fails/" "$DIR/nginx/nginx.conf"
        nginx -p "$DIR/nginx" -c "$DIR/nginx/nginx.conf" -s reload
        sleep 1
        pid=$(cat "$DIR/node-$node.pid")
        kill -TERM "$pid"
        while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
        start_node "$node"
        wait_healthy "http://127.0.0.1:$node"
        sed -i "s/server 127.0.0.1:$node down max_fails/server 127.0.0.1:$node max_fails/" "$DIR/nginx/nginx.conf"
        nginx -p "$DIR/nginx" -c "$DIR/nginx/nginx.conf" -s reload
        echo "node $node restarted"
    done
    ;;
node)
    start_node "$NODE"
    wait_healthy "http://127.0.0.1:$NODE"
    ;;
stop)
    [[ -d $DIR ]] || exit 0
    [[ ! -f $DIR/nginx/nginx.pid ]] || nginx -p "$DIR/nginx" -c "$DIR/nginx/nginx.conf" -s stop 2>/dev/null || true
    for file in "$DIR"/node-*.pid; do
        [[ -f $file ]] && { kill -TERM "$(cat "$file")" 2>/dev/null || true; }
    done
    sleep 1
    [[ -z $PG_BIN || ! -d $DIR/pg-replica ]] || as_postgres "$PG_BIN/pg_ctl -D $DIR/pg-replica -m fast -w stop" >/dev/null 2>&1 || true
    [[ -z $PG_BIN || ! -d $DIR/pg ]] || as_postgres "$PG_BIN/pg_ctl -D $DIR/pg -m fast -w stop" >/dev/null 2>&1 || true
    rm -rf "$DIR"
    ;;
*)
    echo "usage: $0 start|restart|node PORT|stop [DIR]" >&2; exit 2
    ;;
esac
