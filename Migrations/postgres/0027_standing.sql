-- PostgreSQL version of sqlite/0027: standing that is earned.
ALTER TABLE users ADD COLUMN level INTEGER NOT NULL DEFAULT 0 CHECK (level BETWEEN 0 AND 2);
ALTER TABLE users ADD COLUMN level_set INTEGER CHECK (level_set BETWEEN 0 AND 2);
ALTER TABLE users ADD COLUMN visit_days INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN last_visit_day INTEGER;
ALTER TABLE reports ADD COLUMN weight INTEGER NOT NULL DEFAULT 2;
ALTER TABLE moderation_log DROP CONSTRAINT moderation_log_action_check;
ALTER TABLE moderation_log ADD CONSTRAINT moderation_log_action_check
    CHECK (action IN ('restore', 'remove', 'ban', 'unban', 'level_0', 'level_1', 'level_2', 'level_earned'));
