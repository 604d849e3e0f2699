-- PostgreSQL version of sqlite/0030: the site's own account, and one pinned thread per warning and city.
ALTER TABLE users ADD COLUMN is_system INTEGER NOT NULL DEFAULT 0 CHECK (is_system IN (0, 1));
ALTER TABLE posts ADD COLUMN warning_id TEXT;
CREATE UNIQUE INDEX posts_warning_thread ON posts (city_id, warning_id) WHERE warning_id IS NOT NULL;
