#!/usr/bin/env bash
# scripts/fetch-axe.sh [DEST]: axe-core 4.12.1 (MPL 2.0, Deque Systems), the accessibility
# checker the browser tests run on every page. Debian ships none; PyPI's
# axe-playwright-python 0.1.8 wheel carries it as one JavaScript file, taken from there with its
# checksum checked. Default DEST: .build/axe.min.js (where the tests look).
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=${1:-.build/axe.min.js}
WHEEL_SHA256=fdd263c998388f1a8e67cad02677e612d946248bd44d163be5e8650ea31f95f8
[ -s "$DEST" ] && exit 0
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
python3 -m pip download --quiet --no-deps --dest "$WORK" axe-playwright-python==0.1.8
wheel=$(ls "$WORK"/*.whl)
echo "$WHEEL_SHA256  $wheel" | sha256sum --check --quiet
mkdir -p "$(dirname "$DEST")"
python3 -c 'import sys, zipfile; open(sys.argv[2], "wb").write(zipfile.ZipFile(sys.argv[1]).read("axe_playwright_python/axe.min.js"))' "$wheel" "$DEST"
head -c 20 "$DEST" | grep -q "axe v4.12.1" || { echo "unexpected axe.min.js" >&2; rm -f "$DEST"; exit 1; }
echo "axe-core at $DEST"
