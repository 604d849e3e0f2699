-- An admin's account can be deleted: the log then forgets their account id (the foreign key's
-- ON DELETE SET NULL, an UPDATE the append-only trigger refused, so the deletion failed) and keeps
-- their name in admin_username. Nothing else about an entry may change.
DROP TRIGGER moderation_log_append_only_update;
CREATE TRIGGER moderation_log_append_only_update BEFORE UPDATE ON moderation_log
WHEN NOT (OLD.admin_id IS NOT NULL AND NEW.admin_id IS NULL
          AND NEW.id = OLD.id AND NEW.admin_username = OLD.admin_username AND NEW.action = OLD.action
          AND NEW.post_id IS OLD.post_id AND NEW.user_id IS OLD.user_id AND NEW.username IS OLD.username
          AND NEW.city_id IS OLD.city_id AND NEW.reason = OLD.reason AND NEW.created_at = OLD.created_at)
BEGIN SELECT RAISE(ABORT, 'the moderation log is append-only'); END;
