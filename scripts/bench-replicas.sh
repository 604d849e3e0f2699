#!/usr/bin/env bash
# scripts/bench-replicas.sh OUT — reads from a streaming replica (issue 46 #4).
#
# Two nodes on one PostgreSQL with one streaming replica, behind nginx (scripts/cluster.sh with
# REPLICA=1). Real traffic as scripts/bench-pages.sh has it: city pages drawn Zipf over the
# 2,000 largest cities, gzip, 20 % signed in with 20 members who posted on the 50 largest boards,
# every city opened once before. Meanwhile 8 other members post, each then opening the board
# they posted on (through nginx: the other node half the time), and the script counts the posts
# that were on that next page.
#
# Reported: the read statements each node ran on the primary and on the replica during the run
# (their /metrics), the primary's share, and own posts seen / posted.
#
# Everything of the cluster runs on CPU 0 (nodes, both PostgreSQL servers, nginx), wrk and the
# posting members on CPU 1.
# Environment: BIN (a release build of `weatherboard`), DURATION (30s), CONNECTIONS (64),
# PG_PORT (55432; the replica on PG_PORT+1), PORT (8080), POSTS_PER_BOARD (20).
# Needs: wrk, nginx, postgresql, curl.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: BIN=… $0 OUT}
BIN=$(realpath "${BIN:?a release build of this tree}")
DURATION=${DURATION:-30s}
CONNECTIONS=${CONNECTIONS:-64}
PORT=${PORT:-8080}
PG_PORT=${PG_PORT:-55432}
export PORT PG_PORT
DIR=/tmp/weatherboard-bench-replicas
WORK=$(mktemp -d)
BASE="http://127.0.0.1:$PORT"
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
mkdir -p "$OUT"
trap 'cp "$DIR"/node-*.log "$OUT/" 2>/dev/null || true; scripts/cluster.sh stop "$DIR" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT


scripts/cluster.sh stop "$DIR" >/dev/null 2>&1 || true
BIN=$BIN REPLICA=1 NODE_PREFIX="taskset -c 0" \
    NODE_ARGS="--weather demo --seconds-between-posts 0 --posts-per-day 1000000 --sign-ups-per-hour 1000000 --weather-fresh-minutes 1 --weather-fetches-per-minute 100000000 --weather-cold-fetches-per-client 100000000 --weather-cold-fetches-per-hour 100000000" \
    scripts/cluster.sh start "$DIR" >/dev/null

sign_up() { # NAME JAR: a member through the form; prints the cookie header
    curl -fsS -o /dev/null -c "$2" -b "$2" -H "Sec-Fetch-Site: same-origin" --data-urlencode "username=$1" \
        --data-urlencode "display_name=$1" --data-urlencode "password=a long bench password for $1" "$BASE/signup"
    printf 'session=%s\n' "$(awk '$6 == "session" {print $7}' "$2")"
}
: >"$WORK/sessions.tsv"
for person in $(seq 1 20); do sign_up "reader$person" "$WORK/reader-$person.jar" >>"$WORK/sessions.tsv"; done
for person in $(seq 1 8); do sign_up "poster$person" "$WORK/poster-$person.jar" >"$WORK/poster-$person.tsv"; done
"$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U weatherboard -d weatherboard -tAc \
    "SELECT slug FROM cities ORDER BY population DESC, id LIMIT 2000" >"$WORK/slugs.txt"

# The readers' posts on the 50 largest boards; every city opened once.
person=0
for slug in $(head -50 "$WORK/slugs.txt"); do
    for _ in $(seq 1 "${POSTS_PER_BOARD:-20}"); do
        person=$(( person % 20 + 1 ))
        IFS=$'\t' read -r cookie < <(sed -n "${person}p" "$WORK/sessions.tsv")
        curl -fsS -o /dev/null -H "Cookie: $cookie" -H "Sec-Fetch-Site: same-origin" \
            --data-urlencode "body=What is it like in $slug right now? Reader $person asks" "$BASE/city/$slug/posts"
    done
