-- Photos with posts (issue 44): each written anew from the upload (a 1600-px and a 480-px WebP
-- and a JPEG, no metadata), kept here so that every node serves every photo, addressed by the
-- hash of its large WebP. `difference_hash` is what it looks like (PhotoLikeness); a removed
-- photo's is remembered in `removed_photos`, and the same picture is refused again.
CREATE TABLE photos (
    hash            TEXT    PRIMARY KEY,
    user_id         INTEGER REFERENCES users(id) ON DELETE SET NULL,
    width           INTEGER NOT NULL,
    height          INTEGER NOT NULL,
    small_width     INTEGER NOT NULL,
    bytes           INTEGER NOT NULL,
    difference_hash INTEGER NOT NULL,
    created_at      REAL    NOT NULL,
    large_webp      BLOB    NOT NULL,
    small_webp      BLOB    NOT NULL,
    jpeg            BLOB    NOT NULL
) STRICT;
-- The limits' sums read these alone, never a row with its pictures.
CREATE INDEX photos_user ON photos(user_id, created_at, bytes);
CREATE INDEX photos_bytes ON photos(bytes);

-- A post's photo, its description, and who sees it unblurred: 'shown' (its author had standing,
-- or three members with standing agreed), 'waiting' (for a moderator or those agreements),
-- 'reported' (blurred for all but its author until a moderator decides), 'approved'.
ALTER TABLE posts ADD COLUMN photo_hash TEXT REFERENCES photos(hash);
ALTER TABLE posts ADD COLUMN photo_alt TEXT;
ALTER TABLE posts ADD COLUMN photo_state TEXT CHECK (photo_state IN ('shown', 'waiting', 'reported', 'approved'));
CREATE INDEX posts_photo ON posts(photo_hash) WHERE photo_hash IS NOT NULL;
CREATE INDEX posts_photo_waiting ON posts(photo_state) WHERE photo_state IN ('waiting', 'reported');

CREATE TABLE removed_photos (
    id              INTEGER PRIMARY KEY,
    difference_hash INTEGER NOT NULL,
    removed_at      REAL    NOT NULL
) STRICT;

-- The log's actions gain a moderator's approval and removal of a photo; SQLite changes a CHECK by rebuilding.
CREATE TABLE moderation_log_new (
    id              INTEGER PRIMARY KEY,
    admin_id        INTEGER REFERENCES users(id) ON DELETE SET NULL,
    admin_username  TEXT    NOT NULL,
    action          TEXT    NOT NULL CHECK (action IN ('restore', 'remove', 'ban', 'unban', 'level_0', 'level_1', 'level_2', 'level_earned', 'photo_approve', 'photo_remove')),
    post_id         INTEGER,
    user_id         INTEGER,
    username        TEXT,
    city_id         INTEGER REFERENCES cities(id),
    reason          TEXT    NOT NULL DEFAULT '',
    created_at      REAL    NOT NULL
) STRICT;
INSERT INTO moderation_log_new (id, admin_id, admin_username, action, post_id, user_id, username, city_id, reason, created_at)
    SELECT id, admin_id, admin_username, action, post_id, user_id, username, city_id, reason, created_at FROM moderation_log;
DROP TABLE moderation_log;
ALTER TABLE moderation_log_new RENAME TO moderation_log;
CREATE INDEX moderation_log_created ON moderation_log(created_at DESC);
CREATE INDEX moderation_log_city ON moderation_log(city_id, created_at DESC);
CREATE TRIGGER moderation_log_append_only_update BEFORE UPDATE ON moderation_log
WHEN NOT (OLD.admin_id IS NOT NULL AND NEW.admin_id IS NULL
          AND NEW.id = OLD.id AND NEW.admin_username = OLD.admin_username AND NEW.action = OLD.action
          AND NEW.post_id IS OLD.post_id AND NEW.user_id IS OLD.user_id AND NEW.username IS OLD.username
          AND NEW.city_id IS OLD.city_id AND NEW.reason = OLD.reason AND NEW.created_at = OLD.created_at)
BEGIN SELECT RAISE(ABORT, 'the moderation log is append-only'); END;
CREATE TRIGGER moderation_log_append_only_delete BEFORE DELETE ON moderation_log
BEGIN SELECT RAISE(ABORT, 'the moderation log is append-only'); END;
