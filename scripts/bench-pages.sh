#!/usr/bin/env bash
# scripts/bench-pages.sh OUT_DIR
#
# The application's pages against the Hummingbird peer, back to back in one run, the same way as
# the peer's bench.sh: server pinned to CPU 0, `wrk -t1 -c$CONNS --latency` pinned to CPU 1, a
# warm-up and then REPS runs of DURATION per scenario, medians reported.
#   ours: release build, a fresh SQLite database, demo weather, Seoul's board seeded through the
#         forms with 200 posts by 20 people; anonymous city page, signed-in city page, home page,
#         and a 90 % GET / 10 % POST mix whose POSTs are signed in
#         (scripts/post-mix-signed-in.lua); posting limits are lifted for the run.
#   peer: ../shared/peers/hummingbird-board, seeded by its own `seed`; its city page and its mix.
# The bare server's `/plaintext` against nginx (one process, `return 200`), the floor the site's
# own server must hold (SKIP_NGINX=1 to leave it out).
# CLUSTER=1: also the city pages and the mix through scripts/cluster.sh (two nodes on one
# PostgreSQL, nginx in front, all pinned to CPU 0 like the single node), in the same run.
# Then our instructions per request under valgrind's callgrind (a stripped copy of the binary
# beside the original: valgrind 3.19 cannot read the toolchain's DWARF 5), which, unlike req/s,
# repeat on a noisy machine: the city page (anonymous and signed in) and the home page, then the
# city page again once every post of its first page has 3 replies and 2 agreements.
#
# Real traffic (issue 24): city slugs Zipf-distributed over the 2,000 largest cities, gzip, 20 %
# signed in, forecasts fresh for 1 minute, posts on the 50 largest boards, every city opened
# once before (scripts/city-mix-zipf.lua; SKIP_REAL=1 leaves it out); under callgrind, the
# signed-in page over 40 cities with gzip and the anonymous page whose kept copy expired.
# Environment: PEER (the peer's sources), PEER_BUILD (a writable copy, built here if needed),
# DURATION=8s WARMUP=2s REPS=3 CONNS=64 CALLGRIND_REQUESTS=200 SKIP_PEER=1 SKIP_CALLGRIND=1 CLUSTER=1, BIN, EXTRA_ARGS (more serve flags),
# POSTS_PER_BOARD=3 (issue 38's full boards: 20; the 20 members rotate, so readers post on the boards they read),
# PLAINTEXT_ROUNDS=5, ONLY_PLAINTEXT=1 (the bare server against nginx and nothing else), KEEP_DUMPS=1 (callgrind's
# dump of each count into OUT, for callgrind_annotate).
# Needs: wrk, valgrind, curl, taskset, nginx (and postgresql for CLUSTER=1).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: $0 OUT_DIR}
PEER=${PEER:-../shared/peers/hummingbird-board}
PEER_BUILD=${PEER_BUILD:-/tmp/hb-peer}
DURATION=${DURATION:-8s}
WARMUP=${WARMUP:-2s}
REPS=${REPS:-3}
CONNS=${CONNS:-64}
CALLGRIND_REQUESTS=${CALLGRIND_REQUESTS:-200}
PORT=${PORT:-8080}
PEER_PORT=${PEER_PORT:-8081}
BASE="http://127.0.0.1:$PORT"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
for tool in wrk curl taskset; do command -v $tool >/dev/null || { echo "missing $tool (apt-get install -y wrk)" >&2; exit 1; }; done

WORK=$(mktemp -d /tmp/bench-pages.XXXXXX)
SERVER_PID=""
stop_server() {
    if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -TERM "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 1 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    SERVER_PID=""
}
CLUSTER_DIR=""
trap 'stop_server; [[ -z $CLUSTER_DIR ]] || scripts/cluster.sh stop "$CLUSTER_DIR"; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

wait_healthy() { # URL [tries]
    for _ in $(seq 1 "${2:-100}"); do curl -fs "$1/healthz" >/dev/null 2>&1 && return 0; sleep 0.2; done
    echo "server at $1 did not come up" >&2; return 1
}

