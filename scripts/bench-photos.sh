#!/usr/bin/env bash
# scripts/bench-photos.sh OUT_DIR
#
# What photos cost (issue 44), in one run on this machine: server on CPU 0, `wrk -t1` on CPU 1.
#   1. A city page whose board holds 20 posts each with a photo, against the same board's city
#      page with the same 20 posts without photos (another city): the HTML's bytes, plain and
#      gzip, and guests' and a signed-in member's req/s (gzip), each in the same run.
#   2. One photo (the 1600-px WebP) from the node's warm memory, against nginx (one worker,
#      `sendfile on`, `open_file_cache`) serving the same bytes from a file.
#   3. Under callgrind with `--page-caches off` (every page rendered in full, the cost a kept
#      page hides): instructions per page, both boards, a guest and the member (SKIP_CALLGRIND=1
#      leaves it out; needs valgrind).
# Release build, a fresh SQLite database, demo weather; posts and photos go through the forms.
# Environment: BIN (default .build/release/weatherboard), DURATION=8s WARMUP=2s REPS=3 CONNS=64, PORT=8090,
# CALLGRIND_REQUESTS=50.
# Needs: wrk, curl, taskset, nginx, python3 with Pillow (the photos are made by the test's fixture script).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: $0 OUT_DIR}
BIN=${BIN:-.build/release/weatherboard}
DURATION=${DURATION:-8s}
WARMUP=${WARMUP:-2s}
REPS=${REPS:-3}
CONNS=${CONNS:-64}
PORT=${PORT:-8090}
NGINX_PORT=$((PORT + 1))
BASE="http://127.0.0.1:$PORT"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WORK=$(mktemp -d /tmp/bench-photos.XXXXXX)
SERVER_PID=""
trap '[[ -z $SERVER_PID ]] || kill "$SERVER_PID" 2>/dev/null; [[ ! -f $WORK/nginx/nginx.pid ]] || nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" -s stop 2>/dev/null; rm -rf "$WORK"' EXIT

median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# measure NAME URL [wrk args...]: warm-up, then REPS runs; prints the median req/s.
measure() {
    local name=$1 url=$2; shift 2
    taskset -c 1 wrk -t1 -c"$CONNS" -d"$WARMUP" "$@" "$url" >/dev/null
    local rates=()
    for rep in $(seq 1 "$REPS"); do
        taskset -c 1 wrk -t1 -c"$CONNS" -d"$DURATION" --latency "$@" "$url" >"$OUT/$name-$rep.txt"
        rates+=("$(awk '/Requests\/sec/ {print $2}' "$OUT/$name-$rep.txt")")
    done
    echo "$(median "${rates[@]}")"
}

python3 Tests/WeatherboardTests/Fixtures/photos/make-photos.py "$WORK/photos" >/dev/null
taskset -c 0 "$BIN" --port "$PORT" --db "$WORK/site.sqlite" --weather demo --seconds-between-posts 0 --posts-per-day 1000 \
    --photos-per-day 1000 --log-level warning >"$OUT/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 300); do curl -fs "$BASE/healthz" >/dev/null && break; sleep 0.1; done

# A member with standing posts 20 photos on Busan's board and the same 20 texts on Incheon's.
jar="$WORK/cookies"
curl -fs -c "$jar" -b "$jar" -H 'Sec-Fetch-Site: same-origin' -o /dev/null --data-urlencode username=photographer \
    --data-urlencode display_name=Photographer --data-urlencode "password=correct horse battery" "$BASE/signup"
sqlite3 "$WORK/site.sqlite" "UPDATE users SET level = 1, level_set = 1 WHERE username = 'photographer'"
pictures=(photo.webp other.jpg text.png gps-rotated.jpg removed.jpg)
for i in $(seq 1 20); do
    picture="$WORK/photos/${pictures[$((i % 5))]}"
    # Each photo its own picture: the fixture turned by a few degrees' worth of a different crop.
    python3 -c "from PIL import Image; im = Image.open('$picture').convert('RGB'); w, h = im.size; im.crop(($i, $i, w - $i, h - $i)).save('$WORK/p$i.jpg', quality=90)"
    curl -fs -b "$jar" -H 'Sec-Fetch-Site: same-origin' -o /dev/null -F "body=Sky over the harbour, number $i" \
        -F "photo_alt=The harbour, picture $i" -F "photo=@$WORK/p$i.jpg" "$BASE/city/busan/posts"
    curl -fs -b "$jar" -H 'Sec-Fetch-Site: same-origin' -o /dev/null --data-urlencode "body=Sky over the harbour: number $i" "$BASE/city/incheon/posts"
