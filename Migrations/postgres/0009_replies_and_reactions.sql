-- PostgreSQL version of sqlite/0009: replies (posts answering a post) and reactions.
ALTER TABLE posts ADD COLUMN parent_id BIGINT REFERENCES posts(id) ON DELETE CASCADE;
CREATE INDEX posts_parent ON posts(parent_id, id) WHERE parent_id IS NOT NULL;

CREATE TABLE reactions (
    post_id     BIGINT           NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
    user_id     BIGINT           NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at  DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (post_id, user_id)
);

CREATE INDEX posts_city_top ON posts(city_id, id DESC) WHERE parent_id IS NULL;
