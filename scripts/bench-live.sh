#!/usr/bin/env bash
# scripts/bench-live.sh OUT_DIR
#
# Live boards under load (issue 23's numbers), server pinned to CPU 0, clients to CPU 1:
#   1. the anonymous city page's req/s (wrk -t1 -c64, DURATION) with no streams open;
#   2. STREAMS (10,000) event streams opened on Seoul's board from many loopback addresses
#      (sources/LiveLoad, 50 per address): the server's resident memory before and after, and
#      the same city page's req/s while they stay open and idle;
#   3. STREAMS streams again, then one post through the form: how long its event took to reach
#      every stream, from the POST's answer to the event's bytes on each socket (p50/p99/max).
#   CLUSTER=1: 4. two nodes on PostgreSQL (scripts/cluster.sh): CLUSTER_STREAMS (1,000) streams on
#      node B, the post through node A.
# Environment: STREAMS=10000 CLUSTER_STREAMS=1000 DURATION=8s PORT=8080 CLUSTER=1 ONLY_CLUSTER=1.
# Needs: wrk, curl, taskset (and postgresql, nginx for CLUSTER=1); descriptors: each process
# raises its own limit to 20,000 (ulimit -n).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: $0 OUT_DIR}
STREAMS=${STREAMS:-10000}
CLUSTER_STREAMS=${CLUSTER_STREAMS:-1000}
DURATION=${DURATION:-8s}
PORT=${PORT:-8080}
BASE="http://127.0.0.1:$PORT"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
for tool in wrk curl taskset; do command -v $tool >/dev/null || { echo "missing $tool (apt-get install -y wrk curl)" >&2; exit 1; }; done
ulimit -n 20000

WORK=$(mktemp -d /tmp/bench-live.XXXXXX)
SERVER_PID=""
CLUSTER_DIR=""
stop_server() {
    if [[ -n $SERVER_PID ]]; then kill -TERM "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
    SERVER_PID=""
}
trap 'stop_server; [[ -z $CLUSTER_DIR ]] || scripts/cluster.sh stop "$CLUSTER_DIR"; rm -rf "$WORK"' EXIT
wait_healthy() { for _ in $(seq 1 300); do curl -fs "$1/healthz" >/dev/null 2>&1 && return 0; sleep 0.2; done; echo "$1 did not come up" >&2; return 1; }
rss_kib() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
# Signs up a person on BASE_URL; prints the session cookie for posting on Seoul's board.
member() { # BASE_URL NAME
    local jar="$WORK/$2.jar"
    curl -fsS -o /dev/null -c "$jar" -b "$jar" -H "Sec-Fetch-Site: same-origin" --data-urlencode "username=$2" \
        --data-urlencode "display_name=Bench $2" --data-urlencode "password=a long bench password" "$1/signup"
    printf 'session=%s\n' "$(awk '$6 == "session" {print $7}' "$jar")"
}
rate() { awk '/Requests\/sec/ {print $2}' "$1"; }

swift build -c release --product weatherboard >/dev/null
swift build -c release --product LiveLoad >/dev/null
BIN=.build/release/weatherboard
LOAD=.build/release/LiveLoad
STREAM_ARGS=(--max-streams 20000 --max-streams-per-address 64 --max-connections 20000)

if [[ -z ${ONLY_CLUSTER:-} ]]; then
taskset -c 0 "$BIN" serve --port "$PORT" --db "$WORK/live.sqlite" --weather demo --log-level warning \
    "${STREAM_ARGS[@]}" >"$OUT/server.log" 2>&1 &
SERVER_PID=$!
wait_healthy "$BASE"
COOKIE=$(member "$BASE" livebench)
taskset -c 1 wrk -t1 -c64 -d2s "$BASE/city/seoul" >/dev/null # warm-up

# 1. The city page alone.
taskset -c 1 wrk -t1 -c64 -d"$DURATION" --latency "$BASE/city/seoul" >"$OUT/page-without-streams.txt"
# 2. The same page beside idle streams; memory before and after opening them.
before=$(rss_kib "$SERVER_PID")
taskset -c 1 "$LOAD" --port "$PORT" --streams "$STREAMS" --hold 600 >"$OUT/idle-streams.txt" 2>&1 &
LOAD_PID=$!
for _ in $(seq 1 1200); do grep -q '^open' "$OUT/idle-streams.txt" && break; kill -0 $LOAD_PID || { cat "$OUT/idle-streams.txt" >&2; exit 1; }; sleep 0.1; done
sleep 1
after=$(rss_kib "$SERVER_PID")
taskset -c 1 wrk -t1 -c64 -d"$DURATION" --latency "$BASE/city/seoul" >"$OUT/page-with-streams.txt"
kill $LOAD_PID; wait $LOAD_PID 2>/dev/null || true
# 3. One post to every stream.
taskset -c 1 "$LOAD" --port "$PORT" --streams "$STREAMS" --cookie "$COOKIE" >"$OUT/one-post.txt" 2>&1
stop_server

{
    echo "date: $(date -u +%F) machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
    echo "server RSS: $before KiB before, $after KiB with $STREAMS streams open: $(( (after - before) / 1024 )) MiB more, $(( (after - before) * 1024 / STREAMS )) bytes a stream"
    echo "city page req/s: $(rate "$OUT/page-without-streams.txt") without streams, $(rate "$OUT/page-with-streams.txt") with $STREAMS idle streams"
    echo "one node: $(grep '^event' "$OUT/one-post.txt")"
} | tee "$OUT/results.txt"
fi

if [[ -n ${CLUSTER:-} ]]; then
    chmod 755 "$WORK" # PostgreSQL runs as its own user and must reach its folder in here
    CLUSTER_DIR="$WORK/cluster"
    BIN="$BIN" NODE_PORTS="8091 8092" NODE_ARGS="--weather demo --log-level warning ${STREAM_ARGS[*]}" NODE_PREFIX="taskset -c 0" \
        scripts/cluster.sh start "$CLUSTER_DIR" >"$OUT/cluster.log"
    COOKIE=$(member "http://127.0.0.1:8091" clusterbench)
    taskset -c 1 "$LOAD" --port 8092 --streams "$CLUSTER_STREAMS" --post-port 8091 --cookie "$COOKIE" >"$OUT/two-nodes.txt" 2>&1
    echo "two nodes (post on A, streams on B): $(grep '^event' "$OUT/two-nodes.txt")" | tee -a "$OUT/results.txt"
fi
