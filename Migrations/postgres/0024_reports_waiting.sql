-- PostgreSQL version of sqlite/0024: pending reports, for the admin header's count.
CREATE INDEX reports_pending ON reports(post_id) WHERE outcome = 'pending';
