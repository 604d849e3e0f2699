-- PostgreSQL version of sqlite/0023: a trigram index (pg_trgm, a trusted extension shipped with
-- PostgreSQL) over every post's text in lower case, which `lower(body) LIKE` searches use.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX posts_search ON posts USING gin (lower(body) gin_trgm_ops);