done
photos=$(sqlite3 "$WORK/site.sqlite" "SELECT count(*) FROM photos")
[[ $photos == 20 ]] || { echo "expected 20 photos, have $photos" >&2; exit 1; }
session=$(awk '$6 == "session" { print $7 }' "$jar")

{
    echo "# scripts/bench-photos.sh, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, $(git rev-parse --short HEAD)"
    for city in busan incheon; do
        plain=$(curl -fs -H 'Sec-Fetch-Site: none' "$BASE/city/$city" | wc -c)
        gzipped=$(curl -fs -H 'Sec-Fetch-Site: none' -H 'Accept-Encoding: gzip' "$BASE/city/$city" | wc -c)
        echo "bytes $city: $plain plain, $gzipped gzip"
    done
    for city in busan incheon; do
        echo "guest $city req/s: $(measure "guest-$city" "$BASE/city/$city" -H 'Accept-Encoding: gzip' -H 'Sec-Fetch-Site: none')"
        echo "member $city req/s: $(measure "member-$city" "$BASE/city/$city" -H 'Accept-Encoding: gzip' -H "Cookie: session=$session" -H 'Sec-Fetch-Site: same-origin')"
    done
} | tee "$OUT/results.txt"

# One photo from the node's memory, and the same bytes from nginx.
hash=$(sqlite3 "$WORK/site.sqlite" "SELECT hash FROM photos ORDER BY created_at LIMIT 1")
mkdir -p "$WORK/nginx/logs" "$WORK/nginx/root/photos"
curl -fs "$BASE/photos/$hash.webp" -o "$WORK/nginx/root/photos/$hash.webp"
cat >"$WORK/nginx/nginx.conf" <<CONF
daemon on;
worker_processes 1;
error_log $WORK/nginx/logs/error.log warn;
pid $WORK/nginx/nginx.pid;
events { worker_connections 4096; }
http {
    access_log off;
    sendfile on;
    open_file_cache max=1000 inactive=60s;
    types { image/webp webp; }
    server {
        listen 127.0.0.1:$NGINX_PORT;
        root $WORK/nginx/root;
        location /photos/ { add_header Cache-Control "public, max-age=31536000, immutable"; }
    }
}
CONF
taskset -c 0 nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf"
{
    echo "photo $(stat -c %s "$WORK/nginx/root/photos/$hash.webp") bytes"
    echo "ours photo req/s: $(measure ours-photo "$BASE/photos/$hash.webp")"
    echo "nginx photo req/s: $(measure nginx-photo "http://127.0.0.1:$NGINX_PORT/photos/$hash.webp")"
} | tee -a "$OUT/results.txt"

# Instructions per page with every page rendered in full.
[[ -n ${SKIP_CALLGRIND:-} ]] && exit 0
kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true
cp "$BIN" "$WORK/weatherboard-stripped" && strip --strip-debug "$WORK/weatherboard-stripped"
taskset -c 0 valgrind --tool=callgrind --callgrind-out-file="$WORK/callgrind.%p" "$WORK/weatherboard-stripped" --port "$PORT" \
    --db "$WORK/site.sqlite" --weather demo --page-caches off --log-level warning >"$OUT/callgrind-server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 600); do curl -fs "$BASE/healthz" >/dev/null && break; sleep 0.2; done
count() { # NAME URL [curl args...]
    local name=$1 url=$2; shift 2
    for _ in $(seq 1 10); do curl -fsS -o /dev/null "$@" "$url"; done
    callgrind_control -z "$SERVER_PID" >/dev/null
    for _ in $(seq 1 "${CALLGRIND_REQUESTS:-50}"); do curl -fsS -o /dev/null "$@" "$url"; done
    callgrind_control -d "$SERVER_PID" >/dev/null
    sleep 1
    local dump total
    dump=$(ls -t "$WORK"/callgrind.* | head -1)
    total=$(awk '/^(summary|totals):/ {print $2; exit}' "$dump")
    echo "instructions $name $(( total / ${CALLGRIND_REQUESTS:-50} ))" | tee -a "$OUT/results.txt"
}
for city in busan incheon; do
    count "guest-$city-uncached" "$BASE/city/$city" -H 'Accept-Encoding: gzip' -H 'Sec-Fetch-Site: none'
    count "member-$city-uncached" "$BASE/city/$city" -H 'Accept-Encoding: gzip' -H 'Sec-Fetch-Site: same-origin' -H "Cookie: session=$session"
done
