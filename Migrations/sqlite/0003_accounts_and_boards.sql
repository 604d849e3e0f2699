-- People, their sessions, the city boards, blocks, reports, bookmarks and rate-limit events.
CREATE TABLE users (
    id            INTEGER PRIMARY KEY,
    username      TEXT    NOT NULL,
    username_key  TEXT    NOT NULL UNIQUE,          -- lowercased: usernames are unique case-insensitively
    display_name  TEXT    NOT NULL,
    password_hash TEXT    NOT NULL,                 -- scrypt$N$r$p$salt$hash (base64)
    role          TEXT    NOT NULL DEFAULT 'user' CHECK (role IN ('user', 'admin')),
    created_at    REAL    NOT NULL
) STRICT;

-- A session is stored only as the SHA-256 of its cookie token; it carries its CSRF secret.
CREATE TABLE sessions (
    token_hash    TEXT    PRIMARY KEY,
    user_id       INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    csrf_secret   TEXT    NOT NULL,
    created_at    REAL    NOT NULL,
    last_seen_at  REAL    NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX sessions_user ON sessions(user_id);

-- A post whose author deleted their account keeps its text with user_id NULL ("deleted user").
CREATE TABLE posts (
    id          INTEGER PRIMARY KEY,
    city_id     INTEGER NOT NULL REFERENCES cities(id),
    user_id     INTEGER REFERENCES users(id) ON DELETE SET NULL,
    body        TEXT    NOT NULL CHECK (length(body) BETWEEN 1 AND 500),
    created_at  REAL    NOT NULL,
    edited_at   REAL,
    hidden_at   REAL                                 -- hidden by reports, pending review
) STRICT;
CREATE INDEX posts_city ON posts(city_id, id DESC);
CREATE INDEX posts_user ON posts(user_id, id DESC);

-- Blocking is idempotent: the primary key makes a second block a no-op.
CREATE TABLE blocks (
    blocker_id  INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    blocked_id  INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at  REAL    NOT NULL,
    PRIMARY KEY (blocker_id, blocked_id),
    CHECK (blocker_id <> blocked_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX blocks_blocked ON blocks(blocked_id);

-- One report per person per post; its outcome is filled in by moderation.
CREATE TABLE reports (
    id           INTEGER PRIMARY KEY,
    post_id      INTEGER NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
    reporter_id  INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    reason       TEXT    NOT NULL CHECK (reason IN ('spam', 'harassment', 'off_topic', 'personal_info', 'illegal', 'other')),
    detail       TEXT    NOT NULL DEFAULT '' CHECK (length(detail) <= 1000),
    created_at   REAL    NOT NULL,
    outcome      TEXT    NOT NULL DEFAULT 'pending' CHECK (outcome IN ('pending', 'removed', 'no_violation')),
    resolved_at  REAL,
    UNIQUE (post_id, reporter_id)
) STRICT;
CREATE INDEX reports_reporter ON reports(reporter_id, created_at);

CREATE TABLE bookmarks (
    user_id     INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    city_id     INTEGER NOT NULL REFERENCES cities(id),
    created_at  REAL    NOT NULL,
    PRIMARY KEY (user_id, city_id)
) STRICT, WITHOUT ROWID;

-- Attempts counted by rate limits (sign-in per account and per address, sign-up per address).
CREATE TABLE rate_events (
    bucket  TEXT NOT NULL,
    at      REAL NOT NULL
) STRICT;
CREATE INDEX rate_events_bucket ON rate_events(bucket, at);