done
while read -r slug; do printf 'url = "%s"\noutput = "/dev/null"\n' "$BASE/city/$slug"; done <"$WORK/slugs.txt" >"$WORK/every-city.curl"
curl -fsS -H "Accept-Encoding: gzip" -K "$WORK/every-city.curl"
sleep 2

reads() { # NODE_PORT SERVER: read statements the node ran on that server so far
    curl -fsS "http://127.0.0.1:$1/metrics" | awk -v s="server=\"$2\"" 'index($0, "weatherboard_db_read_statements_total{") == 1 && index($0, s) { print $NF }'
}
before=()
for node in 8091 8092; do before+=("$(reads $node primary)" "$(reads $node replica)"); done

# Members who post, then open the board they posted on: each post must be on that next page.
post_and_look() { # UNTIL (epoch seconds)
    local n=0 seen=0 member slug text
    while (( $(date +%s) < $1 )); do
        n=$(( n + 1 )); member=$(( n % 8 + 1 ))
        slug=$(sed -n "$(( n % 50 + 1 ))p" "$WORK/slugs.txt")
        text="Checking $n from poster $member on $slug"
        curl -fsS -o /dev/null -b "$WORK/poster-$member.jar" -c "$WORK/poster-$member.jar" -H "Sec-Fetch-Site: same-origin" \
            --data-urlencode "body=$text" "$BASE/city/$slug/posts"
        if curl -fsS --compressed -b "$WORK/poster-$member.jar" -c "$WORK/poster-$member.jar" -H "Sec-Fetch-Site: same-origin" \
            "$BASE/city/$slug" | grep -F "$text" >/dev/null; then seen=$(( seen + 1 )); fi
    done
    echo "$n $seen"
}
seconds=${DURATION%s}
( taskset -c 1 bash -c "$(declare -f post_and_look); WORK=$WORK BASE=$BASE post_and_look $(( $(date +%s) + seconds ))" >"$WORK/own-posts.txt" ) &
checker=$!
SLUGS="$WORK/slugs.txt" SESSIONS="$WORK/sessions.tsv" SIGNED_IN_PCT=20 taskset -c 1 \
    wrk -t1 -c"$CONNECTIONS" -d"$DURATION" --latency -s scripts/city-mix-zipf.lua "$BASE" >"$OUT/real-traffic.txt"
wait "$checker"

after=()
for node in 8091 8092; do after+=("$(reads $node primary)" "$(reads $node replica)"); done
primary=$(awk -v a="${after[0]}" -v b="${before[0]}" -v c="${after[2]}" -v d="${before[2]}" 'BEGIN { printf "%d", a - b + c - d }')
replica=$(awk -v a="${after[1]}" -v b="${before[1]}" -v c="${after[3]}" -v d="${before[3]}" 'BEGIN { printf "%d", a - b + c - d }')
read -r posted seen <"$WORK/own-posts.txt"
for node in 8091 8092; do curl -fsS "http://127.0.0.1:$node/metrics" | grep -E '^weatherboard_(replica_|db_read_statements)' >"$OUT/metrics-$node.txt"; done
{
    echo "date: $(date -u +%Y-%m-%dT%H:%MZ)  machine: $(nproc) cores, $(uname -r)  build: $(git rev-parse --short HEAD)"
    echo "real traffic (wrk -c$CONNECTIONS -d$DURATION, Zipf over 2,000 cities, 20 % signed in), two nodes, one replica:"
    grep -E "Requests/sec|99%" "$OUT/real-traffic.txt" | sed 's/^/  /'
    echo "read statements during the run: primary $primary, replica $replica"
    echo "primary's share of reads: $(awk -v p="$primary" -v r="$replica" 'BEGIN { printf "%.1f %%", (p + r) ? 100 * p / (p + r) : 0 }')"
    echo "own posts on the poster's next page: $seen of $posted"
} | tee "$OUT/summary.txt"
