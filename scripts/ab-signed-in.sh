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
csrf_of() { grep -o 'name="csrf_token" value="[^"]*"' | sed -n '1{s/.*value="//; s/"$//; p;}'; }
: >"$WORK/sessions.tsv"
for person in $(seq 1 20); do
    jar="$WORK/person-$person.jar"
    token=$(curl -fsS -c "$jar" -b "$jar" "$BASE/signup" | csrf_of)
    curl -fsS -o /dev/null -c "$jar" -b "$jar" --data-urlencode "csrf_token=$token" --data-urlencode "username=bench$person" \
        --data-urlencode "display_name=Bench person $person" --data-urlencode "password=a long bench password $person" "$BASE/signup"
    token=$(curl -fsS -c "$jar" -b "$jar" "$BASE/city/seoul" | csrf_of)
    curl -fsS -o /dev/null -c "$jar" -b "$jar" --data-urlencode "csrf_token=$token" \
        --data-urlencode "body=Post by person $person: drizzle by the river, see https://example.com/$person" "$BASE/city/seoul/posts"
    printf 'session=%s\t%s\n' "$(awk '$6 == "session" {print $7}' "$jar")" "$token" >>"$WORK/sessions.tsv"
done
COOKIE=$(head -1 "$WORK/sessions.tsv" | cut -f1)
if [[ $REPLIES == 1 ]]; then
    for id in $(curl -fsS -H "Cookie: $COOKIE" "$BASE/city/seoul" | grep -o 'data-post-id="[0-9]*" data-author' | grep -o '[0-9]\+'); do
        for person in 2 3 4 5 6; do
            IFS=$'\t' read -r cookie token < <(sed -n "${person}p" "$WORK/sessions.tsv")
            if (( person <= 4 )); then
                curl -fsS -o /dev/null -H "Cookie: $cookie" --data-urlencode "csrf_token=$token" \
                    --data-urlencode "body=Reply $person to $id: same here, the drizzle stopped at six" "$BASE/posts/$id/replies"
            else # 403 on their own post
                curl -sS -o /dev/null -H "Cookie: $cookie" --data-urlencode "csrf_token=$token" "$BASE/posts/$id/react"
            fi
        done
    done
fi
shown() { # what the first member's page shows: replies and bytes
    local page
    page=$(curl -fsS -H "Cookie: $COOKIE" "$BASE/city/seoul")
    echo "$(grep -o 'data-parent-id=' <<<"$page" | wc -l) replies shown, $(grep -c 'name="csrf_token"' <<<"$page") forms' tokens, $(wc -c <<<"$page") bytes"
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
