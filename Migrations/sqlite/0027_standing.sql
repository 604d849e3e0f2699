-- Standing that is earned (issue 45 #2): a member's level (0-2), kept on the account and
-- computed again where what it counts is written (docs/standing.md); a moderator may set it by
-- hand (level_set overrides until cleared), logged. A report carries its reporter's weight then.
ALTER TABLE users ADD COLUMN level INTEGER NOT NULL DEFAULT 0 CHECK (level BETWEEN 0 AND 2);
ALTER TABLE users ADD COLUMN level_set INTEGER CHECK (level_set BETWEEN 0 AND 2);
ALTER TABLE users ADD COLUMN visit_days INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN last_visit_day INTEGER;
-- Reports made before levels count as a level 1 member's.
ALTER TABLE reports ADD COLUMN weight INTEGER NOT NULL DEFAULT 2;

-- The log's actions gain the levels a moderator sets; SQLite changes a CHECK by rebuilding.
CREATE TABLE moderation_log_new (
    id              INTEGER PRIMARY KEY,
    admin_id        INTEGER REFERENCES users(id) ON DELETE SET NULL,
    admin_username  TEXT    NOT NULL,
    action          TEXT    NOT NULL CHECK (action IN ('restore', 'remove', 'ban', 'unban', 'level_0', 'level_1', 'level_2', 'level_earned')),
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
