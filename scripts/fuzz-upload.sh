#!/usr/bin/env bash
# Builds the photo upload path's libFuzzer target with AddressSanitizer and runs it: multipart
# parsing (Sources/HTTPMultipart/MultipartForm.swift), the container walk (PhotoFile.swift) and libvips's
# header read through the site's C shim (Sources/CPhotos).
#   scripts/fuzz-upload.sh [RUNS]   (default 1,000,000 executions; extra libFuzzer flags via FUZZ_FLAGS)
# The seed corpus is Tests/Fuzz/upload-corpus (made by scripts/fuzz-upload-seeds.py); new inputs go
# to .build-fuzz/upload-corpus (not committed). libvips itself is Debian's, not instrumented.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-1000000}
OUT=.build-fuzz
mkdir -p "$OUT/upload-corpus" "$OUT/cphotos"
clang -O1 -g -fsanitize=fuzzer-no-link,address $(pkg-config --cflags vips) -I Sources/CPhotos/include \
    -c Sources/CPhotos/CPhotos.c -o "$OUT/cphotos/CPhotos.o"
cat > "$OUT/cphotos/module.modulemap" <<MAP
module CPhotos {
    header "$PWD/Sources/CPhotos/include/CPhotos.h"
    export *
}
MAP
swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name FuzzUpload -I "$OUT/cphotos" \
    Tests/Fuzz/FuzzUpload.swift Sources/HTTPMultipart/MultipartForm.swift Sources/Weatherboard/Features/Photos/PhotoFile.swift \
    "$OUT/cphotos/CPhotos.o" $(pkg-config --libs vips) -o "$OUT/fuzz-upload"
"$OUT/fuzz-upload" -runs="$RUNS" -artifact_prefix="$OUT/" -max_len=8192 -rss_limit_mb=4096 -print_final_stats=1 \
    ${FUZZ_FLAGS:-} "$OUT/upload-corpus" Tests/Fuzz/upload-corpus
