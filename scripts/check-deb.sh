#!/usr/bin/env bash
# The Debian package as an operator meets it (root, on a machine of this kind; CI runs it):
# build it, install it with dpkg, check its units with systemd-analyze, then run the unit's
# ExecStart as its user, in its working directory, with its environment file, and open a city.
# No systemd runs here, so the unit's sandboxing itself is not exercised: its syntax is.
set -euo pipefail
repository="$(cd "$(dirname "$0")/.." && pwd)"
package="$("$repository/scripts/package-deb.sh" "$(mktemp -d)" | tail -1)"
dpkg -i "$package"
# verify exits 0 on what it only warns about (an unknown key, a misspelt section): any word is a failure.
said="$(systemd-analyze verify /lib/systemd/system/weatherboard.service /lib/systemd/system/weatherboard@.service 2>&1)"
if [ -n "$said" ]; then echo "systemd-analyze verify: $said"; exit 1; fi

port=18573
log="$(mktemp)"
unit=/lib/systemd/system/weatherboard.service
start="$(sed -n 's/^ExecStart=//p' "$unit")"
workdir="$(sed -n 's/^WorkingDirectory=//p' "$unit")"
# EnvironmentFile= as systemd reads it: KEY=value lines, comments skipped.
(cd "$workdir" && exec env $(grep -E '^[A-Z_]+=' /etc/weatherboard/weatherboard.env || true) WEATHERBOARD_PORT=$port \
    WEATHERBOARD_WEATHER=demo setpriv --reuid=weatherboard --regid=weatherboard --init-groups $start) >"$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 1 60); do curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 1; done
if ! curl -fsS "http://127.0.0.1:$port/city/seoul" | grep -q '<h1'; then
    echo "the installed site did not serve /city/seoul:"; cat "$log"; exit 1
fi
test "$(stat -c %U /var/lib/weatherboard/weatherboard.sqlite)" = weatherboard
echo "installed $package: units verified, /city/seoul served by the weatherboard user from /var/lib/weatherboard"
