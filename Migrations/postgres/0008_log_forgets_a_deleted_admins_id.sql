-- PostgreSQL version of sqlite/0008: the log may forget a deleted admin's account id (their name
-- stays in admin_username); nothing else about an entry may change, and nothing may be deleted.
CREATE OR REPLACE FUNCTION moderation_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.admin_id IS NOT NULL AND NEW.admin_id IS NULL
       AND (to_jsonb(NEW) - 'admin_id') = (to_jsonb(OLD) - 'admin_id') THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'the moderation log is append-only' USING ERRCODE = 'integrity_constraint_violation';
END;
$$;
