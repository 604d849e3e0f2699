#!/bin/bash
# scripts/bench-real-ab.sh — builds side by side under real traffic with full boards, one database.
#
#   scripts/bench-real-ab.sh ROUNDS "LABEL=BIN[:ENV=VALUE]"...
#   e.g. scripts/bench-real-ab.sh 2 "before=/tmp/wb-old" "after=.build/release/weatherboard"
#
# Seeds once, as scripts/bench-pages.sh does for its real traffic (20 members with 10 posts on
# Seoul's board, then 20 posts by them on each of the 50 largest boards), then, ROUNDS times,
# each build in turn on a fresh copy of that database: every one of the 2,000 largest cities
# opened once with gzip, a 2 s warm-up, then `wrk -t1 -c64 -d8s` with scripts/city-mix-zipf.lua
# (Zipf over the 2,000, gzip, 20 % signed in, forecasts fresh for 1 minute). Server on CPU 0,
# wrk on CPU 1. Prints "round N LABEL req/s p99 boards_bytes=…" (what BoardCache held at the end)
# and, where perf is installed, the server's CPU time per request (kernel included).
# Alternating builds in one run is what makes two of them comparable on a machine whose speed
# swings by a quarter between runs. TRACE=1 traces the script. Needs wrk, curl, sqlite3, taskset.
# then alternates the builds, each on a fresh copy of it, every city opened once, wrk 8 s.
set -euo pipefail
[[ -n ${TRACE:-} ]] && set -x
cd "$(dirname "$0")/.."
ROUNDS=$1; shift
export WORK=$(mktemp -d /tmp/bench-real-ab.XXXXXX) BASE=http://127.0.0.1:8080
export SLUGS=$WORK/slugs.txt SESSIONS=$WORK/sessions.tsv SIGNED_IN_PCT=20
SEED_DB=$WORK/seed.sqlite; export SEED_DB
ARGS=(serve --port 8080 --weather demo --log-level warning --seconds-between-posts 0 --posts-per-day 100000000 --sign-ups-per-hour 1000000
      --weather-fresh-minutes 1 --weather-fetches-per-minute 100000000 --weather-cold-fetches-per-client 100000000 --weather-cold-fetches-per-hour 100000000)
PID=""
trap '[[ -z $PID ]] || kill $PID 2>/dev/null; rm -rf "$WORK"' EXIT
start() { # BIN DB ENV
    taskset -c 0 env ${3:-X=1} "$1" "${ARGS[@]}" --db "$2" >"$WORK/server.log" 2>&1 & PID=$!
    for _ in $(seq 1 300); do curl -fs $BASE/healthz >/dev/null 2>&1 && return 0; sleep 0.2; done; echo "no server"; exit 1
}
stop() { kill -TERM $PID; wait $PID 2>/dev/null || true; PID=""; }
FIRST=${1#*=}; FIRST=${FIRST%%:*}; export BIN=$FIRST
start "$FIRST" "$SEED_DB"
source scripts/seed-board.sh
seed_members 10 >/dev/null
sqlite3 "$SEED_DB" "SELECT slug FROM cities ORDER BY population DESC, id LIMIT 2000" >"$WORK/slugs.txt"
seed_largest_boards 20
while read -r slug; do printf 'url = "%s"\noutput = "/dev/null"\n' "$BASE/city/$slug"; done <"$WORK/slugs.txt" >"$WORK/every-city.curl"
stop
for round in $(seq 1 "$ROUNDS"); do
    for spec in "$@"; do
        label=${spec%%=*}; rest=${spec#*=}; bin=${rest%%:*}; envs=""; [[ $rest == *:* ]] && envs=${rest#*:}
        rm -f $WORK/run.sqlite*; sqlite3 "$SEED_DB" ".backup $WORK/run.sqlite"
        start "$bin" "$WORK/run.sqlite" "$envs"
        curl -fsS -H "Accept-Encoding: gzip" -K "$WORK/every-city.curl"
        taskset -c 1 wrk -t1 -c64 -d2s -H "Sec-Fetch-Site: same-origin" -s scripts/city-mix-zipf.lua $BASE >/dev/null 2>&1 || true
        # The server's own CPU time over the run, kernel included (its sends), per request: it
        # shows whether a change made requests cheaper when the rate is held back by something else.
        if command -v perf >/dev/null; then perf stat -x, -e task-clock -p $PID -o $WORK/stat.csv -- sleep 8 & STAT=$!; fi
        out=$(SLUGS=$WORK/slugs.txt SESSIONS=$WORK/sessions.tsv SIGNED_IN_PCT=20 taskset -c 1 wrk -t1 -c64 -d8s --latency -H "Sec-Fetch-Site: same-origin" -s scripts/city-mix-zipf.lua $BASE 2>&1)
        rate=$(awk '/Requests\/sec/ {print $2}' <<<"$out"); p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
        per=""
        if [[ -n ${STAT:-} ]]; then
            wait $STAT || true
            requests=$(awk '/requests in/ {print $1}' <<<"$out")
            per=$(awk -F, -v n="$requests" '$3 ~ /^task-clock/ {ms=$1} END {if (n > 0) printf " cpu_us/req=%.1f", ms * 1000 / n}' $WORK/stat.csv)
        fi
        boards=$(curl -fsS $BASE/metrics 2>/dev/null | grep 'cache_bytes{cache="boards"}' | awk '{print $2}' || true)
        echo "round $round $label $rate $p99 boards_bytes=$boards$per"
        stop
    done
done