# One scenario: warm-up, REPS runs; prints "req/s p99" (medians) and keeps wrk's output.
measure() { # NAME URL [wrk args...]
    local name=$1 url=$2; shift 2
    # Every current browser says where a request comes from (docs/security.md); a scenario that
    # passes FETCH_METADATA=0 in its environment leaves it out, as older browsers and scripts do.
    local site=(-H "Sec-Fetch-Site: same-origin")
    [[ ${FETCH_METADATA:-1} == 0 ]] && site=()
    taskset -c 1 wrk -t1 -c"$CONNS" -d"$WARMUP" "${site[@]}" "$@" "$url" >/dev/null 2>&1 || true
    local rates=() p99s=()
    for rep in $(seq 1 "$REPS"); do
        taskset -c 1 wrk -t1 -c"$CONNS" -d"$DURATION" --latency "${site[@]}" "$@" "$url" >"$OUT/$name-$rep.txt" 2>&1
        rates+=("$(awk '/Requests\/sec/ {print $2}' "$OUT/$name-$rep.txt")")
        p99s+=("$(awk '$1 == "99%" {print $2}' "$OUT/$name-$rep.txt")")
        if grep -q "Non-2xx or 3xx" "$OUT/$name-$rep.txt"; then echo "warning: $name had error answers (see $OUT/$name-$rep.txt)" >&2; fi
    done
    local rate p99
    rate=$(printf '%s\n' "${rates[@]}" | sort -g | sed -n "$(( (REPS + 1) / 2 ))p")
    p99=$(printf '%s\n' "${p99s[@]}" | sort -V | sed -n "$(( (REPS + 1) / 2 ))p")
    echo "$name $rate $p99" | tee -a "$OUT/results.txt"
}

# --- the peer --------------------------------------------------------------------------------
if [[ -z ${SKIP_PEER:-} ]]; then
    if [[ ! -x $PEER_BUILD/.build/release/hb-board ]]; then
        rm -rf "$PEER_BUILD" && cp -r "$PEER" "$PEER_BUILD" && chmod -R u+w "$PEER_BUILD"
        (cd "$PEER_BUILD" && swift build -c release)
    fi
    "$PEER_BUILD/.build/release/hb-board" seed --db "$WORK/peer.sqlite" >/dev/null
    taskset -c 0 "$PEER_BUILD/.build/release/hb-board" --port "$PEER_PORT" --db "$WORK/peer.sqlite" --templates "$PEER/Templates" \
        >"$OUT/peer-server.log" 2>&1 &
    SERVER_PID=$!
    wait_healthy "http://127.0.0.1:$PEER_PORT"
    measure peer-city "http://127.0.0.1:$PEER_PORT/city/seoul"
    SLUG=seoul POST_PCT=10 measure peer-mix "http://127.0.0.1:$PEER_PORT" -s "$PEER/post-mix.lua"
    stop_server
fi

# --- the bare server against nginx -----------------------------------------------------------
if [[ -z ${SKIP_NGINX:-} ]]; then
    command -v nginx >/dev/null || { echo "missing nginx (apt-get install -y nginx), or SKIP_NGINX=1" >&2; exit 1; }
    NGINX_PORT=${NGINX_PORT:-8082}
    mkdir -p "$WORK/nginx/logs"
    cat >"$WORK/nginx/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
error_log $WORK/nginx/logs/error.log warn;
pid $WORK/nginx/nginx.pid;
events { worker_connections 1024; }
http {
    access_log off;
    server {
        listen 127.0.0.1:$NGINX_PORT;
        location /healthz { return 200 "ok"; }
        location /plaintext { default_type text/plain; return 200 "Hello, World!"; }
    }
}
CONF
    swift build -c release --product HTTPServerBench >/dev/null
    # Alternated, one run each per round: both servers swing by a quarter from minute to
    # minute on this machine, so back-to-back pairs give the ratio that holds.
    NGINX_RATES=() BARE_RATES=()
    for round in $(seq 1 "${PLAINTEXT_ROUNDS:-5}"); do
        taskset -c 0 nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" >>"$OUT/nginx.log" 2>&1 &
        SERVER_PID=$!
        wait_healthy "http://127.0.0.1:$NGINX_PORT"
        REPS=1 measure "nginx-plaintext-$round" "http://127.0.0.1:$NGINX_PORT/plaintext" >/dev/null
        NGINX_RATES+=("$(awk '/Requests\/sec/ {print $2}' "$OUT/nginx-plaintext-$round-1.txt")")
        stop_server
        taskset -c 0 .build/release/HTTPServerBench --port "$PORT" >>"$OUT/bare-server.log" 2>&1 &
        SERVER_PID=$!
        wait_healthy "$BASE"
        REPS=1 measure "ours-plaintext-$round" "$BASE/plaintext" >/dev/null
        BARE_RATES+=("$(awk '/Requests\/sec/ {print $2}' "$OUT/ours-plaintext-$round-1.txt")")
        stop_server
    done
    median() { printf '%s\n' "$@" | sort -g | sed -n "$(( ($# + 1) / 2 ))p"; }
    echo "nginx-plaintext $(median "${NGINX_RATES[@]}") (rounds: ${NGINX_RATES[*]})" | tee -a "$OUT/results.txt"
    echo "ours-plaintext $(median "${BARE_RATES[@]}") (rounds: ${BARE_RATES[*]})" | tee -a "$OUT/results.txt"
