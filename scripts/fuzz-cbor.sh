#!/usr/bin/env bash
# Builds the CBOR reader's libFuzzer target with AddressSanitizer and runs it.
#   scripts/fuzz-cbor.sh [RUNS]     (default 10,000,000 executions; extra libFuzzer flags via FUZZ_FLAGS)
# The seed corpus is Tests/Fuzz/cbor-corpus (attestation objects and COSE keys); new inputs
# found go to .build-fuzz/cbor-corpus (not committed).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-10000000}
OUT=.build-fuzz
mkdir -p "$OUT/cbor-corpus"
swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name FuzzCBOR \
    Tests/Fuzz/FuzzCBOR.swift Sources/Weatherboard/Features/Accounts/CBOR.swift -o "$OUT/fuzz-cbor"
"$OUT/fuzz-cbor" -runs="$RUNS" -artifact_prefix="$OUT/" -max_len=4096 -print_final_stats=1 ${FUZZ_FLAGS:-} "$OUT/cbor-corpus" Tests/Fuzz/cbor-corpus
