#!/usr/bin/env bash
# scripts/faults.sh [OUT]
#
# The fault drill of docs/operations.md: the documented set-up (scripts/cluster.sh: PostgreSQL,
# two nodes as the site's own role, nginx) under a load of writers and readers, with faults
# injected one after another. Every post a writer was told is saved (303) is recorded and
# checked at the end: each must be in the database exactly once. A writer whose post was
# refused (503, 502, no answer) sends the same text again, as a person would, up to 5 times.
#
# Faults, each under load with calm between them: a node killed with SIGKILL and started again,
# PostgreSQL restarted fast and immediate, PostgreSQL frozen (SIGSTOP) for 20 s, PostgreSQL stopped for 10 s, a transaction
# holding the site's write lock for 20 s, the LISTEN connection terminated, a rolling restart.
#
# Writes OUT/faults.md (the table docs/operations.md shows) and OUT/requests.log (every request:
# phase, kind, status, seconds; a request counts in the phase it started in). Needs root (to freeze PostgreSQL's processes), postgresql, nginx,
# curl. BIN: a built weatherboard (default: builds release). WRITERS (4), READERS (2).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-/tmp/weatherboard-faults}
mkdir -p "$OUT"
[[ $(id -u) == 0 ]] || { echo "run as root: the drill freezes PostgreSQL's processes" >&2; exit 1; }
WRITERS=${WRITERS:-4}
READERS=${READERS:-2}
PORT=${PORT:-8180}
PG_PORT=${PG_PORT:-55442}
NODE_PORTS="8191 8192"
DIR=$(mktemp -u /tmp/weatherboard-faults.XXXXXX)
WORK=$(mktemp -d)
BASE="http://127.0.0.1:$PORT"
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
if [[ -z ${BIN:-} ]]; then
    swift build -c release --product weatherboard >/dev/null
    BIN=$PWD/.build/release/weatherboard
fi
export PORT PG_PORT NODE_PORTS BIN
export NODE_ARGS="--weather demo --log-level notice --seconds-between-posts 0 --posts-per-day 1000000 --sign-ups-per-hour 100000"
cluster() { scripts/cluster.sh "$@" "$DIR"; }
trap 'rm -f "$WORK/running"; kill $(jobs -p) 2>/dev/null || true; cluster stop >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
cluster start >"$OUT/cluster.log"

psql_as() { # ROLE SQL: on the drill's database
    su postgres -s /bin/sh -c "$PG_BIN/psql -h 127.0.0.1 -p $PG_PORT -U $1 -d weatherboard -X -q -t -A -v ON_ERROR_STOP=1 -c \"$2\""
}
phase() { echo "$1" >"$WORK/phase.next" && mv "$WORK/phase.next" "$WORK/phase"; echo "$(date +%T) $1" >&2; }
now() { date +%s.%N; }
phase calm
touch "$WORK/running"
: >"$OUT/requests.log"
: >"$WORK/acknowledged"

sign_up() { # NAME JAR: a member, signed in; retried while the node is busy hashing others' passwords (503)
    for _ in $(seq 1 30); do
        curl -fsS -o /dev/null -c "$2" -b "$2" -H "Sec-Fetch-Site: same-origin" --data-urlencode "username=$1" \
            --data-urlencode "display_name=$1" --data-urlencode "password=a long drill password for $1" "$BASE/signup" 2>/dev/null && return 0
        sleep 1
    done
    echo "could not sign up $1" >&2; return 1
}

writer() { # N: one member posting on Seoul's board through nginx
    local n=$1 jar="$WORK/writer-$n.jar" seq=0 text tries answer
    sign_up "drill$n" "$jar"
    while [[ -f $WORK/running ]]; do
        seq=$((seq + 1))
        text="Drill writer $n, post $seq: rain at the bus stop, umbrellas out"
        for tries in 1 2 3 4 5; do
            local label; label=$(cat "$WORK/phase")
            answer=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' --max-time 20 -b "$jar" -c "$jar" \
                -H "Sec-Fetch-Site: same-origin" --data-urlencode "body=$text" "$BASE/city/seoul/posts" || true)
            echo "$label write $answer" >>"$OUT/requests.log"
            if [[ ${answer%% *} == 303 ]]; then echo "$text" >>"$WORK/acknowledged"; break; fi
            sleep 1
        done
    done
}

reader() { # N: a signed-in page, a guest's page (as a browser asks: Fetch Metadata), a static file and /healthz through nginx, and /healthz of node one
    local n=$1 jar="$WORK/reader-$n.jar"
    sign_up "reader$n" "$jar"
    while [[ -f $WORK/running ]]; do
        local label; label=$(cat "$WORK/phase")
        echo "$label page $(curl -s -o /dev/null -w '%{http_code} %{time_total}' --max-time 30 -b "$jar" "$BASE/city/seoul" || true)" >>"$OUT/requests.log"
        echo "$label guest $(curl -s -o /dev/null -w '%{http_code} %{time_total}' --max-time 30 -H 'Sec-Fetch-Site: none' "$BASE/city/seoul" || true)" >>"$OUT/requests.log"
        echo "$label static $(curl -s -o /dev/null -w '%{http_code} %{time_total}' --max-time 30 "$BASE/static/css/site.css" || true)" >>"$OUT/requests.log"
        echo "$label health $(curl -s -o /dev/null -w '%{http_code} %{time_total}' --max-time 30 "http://127.0.0.1:${NODE_PORTS%% *}/healthz" || true)" >>"$OUT/requests.log"
        sleep 0.2
    done
}

for n in $(seq 1 "$WRITERS"); do writer "$n" & done
for n in $(seq 1 "$READERS"); do reader "$n" & done
sleep 5

