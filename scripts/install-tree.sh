#!/usr/bin/env bash
# Lays out an installed Weatherboard under DESTDIR, the layout the binary looks for
# (Sources/Weatherboard/App/InstalledFiles.swift): the binary in usr/bin, what it reads at run
# time in usr/share/weatherboard (migrations, static files, string catalogs, city catalogs).
# Used by scripts/package-deb.sh and by the test that runs an installed binary.
#   scripts/install-tree.sh BINARY DESTDIR
set -euo pipefail
binary=$1
destination=$2
repository="$(cd "$(dirname "$0")/.." && pwd)"
share="$destination/usr/share/weatherboard"

install -d "$destination/usr/bin" "$share/Templates/strings"
install -m 0755 "$binary" "$destination/usr/bin/weatherboard"
cp -R "$repository/Migrations" "$repository/Public" "$share/"
install -m 0644 "$repository"/Templates/strings/*.json "$share/Templates/strings/"
install -m 0644 "$repository/Sources/Weatherboard/Features/Cities/cities.tsv" \
    "$repository/Sources/Weatherboard/Features/Cities/regions.tsv" \
    "$repository/Sources/Weatherboard/Features/Cities/districts.tsv" \
    "$repository/Sources/Weatherboard/Features/Cities/district-shapes.tsv" \
    "$repository/Sources/Weatherboard/Features/Map/korea-map.tsv" \
    "$repository/Sources/Weatherboard/Features/Accounts/confusables.txt" "$share/"
find "$share" -type d -exec chmod 0755 {} + && find "$share" -type f -exec chmod 0644 {} +