fi
if [[ -n ${ONLY_PLAINTEXT:-} ]]; then
    echo "results in $OUT/results.txt"
    exit 0
fi

# --- ours ------------------------------------------------------------------------------------
if [[ -z ${BIN:-} ]]; then # BIN: another build to measure (an older one, for a before/after)
    swift build -c release --product weatherboard >/dev/null
    BIN=.build/release/weatherboard
fi
SERVE_ARGS=(serve --port "$PORT" --db "$WORK/ours.sqlite" --weather demo --log-level "${LOG_LEVEL:-warning}"
            --seconds-between-posts 0 --posts-per-day 100000000 --sign-ups-per-hour 1000000 ${EXTRA_ARGS:-})
taskset -c 0 "$BIN" "${SERVE_ARGS[@]}" >"$OUT/ours-server.log" 2>&1 &
SERVER_PID=$!
wait_healthy "$BASE" 300

# Seoul's board through the forms: 20 people, 10 posts each (scripts/seed-board.sh).
source scripts/seed-board.sh
seed_board() {
SEED_DB="$WORK/ours.sqlite" seed_members 10
echo "seeded: $(curl -fsS "$BASE/city/seoul" | grep -c 'class="post') posts on the first page of Seoul's board"
}
seed_board

measure ours-city-anonymous "$BASE/city/seoul"
measure ours-city-signed-in "$BASE/city/seoul" -H "Cookie: $COOKIE"
FETCH_METADATA=0 measure ours-city-signed-in-without-fetch-metadata "$BASE/city/seoul" -H "Cookie: $COOKIE"
measure ours-home "$BASE/"
SESSIONS="$WORK/sessions.tsv" SLUG=seoul POST_PCT=10 measure ours-mix "$BASE" -s scripts/post-mix-signed-in.lua
stop_server

# --- ours under real traffic (issue 24) ----------------------------------------------------------
# City slugs Zipf-distributed (s = 1) over the 2,000 largest cities, gzip on every request, 20 %
# signed in with the 20 members above, forecasts fresh for 1 minute (about the refresh rate of a
# site whose visitors open 30,000 cities each half hour), posts on the 50 largest boards, every
# city opened once before. The fetch budgets are lifted: one client opens every city here.
REAL_ARGS=("${SERVE_ARGS[@]}" --weather-fresh-minutes 1 --weather-fetches-per-minute 100000000
           --weather-cold-fetches-per-client 100000000 --weather-cold-fetches-per-hour 100000000)
sqlite3 "$WORK/ours.sqlite" "SELECT slug FROM cities ORDER BY population DESC, id LIMIT 2000" >"$WORK/slugs.txt"
seed_real_traffic() { # posts on the 50 largest boards (POSTS_PER_BOARD each, by the members above), every city opened once
    seed_largest_boards "${POSTS_PER_BOARD:-3}"
    while read -r slug; do printf 'url = "%s"\noutput = "/dev/null"\n' "$BASE/city/$slug"; done <"$WORK/slugs.txt" >"$WORK/every-city.curl"
    curl -fsS -H "Accept-Encoding: gzip" -K "$WORK/every-city.curl"
}
if [[ -z ${SKIP_REAL:-} ]]; then
    taskset -c 0 "$BIN" "${REAL_ARGS[@]}" >"$OUT/ours-real-server.log" 2>&1 &
    SERVER_PID=$!
    wait_healthy "$BASE" 300
    seed_real_traffic
    SLUGS="$WORK/slugs.txt" SESSIONS="$WORK/sessions.tsv" SIGNED_IN_PCT=20 measure ours-real-traffic "$BASE" -s scripts/city-mix-zipf.lua
    # The same traffic from clients that send no Fetch Metadata (older browsers, scripts with a session).
    FETCH_METADATA=0 SLUGS="$WORK/slugs.txt" SESSIONS="$WORK/sessions.tsv" SIGNED_IN_PCT=20 \
        measure ours-real-traffic-without-fetch-metadata "$BASE" -s scripts/city-mix-zipf.lua
    stop_server
