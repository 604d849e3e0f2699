#!/usr/bin/env bash
# scripts/bench-storm.sh OUT_DIR — a hot board (issue 46 #1's target).
#
# PAGES (5,000) signed-in pages open on Seoul's board (Sources/LiveLoad, event streams with a
# member's session), and a reply every second for SECONDS (60) from another member under a post
# of that board. Every page does what live.js does with a reply event: after 0.3–1.5 s it fetches
# the reply — as a bystander sees it (`/shared/cities/{city}/replies/{id}?as=member`, what
# live.js asks now) or, with FETCH=replies, the replies after the one before it
# (`/posts/{id}/replies?after=`, what it asked before) — over 128 keep-alive connections.
# Reported: how many pages fetched every reply, the time from each reply's acknowledgement to
# its fetch on each page (p50, p99, max), and the server's CPU over the storm (its /proc stat).
# The server (SQLite, BIN: a release build) runs on CPU 0, LiveLoad on CPU 1.
# Needs: curl, taskset, sqlite3; descriptors: the limit is raised to 20,000 (ulimit -n).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: BIN=… $0 OUT_DIR}
PAGES=${PAGES:-5000}
SECONDS_OF_STORM=${SECONDS_OF_STORM:-60}
FETCH=${FETCH:-shared}
PORT=${PORT:-8080}
BASE="http://127.0.0.1:$PORT"
BIN=$(realpath "${BIN:?a release build of weatherboard}")
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
ulimit -n 20000
LIVELOAD=$(dirname "$BIN")/LiveLoad
[[ -x $LIVELOAD ]] || { echo "missing $LIVELOAD (swift build -c release --product LiveLoad)" >&2; exit 1; }

WORK=$(mktemp -d /tmp/bench-storm.XXXXXX)
SERVER_PID=""
trap '[[ -z $SERVER_PID ]] || { kill -TERM "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; }; rm -rf "$WORK"' EXIT
SEED_DB="$WORK/storm.sqlite"
source scripts/seed-board.sh
taskset -c 0 "$BIN" serve --port "$PORT" --db "$SEED_DB" --weather demo --log-level warning --seconds-between-posts 0 \
    --posts-per-day 100000 --sign-ups-per-hour 1000 >"$OUT/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 300); do curl -fs "$BASE/healthz" >/dev/null 2>&1 && break; sleep 0.2; done
seed_members 1
seed_conversation
READER=$(sed -n 19p "$WORK/sessions.tsv" | cut -f1)
REPLIER=$(sed -n 20p "$WORK/sessions.tsv")
POST=$(curl -fsS -H "Cookie: $READER" "$BASE/city/seoul" | grep -o 'data-post-id="[0-9]*" data-author' | head -1 | grep -o '[0-9]\+')
[[ -n $POST ]] || { echo "no post to reply to" >&2; exit 1; }
[[ $FETCH == shared ]] && MODE=() || MODE=(--fetch replies)
{
    echo "# bench-storm $(date -u +%FT%TZ) on $(uname -srm), $(nproc) CPUs, build $(git rev-parse --short HEAD)"
    echo "# $PAGES pages on /city/seoul/live, a reply a second for $SECONDS_OF_STORM s under post $POST, fetching: $FETCH"
    taskset -c 1 "$LIVELOAD" --port "$PORT" --streams "$PAGES" --path /city/seoul/live --stream-cookie "$READER" \
        --storm "$SECONDS_OF_STORM" --cookie "$REPLIER" --post-path "/posts/$POST/replies" \
        --server-pid "$SERVER_PID" "${MODE[@]}"
} | tee "$OUT/summary-$FETCH.txt"
