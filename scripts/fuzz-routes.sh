#!/usr/bin/env bash
# The route fuzzer for longer than CI's 20 s an engine: every route's fields given hostile values
# by a guest, a member and an admin, against the real executable (RouteFuzzTests).
#   scripts/fuzz-routes.sh [SECONDS] [SEED]     (default 600 s an engine; a seed replays a run)
# WEATHERBOARD_TEST_ENGINES=sqlite (or postgres) fuzzes one engine.
set -euo pipefail
cd "$(dirname "$0")/.."
export WEATHERBOARD_ROUTE_FUZZ_SECONDS=${1:-600}
[ -n "${2:-}" ] && export WEATHERBOARD_ROUTE_FUZZ_SEED=$2
swift build --build-tests
swift test --skip-build --filter RouteFuzzTests
