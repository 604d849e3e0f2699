#!/usr/bin/env bash
# scripts/ab-signed-in.sh BIN_A BIN_B [BIN_C...]
#
# Two (or more) release builds against each other on the signed-in Seoul page, in wall time:
# one database is seeded once through the forms (20 members, a post each; with REPLIES=1, the
# default, 3 replies and 2 agreements under each post: 40 replies shown), then each build in
# turn serves its own copy of it, pinned to CPU 0, while `wrk -t1 -c16` on CPU 1 asks for the
# page as the first member, plain and with gzip. ROUNDS rounds (default 3), builds alternated
# within each, so that the machine's drift falls on all of them alike. Callgrind counts
# instructions; this shows what the kernel adds (docs/performance.md, 2026-11-25).
#   REPLIES=0 for the board without replies; DURATION=6s; PORT=8097.
set -euo pipefail
(( $# >= 2 )) || { echo "usage: $0 BIN_A BIN_B [BIN_C...]" >&2; exit 2; }
BINS=("$@")
REPLIES=${REPLIES:-1}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-6s}
PORT=${PORT:-8097}
BASE="http://127.0.0.1:$PORT"
WORK=$(mktemp -d /tmp/ab-signed-in.XXXXXX)
ARGS=(serve --port "$PORT" --weather demo --log-level warning --seconds-between-posts 0 --posts-per-day 100000000
      --sign-ups-per-hour 1000000)
PID=""
start() { # BIN DB
    taskset -c 0 "$1" "${ARGS[@]}" --db "$2" >"$WORK/server.log" 2>&1 &
    PID=$!
    for _ in $(seq 1 300); do curl -fs "$BASE/healthz" >/dev/null 2>&1 && return 0; sleep 0.2; done
    echo "server did not come up" >&2; return 1
}
stop() { # TERM, so that SQLite folds its log into the database; KILL if it lingers
    kill -TERM "$PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$PID" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$PID" 2>/dev/null || true
    wait "$PID" 2>/dev/null || true
    PID=""
}
trap 'stop; rm -rf "$WORK"' EXIT

start "${BINS[0]}" "$WORK/seed.sqlite"
source "$(dirname "$0")/seed-board.sh"
BIN="${BINS[0]}" SEED_DB="$WORK/seed.sqlite" seed_members 1
[[ $REPLIES != 1 ]] || seed_conversation
shown() { # what the first member's page shows: replies and bytes
    local page
    page=$(curl -fsS -H "Cookie: $COOKIE" "$BASE/city/seoul")
    echo "$(grep -o 'data-parent-id=' <<<"$page" | wc -l) replies shown, $(wc -c <<<"$page") bytes"
}
echo "the page: $(shown)"
stop
for round in $(seq 1 "$ROUNDS"); do
    for bin in "${BINS[@]}"; do
        # The database with its log, if it kept one: the seed is in one or the other.
        rm -f "$WORK/run.sqlite-wal" "$WORK/run.sqlite-shm"
        for suffix in "" -wal; do [[ ! -e "$WORK/seed.sqlite$suffix" ]] || cp "$WORK/seed.sqlite$suffix" "$WORK/run.sqlite$suffix"; done
        start "$bin" "$WORK/run.sqlite"
        [[ $round != 1 ]] || echo "$bin serves: $(shown)" # the same page as seeded, signed in
        for encoding in identity gzip; do
            taskset -c 1 wrk -t1 -c16 -d2s -H "Cookie: $COOKIE" -H "Accept-Encoding: $encoding" "$BASE/city/seoul" >/dev/null 2>&1
            rate=$(taskset -c 1 wrk -t1 -c16 -d"$DURATION" -H "Cookie: $COOKIE" -H "Accept-Encoding: $encoding" "$BASE/city/seoul" \
                | awk '/Requests\/sec/ {print $2}')
            echo "round $round $bin $encoding $rate req/s"
        done
        stop
    done
done
