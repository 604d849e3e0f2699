#!/usr/bin/env bash
# scripts/bench-replies.sh OUT_DIR
#
# What catching up with a new reply costs each open page (issue 46 #1), server on CPU 0, wrk on
# CPU 1. Seoul's board is seeded through the forms (20 members, one post each, 3 replies under
# every post); then, for the newest post, a page that shows the first two replies asks for what
# came after them, with the headers a browser's fetch sends (Sec-Fetch-Site: same-origin):
#   1. as live.js asked before: the post's whole page after the second reply (`/posts/{id}?after=`);
#   2. the replies fragment (`/posts/{id}/replies?after=`), rendered once for all readers with
#      no part in the reply (what live.js asks for a page whose forms carry a token, a
#      moderator's, or the reply's author's);
#   3. as it asks now: the newest reply alone as a bystander sees it
#      (`/shared/cities/{city}/replies/{id}`), kept until the board changes, no session read;
# each as a member with no part in it (the case of nearly every open page) and as a guest, with
# wrk -t1 -c64 for DURATION (8s). Results: OUT_DIR/*.txt and a summary on standard output.
# Needs: wrk, curl, taskset. BIN (a release build of weatherboard) is built when not given.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: $0 OUT_DIR}
DURATION=${DURATION:-8s}
PORT=${PORT:-8080}
BASE="http://127.0.0.1:$PORT"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
for tool in wrk curl taskset; do command -v $tool >/dev/null || { echo "missing $tool (apt-get install -y wrk curl)" >&2; exit 1; }; done
if [[ -z ${BIN:-} ]]; then swift build -c release --product weatherboard >/dev/null; BIN=.build/release/weatherboard; fi

WORK=$(mktemp -d /tmp/bench-replies.XXXXXX)
SERVER_PID=""
trap '[[ -z $SERVER_PID ]] || { kill -TERM "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; }; rm -rf "$WORK"' EXIT
SEED_DB="$WORK/replies.sqlite"
source scripts/seed-board.sh
taskset -c 0 "$BIN" serve --port "$PORT" --db "$SEED_DB" --weather demo --log-level warning --seconds-between-posts 0 --sign-ups-per-hour 1000 \
    >"$OUT/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 300); do curl -fs "$BASE/healthz" >/dev/null 2>&1 && break; sleep 0.2; done
seed_members 1
seed_conversation
# A reader with no part in the conversation (member 20 wrote the newest post; 19 is a bystander).
READER=$(sed -n 19p "$WORK/sessions.tsv" | cut -f1)
POST=$(curl -fsS -H "Cookie: $READER" "$BASE/city/seoul" | grep -o 'data-post-id="[0-9]*" data-author' | head -1 | grep -o '[0-9]\+')
SECOND=$(curl -fsS -H "Cookie: $READER" "$BASE/posts/$POST" | grep -o 'data-post-id="[0-9]*" data-parent-id' | sed -n 2p | grep -o '[0-9]\+')
[[ -n $POST && -n $SECOND ]] || { echo "no conversation to read" >&2; exit 1; }
rate() { awk '/Requests\/sec/ {print $2}' "$1"; }
p99() { awk '/ 99%/ {print $2}' "$1"; }
run() { # NAME COOKIE PATH
    local headers=(-H "Sec-Fetch-Site: same-origin" -H "Sec-Fetch-Mode: cors" -H "Accept: text/html" -H "Accept-Encoding: gzip")
    [[ -z $2 ]] || headers+=(-H "Cookie: $2")
    taskset -c 1 wrk -t1 -c64 -d2s "${headers[@]}" "$BASE$3" >/dev/null # warm-up
    taskset -c 1 wrk -t1 -c64 -d"$DURATION" --latency "${headers[@]}" "$BASE$3" >"$OUT/$1.txt"
    printf '%-28s %10s req/s  p99 %s\n' "$1" "$(rate "$OUT/$1.txt")" "$(p99 "$OUT/$1.txt")"
}
echo "post $POST, replies after $SECOND; $(date -u +%FT%TZ), $(nproc) cores"
run member-post-page "$READER" "/posts/$POST?after=$SECOND"
run member-replies-fragment "$READER" "/posts/$POST/replies?after=$SECOND"
run guest-post-page "" "/posts/$POST?after=$SECOND"
run guest-replies-fragment "" "/posts/$POST/replies?after=$SECOND"
CITY=$(sqlite3 "$SEED_DB" "SELECT id FROM cities WHERE slug = 'seoul'")
NEWEST=$(sqlite3 "$SEED_DB" "SELECT max(id) FROM posts WHERE parent_id = $POST")
run member-shared-reply "$READER" "/shared/cities/$CITY/replies/$NEWEST?as=member"
run guest-shared-reply "" "/shared/cities/$CITY/replies/$NEWEST"
