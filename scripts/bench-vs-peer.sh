#!/usr/bin/env bash
# Measures our bare HTTPServer (HTTPServerBench) and the Hummingbird peer back to back, with the
# peer's own bench.sh, each server pinned to CPU 0 and wrk to CPU 1.
#   scripts/bench-vs-peer.sh OUT_DIR [ROUNDS]       (default SCENARIOS=plaintext, 1 round)
# Needs: wrk, a release build of ours (swift build -c release --product HTTPServerBench) and of
# the peer (PEER=../shared/peers/hummingbird-board, built in a writable copy: PEER_BUILD).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: $0 OUT_DIR [ROUNDS]}
ROUNDS=${2:-1}
PEER=${PEER:-../shared/peers/hummingbird-board}
PEER_BUILD=${PEER_BUILD:-$PEER}
export SCENARIOS=${SCENARIOS:-plaintext}
mkdir -p "$OUT"
ours() {
    taskset -c 0 .build/release/HTTPServerBench --port 8080 >"$OUT/ours-server.log" 2>&1 &
    local pid=$!
    for _ in $(seq 1 50); do curl -fs http://127.0.0.1:8080/healthz >/dev/null 2>&1 && break; sleep 0.1; done
    SERVER_PID=$pid "$PEER/bench.sh" http://127.0.0.1:8080 "$1"
    kill -TERM $pid; wait $pid || true
}
peer() {
    local db; db=$(mktemp -d)/board.sqlite
    "$PEER_BUILD/.build/release/hb-board" seed --db "$db" >/dev/null
    taskset -c 0 "$PEER_BUILD/.build/release/hb-board" --port 8081 --db "$db" --templates "$PEER/Templates" >"$OUT/peer-server.log" 2>&1 &
    local pid=$!
    for _ in $(seq 1 50); do curl -fs http://127.0.0.1:8081/healthz >/dev/null 2>&1 && break; sleep 0.1; done
    SERVER_PID=$pid "$PEER/bench.sh" http://127.0.0.1:8081 "$1"
    kill -TERM $pid; wait $pid || true
    rm -rf "$(dirname "$db")"
}
for round in $(seq 1 "$ROUNDS"); do
    peer "$OUT/peer-$round.md"
    ours "$OUT/ours-$round.md"
done
for f in "$OUT"/*-[0-9]*.md; do
    echo "== $f"; sed -n '/## Median/,/Server peak/p' "$f"
done
