#!/usr/bin/env bash
# Measures what one photo upload costs the server: the time from request to answer, the
# process's peak resident memory before and after (VmHWM), and the bytes kept for the photo.
#   scripts/measure-photo-upload.sh PHOTO [PHOTO...]     (BIN: the server binary, default the release build)
# Each photo is posted by a fresh member on Seoul's board of a server on a temporary SQLite database.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.build/release/weatherboard}
DIR=$(mktemp -d)
PORT=${PORT:-18091}
trap 'kill "$PID" 2>/dev/null || true; rm -rf "$DIR"' EXIT
"$BIN" --port "$PORT" --db "$DIR/site.sqlite" --weather demo --seconds-between-posts 0 --log-level warning &
PID=$!
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
hwm() { awk '/VmHWM/ { print $2 }' "/proc/$PID/status"; }
n=0
for photo in "$@"; do
    n=$((n + 1))
    jar="$DIR/cookies-$n"
    curl -fs -c "$jar" -b "$jar" -H 'Sec-Fetch-Site: same-origin' -o /dev/null \
        --data-urlencode "username=measurer$n" --data-urlencode "display_name=Measurer" \
        --data-urlencode "password=correct horse battery" "http://127.0.0.1:$PORT/signup"
    before=$(hwm)
    result=$(curl -s -b "$jar" -H 'Sec-Fetch-Site: same-origin' -o /dev/null -w '%{http_code} %{time_total}' \
        -F "body=Measured sky $n" -F "photo=@$photo" "http://127.0.0.1:$PORT/city/seoul/posts")
    after=$(hwm)
    stored=$(sqlite3 "$DIR/site.sqlite" "SELECT width || 'x' || height, length(large_webp), length(small_webp), length(jpeg), bytes FROM photos ORDER BY created_at DESC LIMIT 1" 2>/dev/null || true)
    echo "$(basename "$photo") ($(stat -c %s "$photo") bytes): HTTP ${result% *} in ${result#* } s; peak RSS ${before} kB -> ${after} kB; stored ${stored//|/ }"
done
