-- What a member is told: a reply to their post, a mention, agreement with their post (one row
-- per post while unread, counting people), a decision on their report, their post removed or
-- restored. Kept 90 days. Nothing from someone the member blocked is written, and blocking
-- someone deletes what they caused.
CREATE TABLE notifications (
    id          INTEGER PRIMARY KEY,
    user_id     INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind        TEXT    NOT NULL CHECK (kind IN ('reply', 'mention', 'reaction', 'report_decided', 'removed', 'restored')),
    post_id     INTEGER NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
    actor_id    INTEGER REFERENCES users(id) ON DELETE CASCADE,
    people      INTEGER NOT NULL DEFAULT 1,
    created_at  REAL    NOT NULL,
    read_at     REAL
) STRICT;
CREATE INDEX notifications_user ON notifications(user_id, id DESC);
CREATE INDEX notifications_unread ON notifications(user_id) WHERE read_at IS NULL;
CREATE INDEX notifications_age ON notifications(created_at);
