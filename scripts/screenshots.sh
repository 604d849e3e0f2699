#!/usr/bin/env bash
# Writes pictures of the main pages to docs/screenshots/ (home; a warm and a cold city, light
# and dark; the board with posts; the admin queue; phone widths; Korean pages), from headless
# Chromium driving the real server with demo weather.
# Needs: apt-get install -y chromium chromium-driver fonts-noto-cjk (Korean glyphs)
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p docs/screenshots
WEATHERBOARD_REQUIRE_BROWSER=1 WEATHERBOARD_SCREENSHOTS="$PWD/docs/screenshots" swift test --filter BrowserScreenshotTests
ls -l docs/screenshots
