# scripts/seed-board.sh — sourced by the bench scripts (needs BASE and WORK set, curl).
# Seoul's board through the forms, as people would fill it.

# seed_members POSTS_EACH: 20 members sign up and post POSTS_EACH posts each on Seoul's board;
# their session cookies go to $WORK/sessions.tsv (line N: member N), COOKIE is member 1's.
# The posts carry a link, which a new member may not post (docs/standing.md): an admin made with
# `$BIN create-admin` on SEED_DB (the serving database) first sets each one's level to a member's.
seed_members() {
    local posts=$1 person post jar admin="$WORK/admin.jar"
    : >"$WORK/sessions.tsv"
    WEATHERBOARD_ADMIN_PASSWORD="a long bench admin password" "$BIN" create-admin benchadmin --db "$SEED_DB" >/dev/null
    curl -fsS -o /dev/null -c "$admin" -b "$admin" -H "Sec-Fetch-Site: same-origin" --data-urlencode "username=benchadmin" \
        --data-urlencode "password=a long bench admin password" "$BASE/login"
    for person in $(seq 1 20); do
        jar="$WORK/person-$person.jar"
        curl -fsS -o /dev/null -c "$jar" -b "$jar" -H "Sec-Fetch-Site: same-origin" --data-urlencode "username=bench$person" \
            --data-urlencode "display_name=Bench person $person" --data-urlencode "password=a long bench password $person" "$BASE/signup"
        curl -fsS -o /dev/null -b "$admin" -H "Sec-Fetch-Site: same-origin" --data-urlencode "level=1" \
            --data-urlencode "reason=A member of good standing (bench)" "$BASE/admin/users/bench$person/level"
        for post in $(seq 1 "$posts"); do
            curl -fsS -o /dev/null -c "$jar" -b "$jar" -H "Sec-Fetch-Site: same-origin" \
                --data-urlencode "body=Post $post by person $person: drizzle by the river, see https://example.com/$person/$post" "$BASE/city/seoul/posts"
        done
        printf 'session=%s\n' "$(awk '$6 == "session" {print $7}' "$jar")" >>"$WORK/sessions.tsv"
    done
    COOKIE=$(head -1 "$WORK/sessions.tsv" | cut -f1)
}

# seed_conversation: under every post of the board's first page (as member 1 sees it), 3 replies
# (members 2–4) and 2 agreements (members 5 and 6; refused with 403 on their own post).
seed_conversation() {
    local id person cookie code
    for id in $(curl -fsS -H "Cookie: $COOKIE" "$BASE/city/seoul" | grep -o 'data-post-id="[0-9]*" data-author' | grep -o '[0-9]\+'); do
        for person in 2 3 4 5 6; do
            IFS=$'\t' read -r cookie < <(sed -n "${person}p" "$WORK/sessions.tsv")
            if (( person <= 4 )); then
                curl -fsS -o /dev/null -H "Cookie: $cookie" -H "Sec-Fetch-Site: same-origin" \
                    --data-urlencode "body=Reply $person to $id: same here, the drizzle stopped at six" "$BASE/posts/$id/replies"
            else
                code=$(curl -sS -o /dev/null -w '%{http_code}' -H "Cookie: $cookie" -H "Sec-Fetch-Site: same-origin" --data "" "$BASE/posts/$id/react")
                [[ $code == 303 || $code == 403 ]] || { echo "agreeing answered $code" >&2; return 1; }
            fi
        done
    done
}

# POSTS posts on each of the 50 first boards of $WORK/slugs.txt (the largest cities), one each by
# the members of $WORK/sessions.tsv in turn: boards shaped like real ones, posted on by the
# members who read them.
seed_largest_boards() {
    local posts=$1 person=0 slug cookie
    for slug in $(head -50 "$WORK/slugs.txt"); do
        for _ in $(seq 1 "$posts"); do
            person=$(( person % 20 + 1 ))
            IFS=$'\t' read -r cookie < <(sed -n "${person}p" "$WORK/sessions.tsv")
            curl -fsS -o /dev/null -H "Cookie: $cookie" -H "Sec-Fetch-Site: same-origin" \
                --data-urlencode "body=What is it like in $slug right now? Person $person asks (run $RANDOM)" "$BASE/city/$slug/posts"
        done
    done
}
