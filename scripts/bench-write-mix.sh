#!/usr/bin/env bash
# scripts/bench-write-mix.sh OUT — a mix of members' writes across two nodes (issue 63 #5).
#
# 32 members through two nodes on one PostgreSQL behind nginx (scripts/cluster.sh), each request
# one of: a post on the member's own board, an agreement with another member's post, a bookmark
# added or taken away, the list of notices opened (marking them read), a sign-in with a password
# (scripts/write-mix.lua). Two builds back to back, alternated ROUNDS times: BASE_BIN and BIN.
# Counted: wrk's requests a second and p99, answers that were not 2xx or 3xx, and the writes the
# database holds after each run (posts, agreements, bookmarks, sessions).
#
# Everything of the cluster runs on CPU 0 (nodes, PostgreSQL, nginx), wrk on CPU 1.
# Environment: BIN, BASE_BIN (release builds of `weatherboard`), ROUNDS (2), DURATION (10s),
# PG_PORT (55432), PORT (8080). Needs: wrk, nginx, postgresql, curl.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: BIN=… BASE_BIN=… $0 OUT}
BIN=$(realpath "${BIN:?a release build of this tree}")
BASE_BIN=$(realpath "${BASE_BIN:?a release build to compare with}")
ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-10s}
PORT=${PORT:-8080}
PG_PORT=${PG_PORT:-55432}
export PORT PG_PORT
DIR=/tmp/weatherboard-bench-write-mix
WORK=$(mktemp -d)
BASE="http://127.0.0.1:$PORT"
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
mkdir -p "$OUT"
trap 'scripts/cluster.sh stop "$DIR" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT

sql() { "$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U weatherboard -d weatherboard -tAc "$1"; }
writes() { sql "SELECT (SELECT count(*) FROM posts) + (SELECT count(*) FROM reactions) + (SELECT count(*) FROM bookmarks) + (SELECT count(*) FROM sessions)"; }

start() { # BIN
    scripts/cluster.sh stop "$DIR" >/dev/null 2>&1 || true
    BIN=$1 NODE_PREFIX="taskset -c ${CLUSTER_CPUS:-0}" \
        NODE_ARGS="--weather demo --seconds-between-posts 0 --posts-per-day 100000000 --sign-ups-per-hour 1000000 --sign-ins-per-minute 1000000 --reactions-per-hour 100000000" \
        scripts/cluster.sh start "$DIR" >/dev/null
    : >"$WORK/sessions.tsv"
    sql "SELECT slug FROM cities ORDER BY population DESC, id LIMIT 32" >"$WORK/slugs.txt"
    local person jar slug
    for person in $(seq 1 32); do
        jar="$WORK/person-$person.jar"
        rm -f "$jar"
        curl -fsS -o /dev/null -c "$jar" -b "$jar" -H "Sec-Fetch-Site: same-origin" --data-urlencode "username=mixer$person" \
            --data-urlencode "display_name=Mixer $person" --data-urlencode "password=benchpassword$person" "$BASE/signup"
        slug=$(sed -n "${person}p" "$WORK/slugs.txt")
        curl -fsS -o /dev/null -c "$jar" -b "$jar" -H "Sec-Fetch-Site: same-origin" --data-urlencode "body=First post of mixer $person" \
            -H "Sec-Fetch-Site: same-origin" "$BASE/city/$slug/posts"
        printf 'session=%s\tmixer%s\tbenchpassword%s\n' "$(awk '$6 == "session" {print $7}' "$jar")" "$person" "$person" >>"$WORK/sessions.tsv"
    done
    sql "SELECT p.id FROM posts p JOIN users u ON u.id = p.user_id WHERE u.username LIKE 'mixer%' ORDER BY p.id" >"$WORK/posts.txt"
}

run_wrk() { # NAME CONNECTIONS DURATION
    SESSIONS="$WORK/sessions.tsv" SLUGS="$WORK/slugs.txt" POSTS="$WORK/posts.txt" taskset -c 1 wrk -t1 -c"$2" -d"$3" --latency \
        -s scripts/write-mix.lua "$BASE" >"$OUT/$1.txt"
}

seconds_of() { local d=$1; [[ $d == *s ]] && echo "${d%s}" || echo "$d"; }

{
    echo "# bench-write-mix $(date -u +%FT%TZ) on $(uname -srm), $(nproc) CPUs"
    echo "# BIN=$BIN"
    echo "# BASE_BIN=$BASE_BIN"
    printf '%-6s %-5s %10s %10s %12s %10s %s\n' round build writes writes/s wrk-req/s non-2xx3xx "p99 (wrk)"
} | tee "$OUT/summary.txt"

for round in $(seq 1 "$ROUNDS"); do
    for build in base new; do
        [[ $build == base ]] && bin=$BASE_BIN || bin=$BIN
        start "$bin"
        run_wrk "warmup-$build-$round" 32 2s
        before=$(writes)
        run_wrk "$build-$round" 32 "$DURATION"
        written=$(( $(writes) - before ))
        rate=$(awk -v p="$written" -v s="$(seconds_of "$DURATION")" 'BEGIN { printf "%.0f", p / s }')
        bad=$(awk '/Non-2xx or 3xx/ {print $5}' "$OUT/$build-$round.txt"); bad=${bad:-0}
        printf '%-6s %-5s %10s %10s %12s %10s %s\n' "$round" "$build" "$written" "$rate" \
            "$(awk '/Requests\/sec/ {print $2}' "$OUT/$build-$round.txt")" "$bad" "$(awk '$1 == "99%" {print $2}' "$OUT/$build-$round.txt")" \
            | tee -a "$OUT/summary.txt"
    done
done
