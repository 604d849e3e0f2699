-- A post's number is never given again (issue 45 #5): without AUTOINCREMENT, SQLite hands the
-- newest post's id to the next post once it is deleted, so a saved link or a replayed live
-- event could name a stranger's post. Every post keeps its id; the sequence starts at the
-- highest one kept (numbers of posts deleted before this migration cannot be known).
CREATE TABLE posts_new (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    city_id         INTEGER NOT NULL REFERENCES cities(id),
    user_id         INTEGER REFERENCES users(id) ON DELETE SET NULL,
    body            TEXT    NOT NULL CHECK (length(body) BETWEEN 1 AND 500),
    created_at      REAL    NOT NULL,
    edited_at       REAL,
    hidden_at       REAL,
    removed_at      REAL,
    removed_reason  TEXT,
    parent_id       INTEGER REFERENCES posts(id) ON DELETE CASCADE,
    sky             TEXT    CHECK (sky IN ('clear', 'clouds', 'fog', 'rain', 'snow', 'storm')),
    feels           TEXT    CHECK (feels IN ('warmer', 'same', 'colder'))
) STRICT;
INSERT INTO posts_new (id, city_id, user_id, body, created_at, edited_at, hidden_at, removed_at, removed_reason, parent_id, sky, feels)
    SELECT id, city_id, user_id, body, created_at, edited_at, hidden_at, removed_at, removed_reason, parent_id, sky, feels FROM posts;
DROP TABLE posts;
ALTER TABLE posts_new RENAME TO posts;
CREATE INDEX posts_city ON posts(city_id, id DESC);
CREATE INDEX posts_user ON posts(user_id, id DESC);
CREATE INDEX posts_parent ON posts(parent_id, id) WHERE parent_id IS NOT NULL;
CREATE INDEX posts_city_top ON posts(city_id, id DESC) WHERE parent_id IS NULL;
CREATE INDEX posts_observations ON posts(city_id, created_at) WHERE sky IS NOT NULL OR feels IS NOT NULL;
CREATE INDEX posts_hidden_author ON posts(user_id, city_id) WHERE hidden_at IS NOT NULL AND removed_at IS NULL;
