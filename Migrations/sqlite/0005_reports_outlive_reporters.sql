-- Reports outlive the accounts that made them: a reporter's deletion sets reporter_id to NULL
-- instead of deleting the report, so throwaway accounts cannot hide a post and then take it out
-- of the moderators' queue by deleting themselves. Each report also keeps the text it was
-- about (reported_body), whatever happens to the post afterwards.
CREATE TABLE reports_new (
    id             INTEGER PRIMARY KEY,
    post_id        INTEGER NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
    reporter_id    INTEGER REFERENCES users(id) ON DELETE SET NULL,
    reason         TEXT    NOT NULL CHECK (reason IN ('spam', 'harassment', 'off_topic', 'personal_info', 'illegal', 'other')),
    detail         TEXT    NOT NULL DEFAULT '' CHECK (length(detail) <= 1000),
    created_at     REAL    NOT NULL,
    outcome        TEXT    NOT NULL DEFAULT 'pending' CHECK (outcome IN ('pending', 'removed', 'no_violation')),
    resolved_at    REAL,
    reported_body  TEXT,
    UNIQUE (post_id, reporter_id)
) STRICT;
INSERT INTO reports_new (id, post_id, reporter_id, reason, detail, created_at, outcome, resolved_at, reported_body)
    SELECT r.id, r.post_id, r.reporter_id, r.reason, r.detail, r.created_at, r.outcome, r.resolved_at, p.body
    FROM reports r JOIN posts p ON p.id = r.post_id;
DROP TABLE reports;
ALTER TABLE reports_new RENAME TO reports;
CREATE INDEX reports_reporter ON reports(reporter_id, created_at);
CREATE INDEX reports_post ON reports(post_id, outcome);
