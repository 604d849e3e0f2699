-- The admin header counts the posts whose reports wait (issue 45 #6) on every page an admin
-- opens: from the pending reports alone, not every report ever made.
CREATE INDEX reports_pending ON reports(post_id) WHERE outcome = 'pending';
