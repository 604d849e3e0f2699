#!/usr/bin/env bash
# scripts/bench-writes.sh OUT — writes across nodes (issue 46 #3).
#
# 32 members post at once, each on a city board of their own, through two nodes on one
# PostgreSQL behind nginx (scripts/cluster.sh: fsync and synchronous commit as PostgreSQL ships
# them), for two builds back to back, alternated ROUNDS times: BASE_BIN (every write took the
# cluster's one lock) and BIN (writes lock the subjects their checks count). Posts per second
# are the posts the database holds after each run over its seconds (refusals do not count).
#
# Then the guarantees, counted on BIN: with a daily limit of 20 posts, the same 32 members post
# from two connections each until refused; every member must hold exactly 20 posts.
#
# Everything of the cluster runs on CPU 0 (nodes, PostgreSQL, nginx), wrk on CPU 1.
# Environment: BIN, BASE_BIN (release builds of `weatherboard`), ROUNDS (2), DURATION (10s),
# PG_PORT (55432), PORT (8080).
# Needs: wrk, nginx, postgresql, curl (scripts/cluster.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: BIN=… BASE_BIN=… $0 OUT}
BIN=$(realpath "${BIN:?a release build of this tree}")
BASE_BIN=$(realpath "${BASE_BIN:?a release build with the cluster-wide write lock}")
ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-10s}
PORT=${PORT:-8080}
PG_PORT=${PG_PORT:-55432}
export PORT PG_PORT
DIR=/tmp/weatherboard-bench-writes
WORK=$(mktemp -d)
BASE="http://127.0.0.1:$PORT"
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
mkdir -p "$OUT"
trap 'scripts/cluster.sh stop "$DIR" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT

sql() { "$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U weatherboard -d weatherboard -tAc "$1"; }

start() { # BIN DAILY_LIMIT
    scripts/cluster.sh stop "$DIR" >/dev/null 2>&1 || true
    BIN=$1 NODE_PREFIX="taskset -c ${CLUSTER_CPUS:-0}" \
        NODE_ARGS="--weather demo --seconds-between-posts 0 --posts-per-day $2 --sign-ups-per-hour 1000000 --sign-ins-per-minute 1000000" \
        scripts/cluster.sh start "$DIR" >/dev/null
    # 32 members through the sign-up form, and 32 cities (the largest), one each.
    : >"$WORK/sessions.tsv"
    local person jar
    for person in $(seq 1 32); do
        jar="$WORK/person-$person.jar"
        rm -f "$jar"
        curl -fsS -o /dev/null -c "$jar" -b "$jar" -H "Sec-Fetch-Site: same-origin" --data-urlencode "username=writer$person" \
            --data-urlencode "display_name=Writer $person" --data-urlencode "password=a long bench password $person" "$BASE/signup"
        printf 'session=%s\n' "$(awk '$6 == "session" {print $7}' "$jar")" >>"$WORK/sessions.tsv"
    done
    sql "SELECT slug FROM cities ORDER BY population DESC, id LIMIT 32" >"$WORK/slugs.txt"
}

run_wrk() { # NAME CONNECTIONS DURATION
    SESSIONS="$WORK/sessions.tsv" SLUGS="$WORK/slugs.txt" taskset -c 1 wrk -t1 -c"$2" -d"$3" --latency \
        -s scripts/post-many-cities.lua "$BASE" >"$OUT/$1.txt"
}

seconds_of() { local d=$1; [[ $d == *s ]] && echo "${d%s}" || echo "$d"; }

{
    echo "# bench-writes $(date -u +%FT%TZ) on $(uname -srm), $(nproc) CPUs"
    echo "# BIN=$BIN"
    echo "# BASE_BIN=$BASE_BIN"
    printf '%-6s %-5s %10s %10s %12s %s\n' round build posts posts/s wrk-req/s "p99 (wrk)"
} | tee "$OUT/summary.txt"

for round in $(seq 1 "$ROUNDS"); do
    for build in base new; do
        [[ $build == base ]] && bin=$BASE_BIN || bin=$BIN
        start "$bin" 100000000
        run_wrk "warmup-$build-$round" 32 2s
        before=$(sql "SELECT count(*) FROM posts")
        run_wrk "$build-$round" 32 "$DURATION"
        posts=$(( $(sql "SELECT count(*) FROM posts") - before ))
        rate=$(awk -v p="$posts" -v s="$(seconds_of "$DURATION")" 'BEGIN { printf "%.0f", p / s }')
        printf '%-6s %-5s %10s %10s %12s %s\n' "$round" "$build" "$posts" "$rate" \
            "$(awk '/Requests\/sec/ {print $2}' "$OUT/$build-$round.txt")" "$(awk '$1 == "99%" {print $2}' "$OUT/$build-$round.txt")" \
            | tee -a "$OUT/summary.txt"
    done
done

# The guarantees under the same load: a daily limit of 20, two connections a member.
start "$BIN" 20
run_wrk guarantees 64 5s
read -r members most least total < <(sql "SELECT count(*), max(n), min(n), sum(n) FROM (SELECT count(*) AS n FROM posts GROUP BY user_id) t" | tr '|' ' ')
echo "daily limit 20: $members members hold $total posts, at most $most and at least $least each" | tee -a "$OUT/summary.txt"
[[ $most == 20 && $least == 20 ]] || { echo "a member holds other than 20 posts: a check was passed twice" | tee -a "$OUT/summary.txt"; exit 1; }
