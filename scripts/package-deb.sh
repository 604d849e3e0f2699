#!/usr/bin/env bash
# Builds a Debian package of Weatherboard: the release binary (Swift's runtime linked in, so the
# machine needs no toolchain), what it reads at run time under /usr/share/weatherboard, a
# `weatherboard` system user, /var/lib/weatherboard owned by it, /etc/weatherboard/weatherboard.env
# naming every setting (commented out at its default), and systemd units with sandboxing
# (weatherboard.service for one node, weatherboard@PORT.service for several).
#   scripts/package-deb.sh [OUT_DIR]        (default: ./dist; prints the package's path last)
#   BIN=path/to/weatherboard scripts/package-deb.sh   packages a binary built before (with
#   --static-swift-stdlib) instead of building: it must need no toolchain library, or nothing is made.
# Install: apt-get install ./OUT_DIR/weatherboard_*.deb (apt brings the libraries it depends on); systemctl enable --now weatherboard
set -euo pipefail
repository="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$repository/dist}"
cd "$repository"

if [ -n "${BIN:-}" ]; then
    binary="$BIN"
else
    swift build -c release --product weatherboard --static-swift-stdlib
    binary="$(swift build -c release --static-swift-stdlib --show-bin-path)/weatherboard"
fi
# A binary that names Swift's own libraries would need the toolchain on the machine it goes to.
if objdump -p "$binary" | awk '/NEEDED/ { print $2 }' | grep -E '^lib(swift|Foundation|FoundationEssentials|FoundationInternationalization|_FoundationICU|dispatch|BlocksRuntime)' >&2; then
    echo "$binary needs the libraries above from the Swift toolchain: build it with --static-swift-stdlib" >&2
    exit 1
fi

version="0.$(git rev-list --count HEAD)+g$(git rev-parse --short=10 HEAD)"
# What is built is the working tree: changes not committed say so in the version.
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then version="$version.dirty"; fi
arch="$(dpkg --print-architecture)"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
root="$stage/root"

scripts/install-tree.sh "$binary" "$root"
echo "$version" > "$root/usr/share/weatherboard/VERSION" # weatherboard_build_info's version
strip --strip-unneeded "$root/usr/bin/weatherboard"
install -d "$root/lib/systemd/system" "$root/etc/weatherboard" "$root/usr/share/doc/weatherboard" "$root/DEBIAN"
install -m 0644 scripts/package/weatherboard.service scripts/package/weatherboard@.service "$root/lib/systemd/system/"
# Every setting, from the binary's own list; its folders' defaults are read as installed.
(cd / && "$root/usr/bin/weatherboard" environment-file) | sed "s|$root||g" > "$root/etc/weatherboard/weatherboard.env"
chmod 0640 "$root/etc/weatherboard/weatherboard.env"
install -m 0644 README.md docs/operations.md "$root/usr/share/doc/weatherboard/"
install -m 0755 scripts/package/postinst scripts/package/postrm "$root/DEBIAN/"
echo /etc/weatherboard/weatherboard.env > "$root/DEBIAN/conffiles"

# The shared libraries the binary names (NEEDED), by the Debian packages that hold them; and
# libpq5, which it loads when given a PostgreSQL URL (dlopen).
resolved="$(ldd "$root/usr/bin/weatherboard")"
depends="$(objdump -p "$root/usr/bin/weatherboard" | awk '/NEEDED/ && $2 !~ /^ld-linux/ { print $2 }' | while read -r name; do
    library="$(awk -v name="$name" '$1 == name && $3 ~ /^\// { print $3 }' <<<"$resolved")"
    [ -n "$library" ] || { echo "$name is not found on this machine" >&2; exit 1; }
    dpkg -S "$(readlink -f "$library")" 2>/dev/null || dpkg -S "$library" 2>/dev/null || { echo "no package holds $library" >&2; exit 1; }
done | cut -d: -f1 | sort -u | paste -sd, | sed 's/,/, /g')"
cat > "$root/DEBIAN/control" <<CONTROL
Package: weatherboard
Version: $version
Architecture: $arch
Maintainer: Weatherboard <weatherboard@localhost>
Depends: adduser, libpq5, $depends
Section: web
Priority: optional
Installed-Size: $(du -sk "$root" | cut -f1)
Description: the weather compared with yesterday, and each city's board
 A server-rendered web application: a city's page says how today compares with
 yesterday and tomorrow, and its board is where people talk about the day's weather.
CONTROL

mkdir -p "$out"
package="$out/weatherboard_${version}_${arch}.deb"
dpkg-deb --root-owner-group --build "$root" "$package" >/dev/null
echo "$package"
