#!/usr/bin/env bash
# scripts/callgrind-plaintext.sh [HTTPServerBench binaries...]
#
# The bare server's instructions per `/plaintext` request under valgrind's callgrind: 2,000
# keep-alive requests (one curl) after as many to warm up, counted between a zeroing and a dump.
# A stripped copy of each binary is run (valgrind 3.19 cannot read the toolchain's DWARF 5).
# Without arguments: the release build of this checkout (built here).
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${PORT:-8095}
N=${N:-2000}
if (( $# == 0 )); then
    swift build -c release --product HTTPServerBench >/dev/null
    set -- .build/release/HTTPServerBench
fi
for bin in "$@"; do
    work=$(mktemp -d /tmp/callgrind-plaintext.XXXXXX)
    cp "$bin" "$work/server" && strip --strip-debug "$work/server"
    valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.%p" "$work/server" --port "$PORT" >"$work/server.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 300); do curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break; sleep 0.2; done
    for _ in $(seq 1 "$N"); do printf 'url = "http://127.0.0.1:%s/plaintext"\noutput = "/dev/null"\n' "$PORT"; done >"$work/urls"
    curl -fsS -K "$work/urls"
    callgrind_control -z "$pid" >/dev/null
    curl -fsS -K "$work/urls"
    callgrind_control -d "$pid" >/dev/null
    sleep 1
    dump=$(ls -t "$work"/callgrind.* | head -1)
    echo "$bin: $(( $(awk '/^(summary|totals):/ {print $2; exit}' "$dump") / N )) instructions a request"
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    rm -rf "$work"
done
