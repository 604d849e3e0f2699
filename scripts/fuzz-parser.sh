#!/usr/bin/env bash
# Builds the parser's libFuzzer target with AddressSanitizer and runs it.
#   scripts/fuzz-parser.sh [RUNS]     (default 10,000,000 executions; extra libFuzzer flags via FUZZ_FLAGS)
# The seed corpus is Tests/Fuzz/corpus; new inputs found go to .build-fuzz/corpus (not committed).
# The whole HTTPServer module is compiled in (a list of its files kept here fell behind them),
# with its C shim instrumented too and swift-log as SwiftPM builds it.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-10000000}
OUT=.build-fuzz
mkdir -p "$OUT/corpus" "$OUT/csystem"
swift build --product HTTPServer >/dev/null
BIN=$(swift build --show-bin-path)
clang -O1 -fsanitize=fuzzer-no-link,address -I Sources/CSystem/include -c Sources/CSystem/CSystem.c -o "$OUT/csystem/CSystem.o"
cat > "$OUT/csystem/module.modulemap" <<MAP
module CSystem {
    header "$PWD/Sources/CSystem/include/CSystem.h"
    export *
}
MAP
swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name FuzzParser \
    -I "$OUT/csystem" -I Sources/CZlib -I "$BIN/Modules" \
    Tests/Fuzz/FuzzParser.swift Sources/HTTPServer/*.swift "$BIN"/Logging.build/*.o "$OUT/csystem/CSystem.o" -lz \
    -o "$OUT/fuzz-parser" 2> >(grep -v "Cannot export local symbol '__asan" >&2)
"$OUT/fuzz-parser" -runs="$RUNS" -artifact_prefix="$OUT/" -max_len=4096 -print_final_stats=1 ${FUZZ_FLAGS:-} "$OUT/corpus" Tests/Fuzz/corpus
