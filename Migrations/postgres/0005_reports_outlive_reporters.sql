-- PostgreSQL 15 version of SQLite migration 0005: reports outlive their reporters and keep the text they were about.
-- SQLite had to rebuild the table; here ALTER TABLE keeps the rows, constraints and reports_reporter index.
ALTER TABLE reports
    ALTER COLUMN reporter_id DROP NOT NULL,
    DROP CONSTRAINT reports_reporter_id_fkey,
    ADD CONSTRAINT reports_reporter_id_fkey FOREIGN KEY (reporter_id) REFERENCES users(id) ON DELETE SET NULL,
    ADD COLUMN reported_body TEXT;
UPDATE reports r SET reported_body = p.body FROM posts p WHERE p.id = r.post_id;
CREATE INDEX reports_post ON reports(post_id, outcome);
