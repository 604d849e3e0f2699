#!/usr/bin/env bash
# Builds the posts' search query libFuzzer target with AddressSanitizer and runs it.
#   scripts/fuzz-postquery.sh [RUNS]     (default 1,000,000 executions; extra libFuzzer flags via FUZZ_FLAGS)
# Seeds are Tests/Fuzz/postquery-corpus; new inputs found go to .build-fuzz/postquery-corpus (not committed).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-1000000}
OUT=.build-fuzz
mkdir -p "$OUT/postquery-corpus"
swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name FuzzPostQuery \
    Tests/Fuzz/FuzzPostQuery.swift Sources/Weatherboard/Features/Search/PostQuery.swift Sources/Weatherboard/Support/TextPolicy.swift \
    -o "$OUT/fuzz-postquery"
"$OUT/fuzz-postquery" -runs="$RUNS" -artifact_prefix="$OUT/" -max_len=2048 -print_final_stats=1 ${FUZZ_FLAGS:-} "$OUT/postquery-corpus" Tests/Fuzz/postquery-corpus
