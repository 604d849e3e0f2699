-- What a post's write counts of its author (the last post, the day's posts, recent texts, past
-- removals) read through these, not through every post the author ever wrote: a prolific
-- member's post costs what their day holds.
CREATE INDEX posts_user_time ON posts(user_id, created_at);
CREATE INDEX posts_user_removed ON posts(user_id, removed_at) WHERE removed_at IS NOT NULL;
