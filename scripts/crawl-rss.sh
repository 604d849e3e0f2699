#!/usr/bin/env bash
# scripts/crawl-rss.sh [N]
#
# Memory after a crawl: a release build on a fresh SQLite database with demo weather, then GET
# /city/{slug} for N distinct cities (default 10,000), one after another; prints the server's
# resident set size (VmRSS) before and after, and its peak (VmHWM). Every page decodes and keeps
# a forecast and renders a weather fragment, so an unbounded cache shows here.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-10000}
PORT=${PORT:-8097}
WORK=$(mktemp -d /tmp/crawl-rss.XXXXXX)
swift build -c release --product weatherboard >/dev/null
# The fetch budgets are lifted: one client crawling is exactly what they stop, and here every
# page must hold a forecast for the caches' bounds to show.
.build/release/weatherboard serve --port "$PORT" --db "$WORK/db.sqlite" --weather demo --log-level warning \
    --weather-fetches-per-minute 1000000 --weather-cold-fetches-per-client 1000000 --weather-cold-fetches-per-hour 1000000 >"$WORK/server.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true; wait $PID 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 1 300); do curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break; sleep 0.2; done
rss() { awk -v key="$1:" '$1 == key {print int($2 / 1024) " MiB"}' "/proc/$PID/status"; }
echo "after start: $(rss VmRSS)"
sqlite3 "$WORK/db.sqlite" "SELECT slug FROM cities ORDER BY id LIMIT $N" | sed "s|^|url = \"http://127.0.0.1:$PORT/city/|; s|$|\"\\noutput = /dev/null|" >"$WORK/urls"
curl -s --no-progress-meter --parallel --parallel-max 4 --config "$WORK/urls" -o /dev/null
echo "after $N city pages: $(rss VmRSS) (peak $(rss VmHWM)); forecasts cached in SQLite: $(sqlite3 "$WORK/db.sqlite" 'SELECT COUNT(*) FROM weather_cache')"
