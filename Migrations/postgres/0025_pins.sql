-- PostgreSQL version of sqlite/0025: pinned posts.
ALTER TABLE posts ADD COLUMN pinned_until DOUBLE PRECISION;
CREATE INDEX posts_pinned ON posts(city_id, pinned_until) WHERE pinned_until IS NOT NULL;