fi

# --- instructions per request ----------------------------------------------------------------
if [[ -z ${SKIP_CALLGRIND:-} ]] && command -v valgrind >/dev/null; then
    cp "$BIN" "$BIN-stripped" && strip --strip-debug "$BIN-stripped" # symbols kept, for callgrind_annotate
    valgrind --tool=callgrind --callgrind-out-file="$WORK/callgrind.%p" "$BIN-stripped" "${SERVE_ARGS[@]}" \
        --weather-fetches-per-minute 100000000 --weather-cold-fetches-per-client 100000000 --weather-cold-fetches-per-hour 100000000 \
        >"$OUT/callgrind-server.log" 2>&1 &
    SERVER_PID=$!
    wait_healthy "$BASE" 600
    per_request() { # NAME REQUESTS: dumps the counts since the last zeroing and reports them per request
        callgrind_control -d "$SERVER_PID" >/dev/null
        sleep 1
        local dump total
        dump=$(ls -t "$WORK"/callgrind.* | head -1)
        total=$(awk '/^(summary|totals):/ {print $2; exit}' "$dump")
        [[ -z ${KEEP_DUMPS:-} ]] || cp "$dump" "$OUT/callgrind-$1.out"
        echo "instructions $1 $(( total / $2 ))" | tee -a "$OUT/results.txt"
    }
    count() { # NAME URL [curl args...]
        local name=$1 url=$2; shift 2
        for _ in $(seq 1 20); do curl -fsS -o /dev/null -H "Sec-Fetch-Site: same-origin" "$@" "$url"; done # warm-up
        callgrind_control -z "$SERVER_PID" >/dev/null
        for _ in $(seq 1 "$CALLGRIND_REQUESTS"); do curl -fsS -o /dev/null -H "Sec-Fetch-Site: same-origin" "$@" "$url"; done
        per_request "$name" "$CALLGRIND_REQUESTS"
    }
    count city-anonymous "$BASE/city/seoul"
    count city-signed-in "$BASE/city/seoul" -H "Cookie: $COOKIE"
    count home "$BASE/"
    # Issue 24's two: the signed-in page over 40 cities with gzip, and the anonymous page whose
    # kept copy expired (30 s) while its forecast is in memory, over the same 40, with gzip.
    head -40 "$WORK/slugs.txt" | while read -r slug; do printf 'url = "%s"\noutput = "/dev/null"\n' "$BASE/city/$slug"; done >"$WORK/forty.curl"
    count_forty() { # NAME [curl args...]: one request to each of the 40 cities after a warm-up
        local name=$1; shift
        set -- -H "Sec-Fetch-Site: same-origin" "$@"
        # The weather parts are rendered again at every five-minute mark (WeatherFragments.step):
        # start where warm-up, wait and measured pass all fit before the next one, or a run that
        # crosses it counts 40 weather renders into the pages it measures.
        if [[ -n ${EXPIRE:-} ]]; then while (( $(date +%s) % 300 > 150 )); do sleep 5; done; fi
        # Twice: the first pass may render before a city's forecast arrives (under valgrind its
        # first fetch outlasts the page's wait); the second renders with it.
        curl -fsS "$@" -K "$WORK/forty.curl"
        sleep 2
        curl -fsS "$@" -K "$WORK/forty.curl"
        [[ -z ${EXPIRE:-} ]] || sleep 31 # past the page cache's 30 s
        callgrind_control -z "$SERVER_PID" >/dev/null
        for _ in $(seq 1 "${ROUNDS:-5}"); do curl -fsS "$@" -K "$WORK/forty.curl"; done
        per_request "$name" $(( 40 * ${ROUNDS:-5} ))
    }
    count_forty city-signed-in-40-cities-gzip -H "Accept-Encoding: gzip" -H "Cookie: $COOKIE"
    EXPIRE=1 ROUNDS=1 count_forty city-anonymous-expired-40-cities-gzip -H "Accept-Encoding: gzip"
    # Issue 38: the same member's page with gzip over the 40 cities, opened for the first, second
    # and third time within one minute, after the passes above. With POSTS_PER_BOARD=20 the
    # member has a post on each of those boards: their own view of each is kept until the board
    # changes (a board reads the same at every minute), so the first opening of a minute costs
    # what the next ones do.
    count_openings() { # [SUFFIX CURL-ARGS...]: with Sec-Fetch-Site unless other arguments are given
        local suffix=${1:-}; shift || true
        (( $# > 0 )) || set -- -H "Sec-Fetch-Site: same-origin"
        while (( $(date +%s) % 60 > 3 )); do sleep 1; done
        local started=$SECONDS
        for opening in first second third; do
            callgrind_control -z "$SERVER_PID" >/dev/null
            curl -fsS "$@" -H "Accept-Encoding: gzip" -H "Cookie: $COOKIE" -K "$WORK/forty.curl"
            per_request "city-signed-in-40-cities-gzip-$opening-opening$suffix" 40
        done
        (( SECONDS - started < 57 )) || echo "warning: the three openings took $(( SECONDS - started )) s: a minute turned" | tee -a "$OUT/results.txt"
    }
    count_openings
    # Issue 64: the same openings from a client that sends no Fetch Metadata (an old browser).
    count_openings -without-fetch-metadata -H "Accept: text/html"
    # Then someone else posts on each of those boards, and a member whose post there is still on
    # the first page (person 20 wrote each board's newest) opens them: every board changed, so
    # the opening reads its rows again and renders and deflates the member's own view of each
    # (what a member pays once after each change to a board they post on; kept until the next).
    count_after_a_new_post() {
        local cookie reader
        cookie=$(sed -n 2p "$WORK/sessions.tsv")
        reader=$(sed -n 20p "$WORK/sessions.tsv")
        while read -r slug; do
            curl -fsS -o /dev/null -H "Cookie: $cookie" -H "Sec-Fetch-Site: same-origin" \
                --data-urlencode "body=Meanwhile in $slug: the wind turned (run $RANDOM)" "$BASE/city/$slug/posts"
        done < <(head -40 "$WORK/slugs.txt")
        callgrind_control -z "$SERVER_PID" >/dev/null
        curl -fsS -H "Sec-Fetch-Site: same-origin" -H "Accept-Encoding: gzip" -H "Cookie: $reader" -K "$WORK/forty.curl"
        per_request "city-signed-in-40-cities-gzip-after-a-new-post" 40
    }
    count_after_a_new_post
    # Then a conversation under every post of the first page: 3 replies (people 2–4) and 2
    # agreements (people 5 and 6) each, through the forms, and the signed-in page again.
    seed_conversation
    echo "conversation: $(curl -fsS -H "Cookie: $COOKIE" "$BASE/city/seoul" | grep -o 'data-parent-id=' | wc -l) replies shown on the first page" | tee -a "$OUT/results.txt"
    count city-signed-in-with-replies "$BASE/city/seoul" -H "Cookie: $COOKIE"
    count city-anonymous-with-replies "$BASE/city/seoul"
    stop_server
    rm -f "$BIN-stripped"
fi

# --- ours: two nodes on PostgreSQL behind nginx -------------------------------------------------
if [[ -n ${CLUSTER:-} ]]; then
    # Outside $WORK (mode 0700): PostgreSQL runs as its own user and must reach its folder.
    CLUSTER_DIR=$(mktemp -u /tmp/weatherboard-cluster.XXXXXX)
    PORT=$PORT BIN=$BIN NODE_PREFIX="taskset -c 0" NODE_ARGS="${SERVE_ARGS[*]:5}" scripts/cluster.sh start "$CLUSTER_DIR" >"$OUT/cluster.log" 2>&1
    seed_board # (replaces $COOKIE and the sessions file with the cluster's: this runs last)
    measure cluster-city-anonymous "$BASE/city/seoul"
    measure cluster-city-signed-in "$BASE/city/seoul" -H "Cookie: $COOKIE"
    SESSIONS="$WORK/sessions.tsv" SLUG=seoul POST_PCT=10 measure cluster-mix "$BASE" -s scripts/post-mix-signed-in.lua
    scripts/cluster.sh stop "$CLUSTER_DIR"
    CLUSTER_DIR=""
fi

echo "results in $OUT/results.txt"
