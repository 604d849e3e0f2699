-- Replies, one level: a reply is a post (same text rules, limits, reports, moderation, account
-- deletion) that answers another post. It goes with the post it answers.
ALTER TABLE posts ADD COLUMN parent_id INTEGER REFERENCES posts(id) ON DELETE CASCADE;
CREATE INDEX posts_parent ON posts(parent_id, id) WHERE parent_id IS NOT NULL;

-- "Agree" (공감), one per person per post or reply; counted, never listed by name.
CREATE TABLE reactions (
    post_id     INTEGER NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
    user_id     INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at  REAL    NOT NULL,
    PRIMARY KEY (post_id, user_id)
) STRICT, WITHOUT ROWID;

-- A board lists a city's posts without their replies.
CREATE INDEX posts_city_top ON posts(city_id, id DESC) WHERE parent_id IS NULL;
