#!/usr/bin/env bash
# Builds the parser's libFuzzer target with AddressSanitizer and runs it.
#   scripts/fuzz-parser.sh [RUNS]     (default 10,000,000 executions; extra libFuzzer flags via FUZZ_FLAGS)
# The seed corpus is Tests/Fuzz/corpus; new inputs found go to .build-fuzz/corpus (not committed).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-10000000}
OUT=.build-fuzz
mkdir -p "$OUT/corpus"
swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name FuzzParser \
    Tests/Fuzz/FuzzParser.swift Sources/HTTPServer/RequestParser.swift Sources/HTTPServer/HTTPTypes.swift \
    Sources/HTTPServer/Forms.swift -o "$OUT/fuzz-parser"
"$OUT/fuzz-parser" -runs="$RUNS" -artifact_prefix="$OUT/" -max_len=4096 -print_final_stats=1 ${FUZZ_FLAGS:-} "$OUT/corpus" Tests/Fuzz/corpus
