-- Moderation: removals, bans and the append-only log of every decision.
ALTER TABLE posts ADD COLUMN removed_at REAL;
ALTER TABLE posts ADD COLUMN removed_reason TEXT;

CREATE TABLE bans (
    id          INTEGER PRIMARY KEY,
    user_id     INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    admin_id    INTEGER REFERENCES users(id) ON DELETE SET NULL,
    reason      TEXT    NOT NULL,
    created_at  REAL    NOT NULL,
    until       REAL,                                -- NULL: permanent
    lifted_at   REAL
) STRICT;
CREATE INDEX bans_user ON bans(user_id, created_at DESC);

CREATE TABLE moderation_log (
    id              INTEGER PRIMARY KEY,
    admin_id        INTEGER REFERENCES users(id) ON DELETE SET NULL,
    admin_username  TEXT    NOT NULL,
    action          TEXT    NOT NULL CHECK (action IN ('restore', 'remove', 'ban', 'unban')),
    post_id         INTEGER,
    user_id         INTEGER,
    username        TEXT,                             -- the target person, kept if they leave
    city_id         INTEGER REFERENCES cities(id),
    reason          TEXT    NOT NULL DEFAULT '',
    created_at      REAL    NOT NULL
) STRICT;
CREATE INDEX moderation_log_created ON moderation_log(created_at DESC);
CREATE INDEX moderation_log_city ON moderation_log(city_id, created_at DESC);

CREATE TRIGGER moderation_log_append_only_update BEFORE UPDATE ON moderation_log
BEGIN SELECT RAISE(ABORT, 'the moderation log is append-only'); END;
CREATE TRIGGER moderation_log_append_only_delete BEFORE DELETE ON moderation_log
BEGIN SELECT RAISE(ABORT, 'the moderation log is append-only'); END;
