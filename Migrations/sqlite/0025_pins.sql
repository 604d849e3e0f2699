-- Pinned posts (issue 45 #4): a moderator pins up to two posts a board, each until a time;
-- while pinned they lead the board for everyone. The moment is kept on the post itself.
ALTER TABLE posts ADD COLUMN pinned_until REAL;
CREATE INDEX posts_pinned ON posts(city_id, pinned_until) WHERE pinned_until IS NOT NULL;
