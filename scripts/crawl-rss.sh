#!/usr/bin/env bash
# scripts/crawl-rss.sh [N]    (EXTRA_ARGS="--forecasts-in-memory 1" to compare)
#
# Memory after a crawl: a release build on a fresh SQLite database with demo weather, then GET
# /city/{slug} for N distinct cities (default 10,000), one after another; prints the server's
# resident set size (VmRSS) before and after, and its peak (VmHWM), then where the memory is
# (issue 39 #5): each cache's bytes and the malloc heap's, from /metrics. Every page decodes and
# keeps a forecast and renders a weather fragment (pages are asked with gzip, so deflated copies
# are kept too), so an unbounded cache shows here.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-10000}
PORT=${PORT:-8097}
WORK=$(mktemp -d /tmp/crawl-rss.XXXXXX)
swift build -c release --product weatherboard >/dev/null
# The fetch budgets are lifted: one client crawling is exactly what they stop, and here every
# page must hold a forecast for the caches' bounds to show.
.build/release/weatherboard serve --port "$PORT" --db "$WORK/db.sqlite" --weather demo --log-level warning \
    --weather-fetches-per-minute 1000000 --weather-cold-fetches-per-client 1000000 --weather-cold-fetches-per-hour 1000000 \
    ${EXTRA_ARGS:-} >"$WORK/server.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true; wait $PID 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 1 300); do curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break; sleep 0.2; done
rss() { awk -v key="$1:" '$1 == key {print int($2 / 1024) " MiB"}' "/proc/$PID/status"; }
echo "after start: $(rss VmRSS)"
BASE_KIB=$(awk '$1 == "VmRSS:" {print $2}' "/proc/$PID/status")
sqlite3 "$WORK/db.sqlite" "SELECT slug FROM cities ORDER BY id LIMIT $N" | sed "s|^|url = \"http://127.0.0.1:$PORT/city/|; s|$|\"\\noutput = /dev/null|" >"$WORK/urls"
curl -s --no-progress-meter --compressed --parallel --parallel-max 4 --config "$WORK/urls" -o /dev/null
echo "after $N city pages: $(rss VmRSS) (peak $(rss VmHWM)); forecasts cached in SQLite: $(sqlite3 "$WORK/db.sqlite" 'SELECT COUNT(*) FROM weather_cache')"
curl -fs "http://127.0.0.1:$PORT/metrics" >"$WORK/metrics"
awk -v base="$BASE_KIB" -v rss="$(awk '$1 == "VmRSS:" {print $2}' "/proc/$PID/status")" '
    function mib(bytes) { return sprintf("%.1f MiB", bytes / 1048576) }
    /^weatherboard_cache_bytes\{/ { match($0, /cache="[^"]*"/); name = substr($0, RSTART + 7, RLENGTH - 8); caches[name] = $NF; sum += $NF }
    /^weatherboard_heap_bytes\{state="in_use"\}/ { inuse = $NF }
    /^weatherboard_heap_bytes\{state="free"\}/ { free = $NF }
    END {
        for (name in caches) printf "  cache %-16s %s\n", name, mib(caches[name])
        printf "caches together: %s; heap in use %s (the caches and everything else), held free %s\n", mib(sum), mib(inuse), mib(free)
        printf "RSS %s = after start %s + %s more; caches + after start = %s (RSS is %.0f %% of it)\n",
            mib(rss * 1024), mib(base * 1024), mib((rss - base) * 1024), mib(sum + base * 1024), 100 * rss * 1024 / (sum + base * 1024)
    }' "$WORK/metrics"
