-- PostgreSQL version of sqlite/0012. A signed-in reader's own marks on a board page (what they
-- reported and agreed with, and whether a post of theirs in the city is hidden by reports) are
-- read in one statement beside the board as everyone sees it: each part walks the reader's own rows.
CREATE INDEX reactions_user ON reactions(user_id, post_id);
CREATE INDEX reports_reporter_post ON reports(reporter_id, post_id);
CREATE INDEX posts_hidden_author ON posts(user_id, city_id) WHERE hidden_at IS NOT NULL AND removed_at IS NULL;