postgres_pids() { # the server and every backend of the drill's cluster
    local main; main=$(head -1 "$DIR/pg/postmaster.pid")
    echo "$main" $(pgrep -P "$main")
}
pg_ctl_as_postgres() { su postgres -s /bin/sh -c "$PG_BIN/pg_ctl -D $DIR/pg -w $*" >/dev/null; }
first_node=${NODE_PORTS%% *}

phase "node killed (SIGKILL) and started again"
kill -KILL "$(cat "$DIR/node-$first_node.pid")"
sleep 3
cluster node "$first_node" >/dev/null
sleep 7
phase calm; sleep 5

phase "PostgreSQL restarted (fast)"
pg_ctl_as_postgres "-m fast -o '-p $PG_PORT -k $DIR -c listen_addresses=127.0.0.1 -c max_connections=200' -l $DIR/pg.log restart"
sleep 8
phase calm; sleep 5

phase "PostgreSQL restarted (immediate)"
pg_ctl_as_postgres "-m immediate -o '-p $PG_PORT -k $DIR -c listen_addresses=127.0.0.1 -c max_connections=200' -l $DIR/pg.log restart"
sleep 8
phase calm; sleep 5

phase "PostgreSQL frozen 20 s (SIGSTOP)"
pids=$(postgres_pids)
kill -STOP $pids
sleep 20
kill -CONT $pids
phase "after the freeze"; sleep 10
phase calm; sleep 5

phase "PostgreSQL stopped 10 s"
pg_ctl_as_postgres "-m fast stop"
sleep 10
pg_ctl_as_postgres "-o '-p $PG_PORT -k $DIR -c listen_addresses=127.0.0.1 -c max_connections=200' -l $DIR/pg.log start"
phase "after the stop"; sleep 10
phase calm; sleep 5

phase "write lock held 20 s by one transaction"
psql_as weatherboard "BEGIN; SELECT pg_advisory_xact_lock($((0x574541544852))); SELECT pg_sleep(20); COMMIT;" >/dev/null
phase "after the lock"; sleep 5
phase calm; sleep 5

phase "LISTEN connections terminated"
psql_as postgres "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name LIKE 'weatherboard-feed-%'" >/dev/null
sleep 8
phase calm; sleep 5

phase "rolling restart (scripts/cluster.sh restart)"
cluster restart >>"$OUT/cluster.log"
phase calm; sleep 5

rm -f "$WORK/running"
wait $(jobs -p) 2>/dev/null || true

# Every acknowledged post exactly once; posts saved without an acknowledgement (the answer was
# lost: a 502, a timeout) are counted, not errors.
psql_as postgres "SELECT body || '	' || count(*) FROM posts WHERE body LIKE 'Drill writer %' GROUP BY body" >"$WORK/stored"
acknowledged=$(sort -u "$WORK/acknowledged" | wc -l)
missing=$(sort -u "$WORK/acknowledged" | while IFS= read -r text; do grep -qxF "$text	1" "$WORK/stored" || grep -qF "$text	" "$WORK/stored" || echo "$text"; done | wc -l)
duplicated=$(awk -F'\t' '$2 > 1' "$WORK/stored" | wc -l)
stored=$(wc -l <"$WORK/stored")

{
    echo "Fault drill, $(date -u +%F), $(nproc) cores, PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}'), $WRITERS writers, $READERS readers (scripts/faults.sh)."
    echo
    echo "| phase | posts acknowledged | writes refused 503/507 | other write answers | slowest write (s) | page/static not 200 | slowest page (s) | guest page not 200 | slowest guest page (s) | slowest static (s) | node one's /healthz not 200 | slowest /healthz (s) |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
    awk '
        { status = $(NF-1); seconds = $NF; kind = $(NF-2); $(NF-2) = $(NF-1) = $NF = ""; sub(/ +$/, ""); phase = $0
          if (!(phase in seen)) { seen[phase] = 1; order[++n] = phase }
          key = phase SUBSEP kind; if (seconds > slowest[key]) slowest[key] = seconds
          if (kind == "write") { if (status == 303) ok[phase]++; else if (status == 503 || status == 507) refused[phase]++; else lost[phase]++; if (status != 303 && status != 503 && status != 507) codes[phase] = codes[phase] " " status }
          if ((kind == "page" || kind == "static") && status != 200) bad[phase]++
          if (kind == "guest" && status != 200) stranger[phase]++
          if (kind == "health" && status != 200) sick[phase]++ }
        function summary(list,   parts, k, count, text, code) { # " 502 502 000" → " (502 ×2, 000 ×1)"
            split(list, parts, " "); text = ""; delete count
            for (k in parts) if (parts[k] != "") count[parts[k]]++
            for (code in count) text = text (text == "" ? "" : ", ") code " ×" count[code]
            return text == "" ? "" : " (" text ")" }
        END { for (i = 1; i <= n; i++) { p = order[i]
              printf "| %s | %d | %d | %d%s | %.2f | %d | %.2f | %d | %.2f | %.2f | %d | %.2f |\n", p, ok[p], refused[p], lost[p], summary(codes[p]),
                     slowest[p SUBSEP "write"], bad[p], slowest[p SUBSEP "page"], stranger[p], slowest[p SUBSEP "guest"], slowest[p SUBSEP "static"],
                     sick[p], slowest[p SUBSEP "health"] } }
    ' "$OUT/requests.log"
    echo
    echo "Posts acknowledged: $acknowledged; missing from the database: $missing; stored more than once: $duplicated; stored in all: $stored (the difference: saved while the answer was lost, and found again by the retry's 'already saved')."
} | tee "$OUT/faults.md"
[[ $missing == 0 && $duplicated == 0 ]]
