#!/bin/bash
# scripts/callgrind-pages.sh LABEL BIN: instructions per request, under callgrind, for a kept guest
# page, a member's city page and cold guest pages (each city once). Needs valgrind, curl.
set -euo pipefail
LABEL=$1; BIN=$2; W=/tmp/cg-$LABEL; rm -rf $W; mkdir -p $W
cp "$BIN" $W/wb; strip --strip-debug $W/wb
ARGS=(serve --port 8091 --weather demo --log-level warning --seconds-between-posts 0 --sign-ups-per-hour 100000 --db $W/db.sqlite)
cd "$(dirname "$0")/.."
$W/wb "${ARGS[@]}" >$W/log 2>&1 & P=$!
for i in $(seq 1 200); do curl -fs http://127.0.0.1:8091/healthz >/dev/null && break; sleep 0.3; done
kill $P; wait $P 2>/dev/null || true
valgrind --tool=callgrind --callgrind-out-file=$W/cg.out $W/wb "${ARGS[@]}" >$W/vlog 2>&1 & P=$!
for i in $(seq 1 600); do curl -fs http://127.0.0.1:8091/healthz >/dev/null && break; sleep 0.5; done
B=http://127.0.0.1:8091
H=(-H "Sec-Fetch-Site: same-origin" -H "Accept-Encoding: gzip")
curl -s -o /dev/null -c $W/jar -b $W/jar "${H[@]}" $B/signup
curl -s -o /dev/null -c $W/jar -b $W/jar "${H[@]}" -H "Origin: $B" --data "username=member1&display_name=Member&password=correct+horse+battery&next=/" $B/signup
for c in seoul busan tokyo; do curl -s -o /dev/null -b $W/jar "${H[@]}" $B/city/$c; curl -s -o /dev/null "${H[@]}" $B/city/$c; done
measure() { # NAME N URL...
  local name=$1 n=$2; shift 2
  callgrind_control -z $P >/dev/null
  for i in $(seq 1 $n); do curl -s -o /dev/null "$@"; done
  callgrind_control -d $P >/dev/null
  local f=$(ls -t $W/cg.out.* | head -1)
  local ir=$(grep "^summary:" $f | awk '{print $2}')
  echo "$LABEL $name $(( ir / n )) instructions/request"
}
measure kept-guest 20 "${H[@]}" $B/city/seoul
measure member 20 -b $W/jar "${H[@]}" $B/city/seoul
callgrind_control -z $P >/dev/null
for c in osaka kyoto nagoya sapporo fukuoka incheon daegu daejeon gwangju ulsan; do curl -s -o /dev/null "${H[@]}" "$B/city/$c?lang=ko"; done
callgrind_control -d $P >/dev/null
f=$(ls -t $W/cg.out.* | head -1); echo "$LABEL cold-guest $(( $(grep '^summary:' $f | awk '{print $2}') / 10 )) instructions/request"
kill $P; wait $P 2>/dev/null || true
