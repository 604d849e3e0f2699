-- What an account's deletion must not undo.
-- A block: the blocker keeps not seeing the deleted person's posts (which stay as "deleted
-- user"), recorded per post when the account goes.
CREATE TABLE hidden_posts (
    viewer_id  INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    post_id    INTEGER NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
    PRIMARY KEY (viewer_id, post_id)
) STRICT, WITHOUT ROWID;

-- A username: reserved once its account is deleted (nobody can sign up as a deleted person,
-- nor a banned person come back under their name with an empty history).
CREATE TABLE retired_usernames (
    username_key  TEXT PRIMARY KEY,
    retired_at    REAL NOT NULL
) STRICT, WITHOUT ROWID;

-- A ban history: copied from the deleted account's bans, for moderators.
CREATE TABLE retired_bans (
    id            INTEGER PRIMARY KEY,
    username_key  TEXT NOT NULL,
    reason        TEXT NOT NULL,
    created_at    REAL NOT NULL,
    until         REAL,
    lifted_at     REAL
) STRICT;
CREATE INDEX retired_bans_username ON retired_bans(username_key);
