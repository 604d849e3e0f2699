#!/usr/bin/env bash
# The physical limit for anonymous traffic (issue 38): nginx, one worker, serving the very bytes
# our server sends (every city page dumped as a pre-compressed static file, `gzip_static`),
# against our server, under the same mix: slugs Zipf-distributed over the 2,000 largest cities,
# gzip asked, nobody signed in (scripts/city-mix-zipf.lua). Server on CPU 0, wrk on CPU 1,
# alternated rounds (absolute rates swing by a quarter here; the ratio in one round holds).
#
#   scripts/bench-static-limit.sh OUT_DIR
#
# Environment: BIN (a build to measure; default: a release build made here), ROUNDS=3,
# DURATION=10s WARMUP=3s CONNS=64 PORT=8090 NGINX_PORT=8092. Needs nginx, wrk, curl, sqlite3, taskset.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/bench-static-limit.sh OUT_DIR}
ROUNDS=${ROUNDS:-3} DURATION=${DURATION:-10s} WARMUP=${WARMUP:-3s} CONNS=${CONNS:-64}
PORT=${PORT:-8090} NGINX_PORT=${NGINX_PORT:-8092}
for tool in nginx wrk curl sqlite3 taskset; do command -v $tool >/dev/null || { echo "missing $tool" >&2; exit 1; }; done
mkdir -p "$OUT"
WORK=$(mktemp -d)
OURS=""
NGINX=""
cleanup() {
    [[ -n $OURS ]] && kill "$OURS" 2>/dev/null && wait "$OURS" 2>/dev/null
    [[ -n $NGINX ]] && kill "$NGINX" 2>/dev/null && wait "$NGINX" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

wait_healthy() { for _ in $(seq 1 300); do curl -fs "$1/healthz" >/dev/null 2>&1 && return 0; sleep 0.2; done; echo "no server at $1" >&2; return 1; }

if [[ -z ${BIN:-} ]]; then
    swift build -c release --product weatherboard >/dev/null
    BIN=.build/release/weatherboard
fi
taskset -c 0 "$BIN" serve --port "$PORT" --db "$WORK/ours.sqlite" --weather demo --log-level warning \
    --weather-fetches-per-minute 100000000 --weather-cold-fetches-per-client 100000000 --weather-cold-fetches-per-hour 100000000 >"$OUT/ours-server.log" 2>&1 &
OURS=$!
wait_healthy "http://127.0.0.1:$PORT"
sqlite3 "$WORK/ours.sqlite" "SELECT slug FROM cities ORDER BY population DESC, id LIMIT 2000" >"$WORK/slugs.txt"

# Every city opened once (its forecast in), then its page as a browser gets it, gzip, dumped.
mkdir -p "$WORK/root/city"
while read -r slug; do printf 'url = "http://127.0.0.1:%s/city/%s"\noutput = "/dev/null"\n' "$PORT" "$slug"; done <"$WORK/slugs.txt" >"$WORK/every.curl"
curl -fsS -H "Accept-Encoding: gzip" -H "Sec-Fetch-Site: none" -K "$WORK/every.curl"
while read -r slug; do
    printf 'url = "http://127.0.0.1:%s/city/%s"\noutput = "%s/root/city/%s.gz"\n' "$PORT" "$slug" "$WORK" "$slug"
done <"$WORK/slugs.txt" >"$WORK/dump.curl"
curl -fsS -H "Accept-Encoding: gzip" -H "Sec-Fetch-Site: none" -K "$WORK/dump.curl"
while read -r slug; do gzip -dc "$WORK/root/city/$slug.gz" >"$WORK/root/city/$slug"; done <"$WORK/slugs.txt"
echo "dumped $(wc -l <"$WORK/slugs.txt") pages, $(du -sb "$WORK/root/city" | cut -f1) bytes plain and gzip" | tee "$OUT/results.txt"

mkdir -p "$WORK/nginx/logs"
cat >"$WORK/nginx/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
error_log $WORK/nginx/logs/error.log warn;
pid $WORK/nginx/nginx.pid;
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    server {
        listen 127.0.0.1:$NGINX_PORT;
        root $WORK/root;
        location /healthz { return 200 "ok"; }
        location /city/ { default_type "text/html; charset=utf-8"; gzip_static on; }
    }
}
CONF

run() { # NAME URL: one warmed run of the mix; prints "req/s p99"
    local name=$1 url=$2
    SLUGS="$WORK/slugs.txt" SIGNED_IN_PCT=0 taskset -c 1 wrk -t1 -c"$CONNS" -d"$WARMUP" -s scripts/city-mix-zipf.lua "$url" >/dev/null 2>&1 || true
    SLUGS="$WORK/slugs.txt" SIGNED_IN_PCT=0 taskset -c 1 wrk -t1 -c"$CONNS" -d"$DURATION" --latency -s scripts/city-mix-zipf.lua "$url" >"$OUT/$name.txt" 2>&1
    grep -q "Non-2xx or 3xx" "$OUT/$name.txt" && echo "warning: $name had error answers" >&2
    echo "$(awk '/Requests\/sec/ {print $2}' "$OUT/$name.txt") $(awk '$1 == "99%" {print $2}' "$OUT/$name.txt")"
}
for round in $(seq 1 "$ROUNDS"); do
    taskset -c 0 nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" >>"$OUT/nginx.log" 2>&1 &
    NGINX=$!
    wait_healthy "http://127.0.0.1:$NGINX_PORT"
    read -r nginx_rate nginx_p99 < <(run "nginx-$round" "http://127.0.0.1:$NGINX_PORT")
    kill "$NGINX"; wait "$NGINX" 2>/dev/null || true; NGINX=""
    read -r ours_rate ours_p99 < <(run "ours-$round" "http://127.0.0.1:$PORT")
    printf 'round %s: nginx %s req/s p99 %s; ours %s req/s p99 %s; ratio %.2f\n' "$round" "$nginx_rate" "$nginx_p99" \
        "$ours_rate" "$ours_p99" "$(awk -v a="$ours_rate" -v b="$nginx_rate" 'BEGIN { print a / b }')" | tee -a "$OUT/results.txt"
done
echo "results in $OUT/results.txt"
